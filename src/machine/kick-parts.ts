/**
 * A wake-up across CPUs in three parts (issue 24's (c), docs/twin.md "(c) in three parts"): a
 * task woken onto a CPU whose idle thread halted, and hosted on that CPU's thread, records
 * besides its `wakeup_to_run` (try_to_wake_up → it runs):
 *
 *   wake_to_kick   try_to_wake_up → the waker rings the halted CPU's thread (the IPI's send: the
 *                  rest of the waker's path up to its Atomics.notify);
 *   kick_wake      the ring → the halted thread runs again (the host's futex wake-up; recorded by
 *                  idle.ts for every kick, this one among them);
 *   kick_to_run    the thread runs again → the woken task runs: the emulated idle exit, schedule()
 *                  and the switch, in JavaScript, after the thread slept (its caches cold).
 *
 * wake_to_kick + kick_wake + kick_to_run = wakeup_to_run for each wake-up recorded so, to the
 * doorbell's 100 ns stamp. Only a wake-up made before the kick's ring is attributed to it (the
 * ring is the IPI that ends the halt); a task woken while the thread was awake, or hosted on a
 * thread of its own (`--kthreads thread`), records none of the parts.
 *
 * Context: one per thread (Runtime.kick); written by the thread's idle task when a ring ends its
 * halt, read by the same thread when a woken task takes the CPU. Plain fields: never shared.
 */
import { St } from '../hw/trace.js';

/** Where the parts go: the thread's Tracer. */
export interface StageRecorder {
  record(s: St, ns: number): void;
}

export class KickParts {
  /** When this thread ran again after a ring ended its halt (emulated ns); −1: no kick pending. */
  private ranAt = -1;
  /** When that ring was sent (emulated ns, at the doorbell's 100 ns resolution). */
  private rungAt = -1;

  /** The idle task goes to halt: a kick before it no longer applies. */
  halting(): void {
    this.ranAt = -1;
  }

  /** A ring ended the halt: it was sent `agoNs` before the thread ran again at `ranAt`. */
  kicked(ranAt: number, agoNs: number): void {
    this.ranAt = ranAt;
    this.rungAt = ranAt - agoNs;
  }

  /**
   * A woken task takes the CPU at `now`, `wokenNsAgo` after its try_to_wake_up: record the parts
   * when the pending kick was that wake-up's ring. Hot path: no allocation.
   */
  taskRuns(tracer: StageRecorder, now: number, wokenNsAgo: number): void {
    if (this.ranAt < 0) return;
    const wokenAt = now - wokenNsAgo;
    if (wokenAt <= this.rungAt) {
      tracer.record(St.WakeToKick, this.rungAt - wokenAt);
      tracer.record(St.KickToRun, now - this.ranAt);
    }
    this.ranAt = -1;
  }
}
