/**
 * A lock in shared memory: bounded spin, then sleep on the lock word (a futex-style mutex).
 *
 * The kernel's `input_pool.lock` is a spinlock: a contender spins until the holder lets go.
 * Here threads outnumber cores, so a holder can be descheduled by the OS while it holds the
 * lock; a contender that spun without bound would burn its core until the OS ran the holder
 * again. So a contender spins at most `spinLimit` times, then marks the lock contended and
 * sleeps in `Atomics.wait`; the unlocker wakes one sleeper when the lock was marked. That is
 * Drepper's three-state mutex ("Futexes Are Tricky", mutex3).
 *
 * Wait time is measured only on the slow path: an uncontended `lock()` reads no clock.
 *
 * Region legend (Int32 words from `base`; one cache line, since every contender writes it):
 *   state      RMW  (compareExchange/exchange) by every contender; futex word.
 *                   0 = free, 1 = held, 2 = held and someone may sleep on it.
 *   acquired   plain, written by the holder only (under the lock); read by the main thread
 *                   after the run (thread join orders it).
 *   contended  plain, as `acquired`: acquisitions whose first attempt failed.
 *   slept      plain, as `acquired`: acquisitions that slept at least once.
 */
import { nowNs } from '../clock.js';

export const LOCK_WORDS = 16;
const STATE = 0;
const ACQUIRED = 1;
const CONTENDED = 2;
const SLEPT = 3;

const FREE = 0;
const HELD = 1;
const HELD_WAITERS = 2;

/** Default spin bound before sleeping: ~1-2 µs of `Atomics.load` on this machine. */
export const DEFAULT_LOCK_SPIN = 200;

export interface LockStats {
  acquired: number;
  contended: number;
  slept: number;
}

export class ShmLock {
  /** Wait of the last `lock()` in ns (0 when uncontended); read it right after `lock()`. */
  lastWaitNs = 0;

  constructor(
    private readonly i32: Int32Array,
    private readonly base: number,
    private readonly spinLimit: number = DEFAULT_LOCK_SPIN,
  ) {}

  /** Zero the region. Context: main thread, before any worker starts. */
  static init(i32: Int32Array, base: number): void {
    i32.fill(0, base, base + LOCK_WORDS);
  }

  /**
   * Take the lock. Returns the time waited in ns (0 on the fast path, no clock read).
   * Context: any thread. May sleep in `Atomics.wait` after the spin bound (never on the main
   * thread: the main thread never takes a machine lock while workers run).
   */
  lock(): number {
    const i32 = this.i32;
    const s = this.base + STATE;
    if (Atomics.compareExchange(i32, s, FREE, HELD) === FREE) {
      i32[this.base + ACQUIRED]++;
      this.lastWaitNs = 0;
      return 0;
    }
    const t0 = nowNs();
    let slept = false;
    for (let i = 0; i < this.spinLimit; i++) {
      if (Atomics.load(i32, s) === FREE && Atomics.compareExchange(i32, s, FREE, HELD) === FREE) {
        return this.acquiredSlow(t0, slept);
      }
    }
    // Mark contended; if it was free we now hold it (as "held with waiters": one spare wake).
    while (Atomics.exchange(i32, s, HELD_WAITERS) !== FREE) {
      slept = true;
      Atomics.wait(i32, s, HELD_WAITERS);
    }
    return this.acquiredSlow(t0, slept);
  }

  private acquiredSlow(t0: number, slept: boolean): number {
    const b = this.base;
    this.i32[b + ACQUIRED]++;
    this.i32[b + CONTENDED]++;
    if (slept) this.i32[b + SLEPT]++;
    const w = nowNs() - t0;
    this.lastWaitNs = w > 0 ? w : 1;
    return this.lastWaitNs;
  }

  /** Try once; true when taken. Context: any thread; never waits. */
  tryLock(): boolean {
    if (Atomics.compareExchange(this.i32, this.base + STATE, FREE, HELD) !== FREE) return false;
    this.i32[this.base + ACQUIRED]++;
    return true;
  }

  /** Release. Context: the holder. Wakes one sleeper if the lock was marked contended. */
  unlock(): void {
    const s = this.base + STATE;
    if (Atomics.exchange(this.i32, s, FREE) === HELD_WAITERS) Atomics.notify(this.i32, s, 1);
  }

  /** Whether someone holds it now (racy: a hint for statistics and assertions only). */
  isHeld(): boolean {
    return Atomics.load(this.i32, this.base + STATE) !== FREE;
  }

  stats(): LockStats {
    const b = this.base;
    return { acquired: this.i32[b + ACQUIRED], contended: this.i32[b + CONTENDED], slept: this.i32[b + SLEPT] };
  }
}
