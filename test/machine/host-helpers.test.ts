/**
 * --host-helpers nice and idle (src/machine/host-threads.ts, lowerHostHelpers): every thread of the
 * process that is not kept (the machine's threads), not the main thread and not the caller is set
 * to HOST_HELPER_NICE, or under `idle` to SCHED_IDLE (nice 10 where chrt cannot be run, as the
 * result says); the kept ones keep their nice and policy. Run in a child process, so that this
 * test's own process keeps its threads' priorities.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_HELPER_IDLE, HOST_HELPER_NICE } from '../../src/machine/host-threads.js';

const hostThreads = resolve(__dirname, '../../dist/src/machine/host-threads.js');

// Two worker threads report their thread ids; the first is kept, the second is not.
const script = (mode: 'nice' | 'idle') => `
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { lowerHostHelpers, restoreHostHelpers } from ${JSON.stringify(hostThreads)};
// /proc/<pid>/task/<tid>/stat after the comm: field 19 nice, field 41 policy (proc(5)).
const stat = (tid) => readFileSync('/proc/self/task/' + tid + '/stat', 'latin1').split(') ')[1].split(' ');
const nice = (tid) => ({ nice: Number(stat(tid)[16]), policy: Number(stat(tid)[38]) });
const spawn = () => new Promise((res) => {
  const w = new Worker("const {parentPort}=require('node:worker_threads');const fs=require('node:fs');parentPort.postMessage(Number(/task\\\\/(\\\\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))[1]));setInterval(()=>{},1000);", { eval: true, execArgv: [] });
  w.once('message', (tid) => res({ w, tid }));
});
const a = await spawn();
const b = await spawn();
const before = { main: nice(process.pid), kept: nice(a.tid), other: nice(b.tid) };
const lowered = lowerHostHelpers([a.tid], '${mode}');
const after = { main: nice(process.pid), kept: nice(a.tid), other: nice(b.tid) };
const idled = lowered.idled.length;
const stuck = restoreHostHelpers(lowered);
const restored = { other: nice(b.tid), stuck, idled };
console.log(JSON.stringify({ before, after, lowered, restored }));
process.exit(0);
`;

const SCHED_IDLE = 5; // include/uapi/linux/sched.h

function lower(mode: 'nice' | 'idle') {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script(mode)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('lowerHostHelpers', () => {
  it('nice: sets the threads it does not keep to HOST_HELPER_NICE and leaves the kept ones, the main thread and the caller', () => {
    const { before, after, lowered } = lower('nice');
    expect(HOST_HELPER_NICE).toBeGreaterThan(0);
    expect(lowered.policy).toBe(`nice ${HOST_HELPER_NICE}`);
    expect(after.other.nice).toBe(HOST_HELPER_NICE);
    expect(after.kept).toEqual(before.kept);
    expect(after.main).toEqual(before.main);
    // the other worker, and V8's and libuv's threads besides it
    expect(lowered.count).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('idle: puts them under SCHED_IDLE, or says why not and uses the nice; the kept ones keep theirs', () => {
    const { before, after, lowered } = lower('idle');
    expect(lowered.count).toBeGreaterThanOrEqual(1);
    if (lowered.policy === HOST_HELPER_IDLE) {
      expect(lowered.fallback).toBeUndefined();
      expect(after.other.policy).toBe(SCHED_IDLE);
    } else {
      expect(lowered.fallback).toMatch(/chrt/);
      expect(after.other.nice).toBe(HOST_HELPER_NICE);
    }
    expect(after.kept).toEqual(before.kept);
    expect(after.main).toEqual(before.main);
  }, 60_000);

  it('idle: the machine that idled them gives them back the nice as it stops, or counts those it could not raise', () => {
    const { lowered, restored } = lower('idle');
    if (lowered.policy !== HOST_HELPER_IDLE) return; // no chrt: nothing was idled (the test above says why)
    expect(restored.idled).toBeGreaterThanOrEqual(1);
    if (restored.stuck === 0) {
      expect(restored.other.policy).toBe(0); // SCHED_OTHER
      expect(restored.other.nice).toBe(HOST_HELPER_NICE);
    } else expect(restored.other.policy).toBe(SCHED_IDLE); // unprivileged: sched_setscheduler(2) EPERM
  }, 60_000);
});
