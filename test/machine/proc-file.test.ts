/**
 * ProcFile (src/machine/proc-file.ts): a /proc file read again through one kept descriptor must
 * give the file's text as it is now, not what the first read saw; a thread that has exited reads
 * as undefined (what watchIdleHelpers skips), as does a closed file. Real threads, handshakes only.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcFile } from '../../src/machine/proc-file.js';

const tid = () => Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
/** proc(5) stat field 20, num_threads: index 17 after the command name. */
const numThreads = (stat: string | undefined) => Number(stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[17]);

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.terminate()));
});

/** A worker that reports its thread id and then waits to be terminated. */
function spawn(): Promise<{ w: Worker; tid: number }> {
  const w = new Worker(
    "const {parentPort}=require('node:worker_threads');const fs=require('node:fs');" +
      "parentPort.postMessage(Number(/task\\/(\\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))[1]));" +
      'setInterval(()=>{},1000);',
    { eval: true },
  );
  workers.push(w);
  return new Promise((res) => w.once('message', (t: number) => res({ w, tid: t })));
}

describe.skipIf(process.platform !== 'linux')('ProcFile', () => {
  it('reads the text as it is now at every read, not as the first read saw it', async () => {
    const f = new ProcFile(`/proc/self/task/${tid()}/stat`);
    const before = numThreads(f.read());
    expect(before).toBeGreaterThan(0);
    await spawn();
    // The same descriptor, read again: the process has one more thread now.
    expect(numThreads(f.read())).toBe(before + 1);
    expect(numThreads(f.read())).toBe(numThreads(readFileSync(`/proc/self/task/${tid()}/stat`, 'latin1')));
    f.close();
  });

  it('keeps two files read through one buffer apart', async () => {
    const buf = Buffer.alloc(1024);
    const a = new ProcFile(`/proc/self/task/${tid()}/stat`, buf);
    const b = new ProcFile(`/proc/self/task/${tid()}/schedstat`, buf);
    const stat = a.read();
    const schedstat = b.read();
    expect(stat).toMatch(/^\d+ \(/); // pid (comm) ...
    expect(schedstat).toMatch(/^\d+ \d+ \d+\n$/); // run ns, wait ns, slices
    expect(a.read()?.startsWith(stat?.slice(0, stat.indexOf(')')) ?? '-')).toBe(true);
    a.close();
    b.close();
  });

  it('reads a thread that has exited as undefined, and a closed file as undefined', async () => {
    const { w, tid: t } = await spawn();
    const f = new ProcFile(`/proc/self/task/${t}/stat`);
    expect(f.read()).toMatch(new RegExp(`^${t} \\(`));
    await w.terminate();
    expect(f.read()).toBeUndefined();
    expect(new ProcFile(`/proc/self/task/${t}/schedstat`).read()).toBeUndefined();
    const g = new ProcFile('/proc/self/stat');
    expect(g.read()).toBeDefined();
    g.close();
    g.close();
    expect(g.read()).toBeUndefined();
  });
});
