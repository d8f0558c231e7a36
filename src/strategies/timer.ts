/**
 * `timer`: an already-expired per-CPU timer, add_timer_on(this CPU) with expires = jiffies —
 * the fix that landed (seed 001, v3). Option `deferrable=true` is v2's TIMER_DEFERRABLE, which
 * an idle NOHZ CPU does not wake for. Trade-off: batches the mix to the next tick on the same
 * CPU with no wakeup, at the price of up to one jiffy of delay (and, deferrable, until the CPU
 * next wakes).
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Timer } from '../api/types.js';
import { pickBool } from './options.js';

export class TimerStrategy implements DeferralStrategy {
  static readonly description =
    'add_timer_on(this CPU, expires = jiffies): runs at the next tick (deferrable=true: TIMER_DEFERRABLE, v2)';
  static readonly claims = { cpu: 'same', context: 'softirq' } as const;
  private timers: Timer[] = [];
  private readonly deferrable: boolean;

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    this.deferrable = pickBool(options, 'deferrable', false, 'timer');
  }

  setup(s: StrategySetup): void {
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.timers.push(s.createTimer(`fast_pool_mix/${c}`, (k) => d.run(k), { deferrable: this.deferrable }));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    const t = this.timers[d.cpu];
    if (k.timerPending(t)) return false;
    k.addTimerOn(t, k.cpu, k.jiffies);
    return true;
  }
}
