/**
 * The host's view of the machine's threads: each thread's Linux thread id, and what the host
 * scheduler did with it (/proc/<pid>/task/<tid>/schedstat: time on a core, time runnable but
 * waiting for one). This is how oversubscription is measured when a machine has more emulated
 * CPUs than the host has cores: a CPU thread that wants a core and waits for it is the cost.
 *
 * Context: readTid() once per thread at start-up; readSchedstat() on the main thread, between
 * phases (a /proc read costs ~20 µs), never on a measured path.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** This thread's Linux thread id (/proc/thread-self → `<pid>/task/<tid>`), or -1 where there is none. */
export function readTid(): number {
  try {
    const m = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

/** A thread's schedstat: ns on a core, ns runnable but waiting (run_delay); NaN where unreadable. */
export interface HostSchedstat {
  runNs: number;
  waitNs: number;
}

/** Read thread `tid`'s /proc/self/task/<tid>/schedstat into `out` (NaNs if it cannot be read). */
export function readSchedstat(tid: number, out: HostSchedstat): HostSchedstat {
  try {
    const f = readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ');
    out.runNs = Number(f[0]);
    out.waitNs = Number(f[1]);
  } catch {
    out.runNs = Number.NaN;
    out.waitNs = Number.NaN;
  }
  return out;
}

/** What `--host-helpers` may do with the process's threads that are not the machine's. */
export const HOST_HELPER_MODES = ['nice', 'leave'] as const;
export type HostHelperMode = (typeof HOST_HELPER_MODES)[number];

/**
 * The nice value given to the process's other threads (`--host-helpers nice`): setpriority(2)
 * on a thread id sets that thread's nice on Linux (the nice value is per thread: setpriority(2),
 * NOTES, "a thread ID"). Low, so that an emulated CPU's thread woken on a host core one of them
 * holds takes it at once; not the lowest, because V8 runs its optimising compiler's jobs on
 * these threads. At 19 (EEVDF weight 15 against 1024 for nice 0, kernel/sched/core.c
 * sched_prio_to_weight, the value until 2026-12-07) the jobs starved behind the machine's busy
 * threads: in a default comparison here (workqueue and inline, 3 trials of 1 s) they took 71 ms
 * each on average against 7 ms left alone, and most of the emulated kernel's functions V8 marked
 * hot were never optimised in the run (runDeferred 1 of 11 markings, absorbLocked 0 of 9, credit
 * 0 of 4): one-way p90 11–29 µs, p99.9 0.4–1.5 ms, 80–110 thousand exchanges, inline's mix p99
 * 3.4–5.0 ms. At 10 (weight 110) and at 5 (335): one-way p90 10–13 µs, p99.9 0.19–0.33 ms,
 * 122–176 thousand exchanges, the mix p99 26–133 µs (two runs each, 2026-12-07, docs/scale.md).
 * Compiling on the machine's own threads instead (V8's --no-concurrent-recompilation) did as
 * well there but stalled a CPU thread for milliseconds whenever a rare path became hot in a
 * measured window: bench:twin's (a) p99 2.0–6.3 ms where it had been 0.2 ms. 10, the nicer of
 * the two that fed the compiler.
 */
export const HOST_HELPER_NICE = 10;

/**
 * Lower the priority of every thread of this process that is not one of `keep` (the machine's
 * CPU, kthread and irq threads), nor the process's main thread, nor the calling thread: V8's
 * platform workers (concurrent compilation, parallel and concurrent GC) and libuv's pool. On a
 * host with as many cores as emulated CPUs they would otherwise hold a core an emulated CPU's
 * thread needs (docs/twin.md, "V8's helpers"). Returns how many threads were reniced, or -1
 * where /proc cannot be read. Irreversible without CAP_SYS_NICE: the threads keep their nice for
 * the life of the process. Context: main thread, once the machine's threads have reported their
 * ids (Machine.start); one /proc listing and one system call per thread.
 */
export function niceHostHelpers(keep: readonly number[]): number {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return -1;
  }
  const mine = new Set([...keep, process.pid, readTid()]);
  let niced = 0;
  for (const t of tids) {
    const tid = Number(t);
    if (!Number.isInteger(tid) || mine.has(tid)) continue;
    try {
      setPriority(tid, HOST_HELPER_NICE);
      niced++;
    } catch {
      // the thread exited since the listing, or the host refuses: leave it
    }
  }
  return niced;
}
