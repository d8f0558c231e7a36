/**
 * The host's view of the machine's threads: each thread's Linux thread id, and what the host
 * scheduler did with it (/proc/<pid>/task/<tid>/schedstat: time on a core, time runnable but
 * waiting for one). This is how oversubscription is measured when a machine has more emulated
 * CPUs than the host has cores: a CPU thread that wants a core and waits for it is the cost.
 *
 * Context: readTid() once per thread at start-up; readSchedstat() on the main thread, between
 * phases (a /proc read costs ~20 µs), never on a measured path.
 */
import { readFileSync, readlinkSync } from 'node:fs';

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
