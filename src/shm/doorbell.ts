/**
 * Doorbells: how one thread wakes another that sleeps in `Atomics.wait`.
 *
 * One doorbell per sleeping thread. The sleeper announces SLEEPING, re-checks everything it
 * could have been woken for, and only then waits; a waker publishes its news first, then
 * rings. The race this closes, drawn as in workqueue.c:
 *
 *     sleeper                                  waker
 *     store(bell, SLEEPING)                    publish news (ring record, owner word, flag)
 *     re-check news          ── SC order ──    ring(): exchange(bell, AWAKE)
 *     wait(bell, SLEEPING)                             === SLEEPING ? notify : avoided
 *
 * Atomics are sequentially consistent, so either the sleeper's re-check sees the news, or
 * the waker's exchange sees SLEEPING and notifies (and if the notify lands before the wait,
 * the wait returns at once because the word is no longer SLEEPING). A late notify costs one
 * spurious wake, never a lost one. Every wait loops on the real condition: a doorbell only
 * says that something happened.
 *
 * Notify policy (seed 002's experiment):
 *   'if-idle' notify only when the exchange saw SLEEPING; count the ones avoided.
 *   'always'  notify on every ring, sleeping or not (the pre-fix Tempesta behaviour).
 *
 * Region legend (Int32 words from the base; two cache lines per doorbell):
 *   line 0  bell      futex word. Written by the sleeper (Atomics.store SLEEPING / AWAKE) and
 *                     by wakers (Atomics.exchange AWAKE). Read by both.
 *   line 1  sent      RMW (Atomics.add) by wakers: notifies issued.
 *           avoided   RMW by wakers: rings that found the sleeper awake and did not notify.
 *           sleeps    plain, by the sleeper only: waits entered.
 *           spurious  plain, by the sleeper only: wakes after which the condition was false.
 *           rungAt    Atomics.store by a waker just before each notify it issues: the clock
 *                     (emulated ns / RUNG_UNIT_NS, modulo 2^32); Atomics.load by the sleeper
 *                     after a wait that a notify ended ('ok'), to time the host's wake-up
 *                     (`wokenNsAgo`). The SC store precedes the notify in the waker's program
 *                     order, so a sleeper woken by that notify reads it or a later waker's
 *                     (an underestimate, only under 'always' or with two wakers at once).
 * The counters live on their own line so that counting does not bounce the futex word's line.
 */
import { nowNs } from '../clock.js';
import { LINE_WORDS } from './layout.js';

export const DOORBELL_WORDS = 2 * LINE_WORDS;
const BELL = 0;
const SENT = LINE_WORDS;
const AVOIDED = LINE_WORDS + 1;
const SLEEPS = LINE_WORDS + 2;
const SPURIOUS = LINE_WORDS + 3;
const RUNG_AT = LINE_WORDS + 4;
/** rungAt's unit: 100 ns, so that an Int32 word wraps only every 429 s (differences are taken modulo 2^32). */
const RUNG_UNIT_NS = 100;

const AWAKE = 0;
const SLEEPING = 1;

/** The notify policies, declared once (the CLI, the config and the cross-CPU workload read them). */
export const NOTIFY_POLICIES = ['if-idle', 'always'] as const;
export type NotifyPolicy = (typeof NOTIFY_POLICIES)[number];

export interface DoorbellStats {
  sent: number;
  avoided: number;
  sleeps: number;
  spurious: number;
}

export class Doorbell {
  private readonly bell: number;
  /** The last {@link sleep} was ended by a notify (Atomics.wait returned 'ok'). Sleeper only. */
  private notified = false;

  constructor(
    private readonly i32: Int32Array,
    private readonly base: number,
    private readonly policy: NotifyPolicy = 'if-idle',
  ) {
    this.bell = base + BELL;
  }

  static init(i32: Int32Array, base: number): void {
    i32.fill(0, base, base + DOORBELL_WORDS);
  }

  /** Sleeper: announce the sleep. Re-check the condition after this, then {@link sleep} or {@link cancel}. */
  prepare(): void {
    Atomics.store(this.i32, this.bell, SLEEPING);
  }

  /** Sleeper: the re-check found work; do not sleep. */
  cancel(): void {
    Atomics.store(this.i32, this.bell, AWAKE);
  }

  /**
   * Sleeper: wait until rung (or `timeoutMs` passes). Returns false on timeout.
   * Context: a worker thread (never the main thread). Call {@link prepare} and re-check first.
   */
  sleep(timeoutMs = Number.POSITIVE_INFINITY): boolean {
    this.i32[this.base + SLEEPS]++;
    const r = Atomics.wait(this.i32, this.bell, SLEEPING, timeoutMs);
    Atomics.store(this.i32, this.bell, AWAKE);
    this.notified = r === 'ok';
    return r !== 'timed-out';
  }

  /**
   * Sleeper: how long ago (emulated ns, at `now` from nowNs) the notify that ended the last
   * {@link sleep} was issued, at 100 ns resolution: the host's futex wake-up of this thread,
   * run delay included. -1 when no notify ended it (a timeout, or rung before it waited).
   */
  wokenNsAgo(now: number): number {
    if (!this.notified) return -1;
    const at = Atomics.load(this.i32, this.base + RUNG_AT);
    const d = ((now / RUNG_UNIT_NS) >>> 0) - at;
    return (d | 0) * RUNG_UNIT_NS;
  }

  /** Sleeper: the wake found nothing to do. */
  noteSpurious(): void {
    this.i32[this.base + SPURIOUS]++;
  }

  /**
   * Waker: publish first, then ring. Returns true when a notify was issued.
   * Context: any thread; never blocks.
   */
  ring(): boolean {
    const i32 = this.i32;
    const wasSleeping = Atomics.exchange(i32, this.bell, AWAKE) === SLEEPING;
    if (wasSleeping || this.policy === 'always') {
      Atomics.store(i32, this.base + RUNG_AT, (nowNs() / RUNG_UNIT_NS) >>> 0);
      Atomics.notify(i32, this.bell, 1);
      Atomics.add(i32, this.base + SENT, 1);
      return true;
    }
    Atomics.add(i32, this.base + AVOIDED, 1);
    return false;
  }

  /** Whether the owner announced a sleep (racy hint). */
  isSleeping(): boolean {
    return Atomics.load(this.i32, this.bell) === SLEEPING;
  }

  stats(): DoorbellStats {
    const i32 = this.i32;
    const b = this.base;
    return {
      sent: Atomics.load(i32, b + SENT),
      avoided: Atomics.load(i32, b + AVOIDED),
      sleeps: i32[b + SLEEPS],
      spurious: i32[b + SPURIOUS],
    };
  }
}
