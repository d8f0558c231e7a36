/**
 * --host-helpers nice and idle (src/machine/host-threads.ts, lowerHostHelpers): every thread of the
 * process that is not kept (the machine's threads), not the main thread and not the caller is set
 * to HOST_HELPER_NICE, or under `idle` to SCHED_IDLE (nice 10 where chrt cannot be run, as the
 * result says); the kept ones keep their nice and policy. And watchIdleHelpers raises idled
 * helpers back to the nice when one starves (V8's collector waits on them). Run in a child
 * process, so that this test's own process keeps its threads' priorities.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  canLeaveIdle,
  type HelperLook,
  HOST_HELPER_IDLE,
  HOST_HELPER_NICE,
  IDLE_STARVED_SHARE,
  starved,
} from '../../src/machine/host-threads.js';

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

describe('starved: a helper runnable and never switched in between two looks', () => {
  const look = (runnable: boolean, runNs: number, slices: number, atNs: number): HelperLook => ({
    runnable,
    runNs,
    slices,
    atNs,
  });
  const MS = 1e6;
  it('is starved when runnable at both looks, with no new slice and next to no time on a core', () => {
    expect(starved(look(true, 5 * MS, 40, 0), look(true, 5 * MS, 40, 300 * MS))).toBe(true);
  });
  it('is not when it was switched in between (a new slice), however little it ran', () => {
    expect(starved(look(true, 5 * MS, 40, 0), look(true, 5 * MS + 1000, 41, 300 * MS))).toBe(false);
  });
  it('is not when it slept at either look', () => {
    expect(starved(look(false, 0, 0, 0), look(true, 5 * MS, 40, 300 * MS))).toBe(false);
    expect(starved(look(true, 5 * MS, 40, 0), look(false, 0, 0, 300 * MS))).toBe(false);
  });
  it('is not when it was on a core all along (running at the first look, one long slice)', () => {
    const ran = IDLE_STARVED_SHARE * 300 * MS;
    expect(starved(look(true, 5 * MS, 40, 0), look(true, 5 * MS + ran, 40, 300 * MS))).toBe(false);
    expect(starved(look(true, 5 * MS, 40, 0), look(true, 5 * MS + ran - 1, 40, 300 * MS))).toBe(true);
  });
});

// The kept threads spin on every host core (bounded: a flag, or 90 s), so an idled helper that
// also spins starves; the main thread's watch must raise it. Handshakes only: the child waits for
// lowered.raised, not for a time.
const starveScript = `
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { lowerHostHelpers, restoreHostHelpers, watchIdleHelpers } from ${JSON.stringify(hostThreads)};
const stat = (tid) => readFileSync('/proc/self/task/' + tid + '/stat', 'latin1').split(') ')[1].split(' ');
const sched = (tid) => ({ nice: Number(stat(tid)[16]), policy: Number(stat(tid)[38]) });
const stop = new Int32Array(new SharedArrayBuffer(4));
const spinner = "const {parentPort,workerData}=require('node:worker_threads');const fs=require('node:fs');" +
  "parentPort.postMessage(Number(/task\\\\/(\\\\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))[1]));" +
  "const end=Date.now()+90000;let x=0;while(Atomics.load(workerData,0)===0&&Date.now()<end){for(let i=0;i<1e5;i++)x+=i;}";
const spawn = () => new Promise((res) => {
  const w = new Worker(spinner, { eval: true, execArgv: [], workerData: stop });
  w.once('message', (tid) => res({ w, tid }));
});
const kept = [];
for (let i = 0; i < availableParallelism(); i++) kept.push(await spawn());
const helper = await spawn();
const lowered = lowerHostHelpers(kept.map((k) => k.tid), 'idle');
const out = { policy: lowered.policy, fallback: lowered.fallback, idledHelper: lowered.idled.includes(helper.tid) };
if (lowered.policy === '${HOST_HELPER_IDLE}') {
  const watch = watchIdleHelpers(lowered);
  await new Promise((res) => {
    const t = setInterval(() => {
      if (lowered.raised) { clearInterval(t); res(); }
    }, 20);
    kept[0].w.once('exit', () => { clearInterval(t); res(); }); // the spinners' bound: not raised
  });
  watch.stop();
  out.raised = lowered.raised;
  out.idledAfter = lowered.idled.length;
  out.helperAfter = sched(helper.tid);
  out.stuck = restoreHostHelpers(lowered);
}
Atomics.store(stop, 0, 1);
console.log(JSON.stringify(out));
process.exit(0);
`;

describe('watchIdleHelpers', () => {
  it('checks the right to leave SCHED_IDLE as the kernel does (root has CAP_SYS_NICE)', () => {
    if (process.getuid?.() === 0) expect(canLeaveIdle()).toBe(true);
    else expect(typeof canLeaveIdle()).toBe('boolean');
  });

  it('raises idled helpers to the nice when one starves behind threads that fill every core', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', starveScript], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
    if (out.policy !== HOST_HELPER_IDLE) {
      // no chrt, or no right to leave SCHED_IDLE: lowerHostHelpers used the nice and said why
      expect(out.fallback).toMatch(/chrt|CAP_SYS_NICE/);
      return;
    }
    expect(out.idledHelper).toBe(true);
    expect(out.raised, 'the spinning helper was never found starved').toBeDefined();
    expect(out.raised.stuck).toBe(0);
    expect(out.idledAfter).toBe(0); // nothing left for restoreHostHelpers
    expect(out.helperAfter).toEqual({ nice: HOST_HELPER_NICE, policy: 0 }); // SCHED_OTHER at the nice
  }, 130_000);
});
