/**
 * timer-batched — mix at most once every `delay` jiffies per CPU, from a per-CPU timer.
 *
 * Trade-off: like `timer` (softirq on this CPU at a tick, no wakeup), but the timer is set
 * `delay` jiffies ahead: while the mix waits, the fast pool keeps counting interrupts, so each
 * mix credits more of them and there are `delay` times fewer mixes (and input_pool.lock
 * acquisitions) — at the price of `delay` jiffies of latency (16 ms at HZ=250 by default).
 *
 * Run it against the timer it stretches:
 *   npx deferlab run --strategy ./examples/timer-batched.ts --strategy timer
 *   npx deferlab check-strategy ./examples/timer-batched.ts:delay=2
 * Options: delay  jiffies from the hand-off to the mix, 1..HZ (default 4)
 *
 * To use it outside this repository, copy the file and import the types from 'deferlab'.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Timer } from 'deferlab';

export default class TimerBatchedStrategy implements DeferralStrategy {
  static readonly description =
    'mod_timer(jiffies + delay) on this CPU: fewer, larger mixes, delay jiffies later (delay=4)';
  static readonly claims = { cpu: 'same', context: 'softirq' } as const;

  private readonly delay: number;
  private readonly timers: Timer[] = [];

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    for (const key of Object.keys(options)) {
      if (key !== 'delay') throw new Error(`unknown option ${key} (known: delay)`);
    }
    const d = options.delay ?? 4;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1)
      throw new Error(`option delay must be a whole number of jiffies, at least 1 (got ${JSON.stringify(d)})`);
    this.delay = d;
  }

  setup(s: StrategySetup): void {
    if (this.delay > s.hz) throw new Error(`option delay must be at most HZ (${s.hz}) jiffies (got ${this.delay})`);
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      // Context: TIMER softirq on the CPU the timer was armed on (this CPU: mod_timer is local).
      this.timers.push(s.createTimer(`batched_mix/${c}`, (k) => d.run(k)));
    }
  }

  /** Context: hardirq on CPU d.cpu. A pending timer already holds the job: refuse. */
  handoff(k: Kernel, d: Deferred): boolean {
    const t = this.timers[d.cpu];
    if (k.timerPending(t)) return false;
    k.modTimer(t, k.jiffies + this.delay);
    return true;
  }
}
