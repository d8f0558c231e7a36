/**
 * --host-helpers nice (src/machine/host-threads.ts, niceHostHelpers): every thread of the process
 * that is not kept (the machine's threads), not the main thread and not the caller is set to
 * HOST_HELPER_NICE; the kept ones keep their nice. Run in a child process, so that this test's own
 * process keeps its threads' priorities.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_HELPER_NICE } from '../../src/machine/host-threads.js';

const hostThreads = resolve(__dirname, '../../dist/src/machine/host-threads.js');

// Two worker threads report their thread ids; the first is kept, the second is not.
const SCRIPT = `
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { niceHostHelpers } from ${JSON.stringify(hostThreads)};
const nice = (tid) => Number(readFileSync('/proc/self/task/' + tid + '/stat', 'latin1').split(') ')[1].split(' ')[16]);
const spawn = () => new Promise((res) => {
  const w = new Worker("const {parentPort}=require('node:worker_threads');const fs=require('node:fs');parentPort.postMessage(Number(/task\\\\/(\\\\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))[1]));setInterval(()=>{},1000);", { eval: true, execArgv: [] });
  w.once('message', (tid) => res({ w, tid }));
});
const a = await spawn();
const b = await spawn();
const before = { main: nice(process.pid), kept: nice(a.tid), other: nice(b.tid) };
const niced = niceHostHelpers([a.tid]);
const after = { main: nice(process.pid), kept: nice(a.tid), other: nice(b.tid) };
console.log(JSON.stringify({ before, after, niced }));
process.exit(0);
`;

describe('niceHostHelpers', () => {
  it('sets the threads it does not keep to HOST_HELPER_NICE and leaves the kept ones, the main thread and the caller', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const { before, after, niced } = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(HOST_HELPER_NICE).toBeGreaterThan(0);
    expect(after.other).toBe(HOST_HELPER_NICE);
    expect(after.kept).toBe(before.kept);
    expect(after.main).toBe(before.main);
    // the other worker, and V8's and libuv's threads besides it
    expect(niced).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
