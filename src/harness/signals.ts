/**
 * How the CLI counts the signals that stop it: the first stops the work cleanly and keeps what was
 * measured, a second leaves at once (src/app.ts). A signal sent once must count once, however many
 * copies of it reach the CLI:
 *
 * - to a process group (a terminal's Ctrl-C, `kill -TERM -- -PGID` as CI runners cancel a job,
 *   GNU timeout): both of the CLI's processes get it (src/harness/malloc.ts starts a second one,
 *   which stays in the group), and the parent passes what it gets on to the child;
 * - GNU timeout sends its signal to the command's pid and then to its group (coreutils
 *   timeout.c, cleanup()): two copies to one process, microseconds apart.
 *
 * The rule, in each process: a signal of the same name as one counted less than
 * {@link SAME_DELIVERY_MS} before is a copy of it (timeout's pair); a different signal, or the
 * same one later, is a new delivery. The child counts its own deliveries and the parent's
 * (forwarded to it as {@link FORWARD_SIGNAL}, one per delivery the parent counted) apart, and takes
 * the larger count: a group's signal reaches both and counts once, however late the parent's copy
 * comes; a signal to one process alone counts once too. What this cannot tell apart: a signal to
 * the parent alone and a later one to the child alone count once together (a third counts).
 * Context: main thread.
 */

/**
 * Copies of one delivery come this close together. timeout's pair is sent microseconds apart and
 * handled in one or two turns of the event loop; the window is counted from when the handler
 * runs, so it leaves room for a busy host that delays a turn. A person who means to leave at once
 * presses Ctrl-C again when the first has not yet ended the run, later than this; two presses
 * inside it stop the run cleanly, which keeps what was measured (a third leaves at once).
 */
export const SAME_DELIVERY_MS = 500;

/**
 * The signal by which the parent passes a delivery on to the child: one the CLI uses for nothing
 * else (Node's inspector takes SIGUSR1), so the child tells it from a signal it got itself.
 */
export const FORWARD_SIGNAL: NodeJS.Signals = 'SIGUSR2';

/** The signals that stop a command (SIGHUP ends the process as Node's default does). */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** Counts deliveries (see the file's comment). `now`: a monotonic clock in ms (injectable for tests). */
export class SignalDeliveries {
  #own = 0;
  #forwarded = 0;
  /** When each signal was last counted as a new delivery, ms on `now`'s clock. */
  readonly #countedAt = new Map<string, number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * A signal this process got itself. Returns: the deliveries counted so far (unchanged when it
   * is a copy of one already counted).
   */
  own(signal: NodeJS.Signals): number {
    const t = this.now();
    const last = this.#countedAt.get(signal);
    if (last === undefined || t - last >= SAME_DELIVERY_MS) {
      this.#countedAt.set(signal, t);
      this.#own++;
    }
    return this.count;
  }

  /** A delivery the parent counted and passed on ({@link FORWARD_SIGNAL}). Returns: as {@link own}. */
  forwarded(): number {
    this.#forwarded++;
    return this.count;
  }

  /** Deliveries so far: a group's signal reaches this process and its parent, and counts once. */
  get count(): number {
    return Math.max(this.#own, this.#forwarded);
  }
}
