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
import { PROC_LINE_BYTES, ProcFile } from './proc-file.js';

/** This thread's Linux thread id (/proc/thread-self → `<pid>/task/<tid>`), or -1 where there is none. */
export function readTid(): number {
  try {
    const m = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

/** `0-3,8`: a CPU list (taskset's and proc(5)'s syntax) as numbers, sorted; undefined if malformed. */
export function parseCpuList(text: string): number[] | undefined {
  const out = new Set<number>();
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) return undefined;
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return [...out].sort((a, b) => a - b);
}

/** The host CPUs this thread may run on (/proc/thread-self/status Cpus_allowed_list), or undefined. */
export function allowedCpus(): number[] | undefined {
  try {
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/thread-self/status', 'latin1'))?.[1];
    return list === undefined ? undefined : parseCpuList(list);
  } catch {
    return undefined;
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
 * cpu-hog scenario's preset does, not the default. Nor is a host core free on a busy host, and
 * there it is worse than slow: V8's collector hands parts of a collection to these helpers and
 * waits for them, so a CPU thread that collects waits for a helper that gets 3/(3 + 1024 × the
 * runnable threads) of a core. CI saw a CPU thread stopped 4 s in a work callback (cpu-hog, 4 CPUs
 * on 2 cores at a load of 7–9, the watchdog's limit); a worker that allocates beside 3 spinning
 * threads paused 3.9 and 5.1 s under SCHED_IDLE helpers, 0.44 and 0.54 s at nice 10 (two runs
 * each, 2026-12-07). So the machine watches its idled helpers (watchIdleHelpers) and raises them
 * to the nice as soon as one starves.
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
  /** The threads put under SCHED_IDLE, for restoreHostHelpers and watchIdleHelpers. */
  idled: number[];
  /** Set by watchIdleHelpers when it raised them back to the nice: a helper starved. */
  raised?: HelpersRaised;
}

/** When and why watchIdleHelpers raised the idled helpers to SCHED_OTHER at HOST_HELPER_NICE. */
export interface HelpersRaised {
  /** ms since the watch began (the machine's boot). */
  afterMs: number;
  /** The helper found starved; how long it had waited runnable without a slice (ms), and its ms on a core meanwhile. */
  tid: number;
  waitedMs: number;
  ranMs: number;
  /** Those that could not be raised (no CAP_SYS_NICE nor RLIMIT_NICE: canLeaveIdle said so first). */
  stuck: number;
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
  // A helper under SCHED_IDLE that starves must be raised again (watchIdleHelpers): without the
  // right to leave SCHED_IDLE it could not be, and the nice is the safe choice.
  let fallback = canLeaveIdle()
    ? undefined
    : `leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE of ${20 - HOST_HELPER_NICE} or more (sched_setscheduler(2)), and helpers that starved could not be raised: ${nice} instead`;
  let refused = 0;
  const count = forHelpers(keep, (tid) => {
    if (fallback === undefined) {
      setPriority(tid, HOST_HELPER_NICE); // first: what leaving SCHED_IDLE is checked against (canLeaveIdle)
      const r = chrt('--idle', tid);
      if (r === 'ok') idled.push(tid);
      if (r === 'failed') refused++;
      if (r !== 'no chrt') return r === 'ok'; // failed: the thread exited since the listing
      fallback = 'chrt could not be run: install util-linux for SCHED_IDLE';
    }
    setPriority(tid, HOST_HELPER_NICE);
    return true;
  });
  // chrt ran and failed for every helper (a host that refuses sched_setscheduler): they have the nice.
  if (fallback === undefined && idled.length === 0 && refused > 0)
    return {
      count: niceHostHelpers(keep),
      policy: nice,
      idled,
      fallback: `chrt --idle failed for all ${refused} helper threads: ${nice} instead`,
    };
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

/** How often watchIdleHelpers looks at the idled helpers. */
export const IDLE_WATCH_MS = 50;

/**
 * How long an idled helper may wait runnable, never switched onto a core, before watchIdleHelpers
 * raises them all: a collection that waits on it stops a CPU thread about that long (the
 * watchdog's limit is 4 s). Not a model parameter; chosen by trial (2026-12-07): looking at
 * single 50 ms intervals raised them 1.6 and 2.5 s into cpu-hog's first boots on a quiet host
 * (load ~1, a helper runnable 50 ms with 0 ms on a core while the hog's thread held its core);
 * at 250 ms none of 4 boots on a quiet host was raised, and each of 7 cpu-hog boots beside two
 * spinning processes (`yes`) was, 0.31–0.37 s after the watch began (docs/twin.md, "The
 * collector waits on them").
 */
export const IDLE_STARVED_MS = 250;

/**
 * The share of a wait that a helper runnable at both its ends, and never switched in between
 * (it may have been running at the first look and gone on), may have had on a core and still be
 * starved. Not a model parameter: a SCHED_IDLE thread with a host core to itself runs at once; one
 * behind normal threads on every core gets 3/(3 + 1024 n), under 0.3%.
 */
export const IDLE_STARVED_SHARE = 0.1;

/** One look at a helper: runnable (proc(5) stat state R); its ns on a core and times switched in (schedstat); when (ns). */
export interface HelperLook {
  runnable: boolean;
  runNs: number;
  slices: number;
  atNs: number;
}

/**
 * Whether a helper starved from look `since` to look `now`: runnable at both, never switched onto
 * a core between them (schedstat's count of slices unchanged: a thread sleeps only by running, so
 * it was runnable throughout), and under IDLE_STARVED_SHARE of the time on one.
 */
export function starved(since: HelperLook, now: HelperLook): boolean {
  return (
    since.runnable &&
    now.runnable &&
    now.slices === since.slices &&
    now.runNs - since.runNs < IDLE_STARVED_SHARE * (now.atNs - since.atNs)
  );
}

/** A helper's two /proc files, kept open while the watch runs (proc-file.ts: a pread, not an open, per look). */
interface HelperFiles {
  stat: ProcFile;
  schedstat: ProcFile;
}

/** Thread `tid` now: its state and, when runnable, its schedstat; undefined when it has exited. */
function lookAt(files: HelperFiles, atNs: number): HelperLook | undefined {
  const stat = files.stat.read();
  if (stat === undefined) return undefined;
  const runnable = stat.charCodeAt(stat.lastIndexOf(')') + 2) === R;
  if (!runnable) return { runnable, runNs: 0, slices: 0, atNs };
  const ss = files.schedstat.read()?.split(' ');
  return ss ? { runnable, runNs: Number(ss[0]), slices: Number(ss[2]), atNs } : undefined;
}

/** proc(5) stat's state R (running or runnable), as a char code. */
const R = 'R'.charCodeAt(0);

/**
 * Watch the helpers `lowered` put under SCHED_IDLE and, the first time one has starved (see
 * {@link starved}) for IDLE_STARVED_MS, put them all back to SCHED_OTHER at HOST_HELPER_NICE for
 * the rest of the machine's life, recording why in `lowered.raised` (HOST_HELPER_IDLE says why).
 * Context: main thread, a timer every IDLE_WATCH_MS (a pread of a kept /proc file per helper, two
 * for a runnable one: ~60 µs for ten helpers where opening each file took ~0.5 ms, proc-file.ts);
 * stop() before restoreHostHelpers.
 */
export function watchIdleHelpers(lowered: HelpersLowered): { stop(): void } {
  const t0 = process.hrtime.bigint();
  const buf = Buffer.allocUnsafe(PROC_LINE_BYTES);
  const files = new Map<number, HelperFiles>(
    lowered.idled.map((tid) => [
      tid,
      {
        stat: new ProcFile(`/proc/self/task/${tid}/stat`, buf),
        schedstat: new ProcFile(`/proc/self/task/${tid}/schedstat`, buf),
      },
    ]),
  );
  const closeAll = () => {
    for (const f of files.values()) {
      f.stat.close();
      f.schedstat.close();
    }
  };
  /** Per helper, the look at which its present wait began (the latest look that ended none). */
  const since = new Map<number, HelperLook>();
  const timer = setInterval(() => {
    const at = Number(process.hrtime.bigint() - t0);
    for (const [tid, f] of files) {
      const now = lookAt(f, at);
      if (!now) continue;
      const s = since.get(tid);
      if (!s || !starved(s, now)) {
        since.set(tid, now);
        continue;
      }
      if (at - s.atNs < IDLE_STARVED_MS * 1e6) continue;
      clearInterval(timer);
      closeAll();
      const stuck = restore(lowered.idled);
      lowered.idled = [];
      lowered.raised = {
        afterMs: at / 1e6,
        tid,
        waitedMs: (at - s.atNs) / 1e6,
        ranMs: (now.runNs - s.runNs) / 1e6,
        stuck,
      };
      return;
    }
  }, IDLE_WATCH_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      closeAll();
    },
  };
}

/**
 * Whether this process may put a SCHED_IDLE thread back to SCHED_OTHER at HOST_HELPER_NICE:
 * CAP_SYS_NICE in its effective set (capability 23, include/uapi/linux/capability.h), or an
 * RLIMIT_NICE soft limit of 20 − nice or more: __sched_setscheduler allows leaving SCHED_IDLE
 * only if can_nice(p, task_nice(p)) ("Treat SCHED_IDLE as nice 20"), and can_nice compares
 * nice_to_rlimit(nice) = 20 − nice with RLIMIT_NICE (kernel/sched/core.c; syscalls.c since 6.11).
 * That is why lowerHostHelpers sets the nice before SCHED_IDLE.
 */
export function canLeaveIdle(): boolean {
  try {
    const cap = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
    if (cap && (BigInt(`0x${cap}`) >> 23n) & 1n) return true;
    const lim = /Max nice priority\s+(\S+)/.exec(readFileSync('/proc/self/limits', 'latin1'))?.[1];
    return lim === 'unlimited' || Number(lim) >= 20 - HOST_HELPER_NICE;
  } catch {
    return false;
  }
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

/**
 * Thread `tid`'s /proc/self/task/<tid>/stat fields after the command name (proc(5): index 0 is
 * field 3, the state; the name may hold spaces and parentheses, so the split starts after the
 * last `)`); undefined where the thread has exited.
 */
function taskStat(tid: number): string[] | undefined {
  try {
    const f = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    return f.slice(f.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Thread `tid`'s scheduling policy (proc(5): stat field 41), or -1 where unreadable. */
function policyOf(tid: number): number {
  const f = taskStat(tid);
  return f ? Number(f[38]) : -1;
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
