/**
 * The host's view of the machine's threads: each thread's Linux thread id, and what the host
 * scheduler did with it (/proc/<pid>/task/<tid>/schedstat: time on a core, time runnable but
 * waiting for one). This is how oversubscription is measured when a machine has more emulated
 * CPUs than the host has cores: a CPU thread that wants a core and waits for it is the cost.
 *
 * Context: readTid() once per thread at start-up; readSchedstat() on the main thread, between
 * phases (a /proc read costs ~20 µs), never on a measured path.
 */
import { spawnSync } from 'node:child_process';
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

/**
 * Threads `tids`' schedstat summed (those that cannot be read left out), into `scratch`.
 * Context: main thread, between phases (one /proc read per thread).
 */
export function sumSchedstat(tids: readonly number[], scratch: HostSchedstat): HostSchedstat {
  let run = 0;
  let wait = 0;
  for (const tid of tids) {
    const s = readSchedstat(tid, scratch);
    if (Number.isNaN(s.runNs)) continue;
    run += s.runNs;
    wait += s.waitNs;
  }
  scratch.runNs = run;
  scratch.waitNs = wait;
  return scratch;
}

/**
 * What `--host-helpers` may do with the process's threads that are not the machine's: `nice`
 * (HOST_HELPER_NICE), `idle` (SCHED_IDLE, falling back to `nice` where it cannot be set), `leave`.
 */
export const HOST_HELPER_MODES = ['nice', 'idle', 'leave'] as const;
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
 * `--host-helpers idle`: the helpers under SCHED_IDLE (sched(7)), set with util-linux's `chrt
 * --idle -p 0 TID` (Node has no sched_setscheduler). The host's fair class preempts a SCHED_IDLE
 * task at once for any normal task it wakes (kernel/sched/fair.c, check_preempt_wakeup_fair: "Idle
 * tasks are by definition preempted by non-idle tasks"), where a nice-10 helper that is eligible
 * keeps the core through its protected slice (RUN_TO_PARITY, 6.6+) and, at HZ 250, until the next
 * tick. Traced with ftrace (docs/twin.md, "(c) asked as the lab is asked"): in cpu-hog's machine
 * (one hog spinning on CPU 0's thread, CPU 1 halted), of the lab's wake-ups of CPU 1's thread,
 * 0.9–2.3% waited past 0.5 ms on the host's run queue after the wake-up (8 runs), most behind a V8
 * helper at nice 10; 0.3–0.9% under SCHED_IDLE (5 runs), none behind a helper. SCHED_IDLE's weight
 * is 3 (nice 19's is 15), so it starves V8's compiler behind machine threads that fill every core:
 * for a machine whose threads leave a host core idle (CPUs that halt, one spinning thread), as the
 * cpu-hog scenario's preset does, not the default.
 */
export const HOST_HELPER_IDLE = 'SCHED_IDLE';

/** What lowerHostHelpers did: how many threads, to what, and why not what was asked. */
export interface HelpersLowered {
  /** Threads lowered; -1 where /proc could not be read. */
  count: number;
  /** `SCHED_IDLE` or `nice 10`. */
  policy: string;
  /** Why `idle` fell back to the nice (no chrt), or why `nice` left some under SCHED_IDLE. */
  fallback?: string;
  /** The threads put under SCHED_IDLE, for restoreHostHelpers. */
  idled: number[];
}

/**
 * Lower every helper thread (see {@link niceHostHelpers}, which `nice` is) to `mode`. `idle`
 * falls back to the nice for all of them when chrt cannot be run. Context: main thread, once at
 * boot; one process spawn per thread under `idle` (~2 ms each).
 */
export function lowerHostHelpers(keep: readonly number[], mode: 'nice' | 'idle'): HelpersLowered {
  const nice = `nice ${HOST_HELPER_NICE}`;
  const idled: number[] = [];
  if (mode === 'nice') {
    // An earlier machine of this process may have left some under SCHED_IDLE (restoreHostHelpers
    // could not raise them): they would starve V8's compiler behind this machine's busy threads.
    const stuck = restore(idleThreads(keep));
    const count = niceHostHelpers(keep);
    return stuck > 0
      ? {
          count,
          policy: nice,
          idled,
          fallback: `${stuck} stay SCHED_IDLE from an earlier machine of this process (raising them needs CAP_SYS_NICE or RLIMIT_NICE)`,
        }
      : { count, policy: nice, idled };
  }
  let fallback: string | undefined;
  const count = forHelpers(keep, (tid) => {
    if (fallback === undefined) {
      const r = chrt('--idle', tid);
      if (r === 'ok') idled.push(tid);
      if (r !== 'no chrt') return r === 'ok'; // failed: the thread exited since the listing
      fallback = 'chrt could not be run: install util-linux for SCHED_IDLE';
    }
    setPriority(tid, HOST_HELPER_NICE);
    return true;
  });
  return fallback === undefined ? { count, policy: HOST_HELPER_IDLE, idled } : { count, policy: nice, fallback, idled };
}

/**
 * Back to SCHED_OTHER at HOST_HELPER_NICE, as the machine that idled them stops (Machine.stop), so
 * that a later machine of the process (bench:twin's (d), bench:scenarios after cpu-hog) does not
 * run with its compiler starved. Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that
 * allows the nice (sched_setscheduler(2), EPERM): without either they stay. Returns how many stay.
 */
export function restoreHostHelpers(lowered: HelpersLowered | undefined): number {
  if (!lowered || lowered.idled.length === 0) return 0;
  const stuck = restore(lowered.idled);
  lowered.idled = [];
  return stuck;
}

function restore(tids: readonly number[]): number {
  let stuck = 0;
  for (const tid of tids) {
    const r = chrt('--other', tid);
    if (r === 'ok') {
      try {
        setPriority(tid, HOST_HELPER_NICE);
      } catch {
        // the thread exited since
      }
    } else if (policyOf(tid) === SCHED_IDLE_POLICY) stuck++;
  }
  return stuck;
}

/** `chrt POLICY -p 0 TID` (util-linux): ok, failed (refused, or the thread is gone), or no chrt. */
function chrt(policy: '--idle' | '--other', tid: number): 'ok' | 'failed' | 'no chrt' {
  const r = spawnSync('chrt', [policy, '-p', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
  if (r.error) return 'no chrt';
  return r.status === 0 ? 'ok' : 'failed';
}

/** SCHED_IDLE's number (include/uapi/linux/sched.h), as /proc/<pid>/task/<tid>/stat's field 41 shows it. */
const SCHED_IDLE_POLICY = 5;

/** Thread `tid`'s scheduling policy (proc(5): stat field 41), or -1 where unreadable. */
function policyOf(tid: number): number {
  try {
    const f = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    return Number(f.slice(f.lastIndexOf(')') + 2).split(' ')[38]);
  } catch {
    return -1;
  }
}

/** The helper threads now under SCHED_IDLE. */
function idleThreads(keep: readonly number[]): number[] {
  const out: number[] = [];
  forHelpers(keep, (tid) => {
    if (policyOf(tid) === SCHED_IDLE_POLICY) out.push(tid);
    return false;
  });
  return out;
}

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
  return forHelpers(keep, (tid) => {
    setPriority(tid, HOST_HELPER_NICE);
    return true;
  });
}

/** Apply `lower` to each helper thread (true: done); how many were done, -1 without /proc. */
function forHelpers(keep: readonly number[], lower: (tid: number) => boolean): number {
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
      if (lower(tid)) niced++;
    } catch {
      // the thread exited since the listing, or the host refuses: leave it
    }
  }
  return niced;
}
