/**
 * bench:twin's (c) in Node itself: the floor any wake-up of the lab's pays on this host. twin.c's
 * `cross` (a waker wakes a futex sleeper on the other CPU every GAP µs, and spins until the
 * sleeper reports the time it ran) done with two JavaScript threads: the sleeper in
 * `Atomics.wait`, the waker's `Atomics.store` + `Atomics.notify`, the clock process.hrtime
 * (CLOCK_MONOTONIC, one clock for every thread of the process). Node cannot pin a thread to a
 * CPU, so unpinned the two threads go where the host's scheduler puts them, as the lab's do; after
 * a gap the sleeper's thread has been idle for GAP µs, as CPU 1's thread of the lab has been
 * between wake-ups. Pinned (`pin`: util-linux's taskset on the two thread ids, waker on the first
 * allowed host CPU and sleeper on the second, as twin.c pins its threads to CPUs 0 and 1), the
 * wake-up is twin.c's. Unpinned, the host may wake the sleeper on the core its waker spins on
 * (wake_affine, kernel/sched/fair.c), where it waits for the waker's protected slice or a tick:
 * 1.2–2.0% of 1000 wake-ups past 0.5 ms unpinned, 0–0.2% pinned (three pairs, 2026-12-07).
 *
 * Shared words (an Int32Array and a BigInt64Array over one SharedArrayBuffer):
 *   i32[WORD]    the futex word: written 1 by the waker (Atomics.store, then notify), 0 by the
 *                sleeper once it runs (Atomics.store); the sleeper waits while it reads 0.
 *   i32[DONE]    written 1 by the waker at the end (Atomics.store, then WORD set and notified).
 *   i64[WOKEN]   the sleeper's clock when it ran (Atomics.store, after WORD is cleared); −1,
 *                written by the waker before each wake. The waker spins on it (bounded: 1 s).
 */
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { allowedCpus, readTid } from '../src/machine/host-threads.js';

const WORD = 0;
const DONE = 1;
const WOKEN = 1; // in 64-bit words: bytes 8..15

const SLEEPER = `
const { workerData, parentPort } = require('node:worker_threads');
const i32 = new Int32Array(workerData);
const i64 = new BigInt64Array(workerData);
const m = /\\/task\\/(\\d+)$/.exec(require('node:fs').readlinkSync('/proc/thread-self'));
parentPort.postMessage(m ? Number(m[1]) : -1);
for (;;) {
  while (Atomics.load(i32, ${WORD}) === 0 && Atomics.load(i32, ${DONE}) === 0) Atomics.wait(i32, ${WORD}, 0);
  if (Atomics.load(i32, ${DONE}) !== 0) break;
  const t = process.hrtime.bigint();
  Atomics.store(i32, ${WORD}, 0);
  Atomics.store(i64, ${WOKEN}, t);
}
`;

export interface NodeCross {
  /** Wake-up latencies, ns, sorted. */
  sorted: number[];
  lost: number;
  /** Asked to pin and could not: why (the run went on unpinned). */
  unpinned?: string;
}

/** taskset(1) thread `tid` to `cpus` (a CPU list); why not, or undefined. */
function taskset(tid: number, cpus: string): string | undefined {
  if (tid < 0) return 'no thread id (/proc/thread-self)';
  const r = spawnSync('taskset', ['-p', '-c', cpus, String(tid)], { stdio: 'ignore', timeout: 5000 });
  if (r.error) return `no taskset (util-linux): ${r.error.message}`;
  return r.status === 0 ? undefined : `taskset -p -c ${cpus} ${tid} exited ${r.status}`;
}

/**
 * `iters` wake-ups of a sleeping thread, one every `gapUs`; `pin`: the two threads pinned (see the
 * head), the main thread's own CPUs given back at the end. Context: the main thread (it blocks).
 */
export async function nodeCross(iters: number, gapUs: number, pin = false): Promise<NodeCross> {
  const sab = new SharedArrayBuffer(16);
  const i32 = new Int32Array(sab);
  const i64 = new BigInt64Array(sab);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const w = new Worker(SLEEPER, { eval: true, workerData: sab });
  const sleeperTid = await new Promise<number>((resolve, reject) => {
    w.once('message', (tid: number) => resolve(tid));
    w.once('error', reject);
  });
  const lat: number[] = [];
  let lost = 0;
  const own = allowedCpus();
  let unpinned: string | undefined;
  if (pin) {
    unpinned =
      own === undefined || own.length < 2
        ? `pinning needs two host CPUs (this process may use ${own?.join(',') ?? 'unknown'})`
        : (taskset(sleeperTid, String(own[1])) ?? taskset(readTid(), String(own[0])));
    // Both or neither: the sleeper first, so a failure leaves at most the sleeper pinned, and undone.
    if (unpinned && own) taskset(sleeperTid, own.join(','));
  }
  try {
    for (let k = 0; k < iters; k++) {
      Atomics.wait(nap, 0, 0, gapUs / 1000); // the gap: the sleeper back in Atomics.wait
      Atomics.store(i64, WOKEN, -1n);
      const t0 = process.hrtime.bigint();
      Atomics.store(i32, WORD, 1);
      Atomics.notify(i32, WORD, 1);
      const giveUp = t0 + 1_000_000_000n;
      let t = Atomics.load(i64, WOKEN);
      while (t < t0 && process.hrtime.bigint() < giveUp) t = Atomics.load(i64, WOKEN);
      // t < t0: a sleeper late from a lost wake-up wrote after the reset (its time, not this one's).
      if (t >= t0) lat.push(Number(t - t0));
      else lost++;
    }
  } finally {
    Atomics.store(i32, DONE, 1);
    Atomics.store(i32, WORD, 1);
    Atomics.notify(i32, WORD, 1);
    await w.terminate();
    if (pin && own) taskset(readTid(), own.join(','));
  }
  return { sorted: lat.sort((a, b) => a - b), lost, ...(unpinned ? { unpinned } : {}) };
}
