/**
 * `tasklet`: tasklet_hi_schedule — Jason's first fix (seed 000). Option `hi=false` uses
 * tasklet_schedule. Trade-off: runs at irq_exit on the same CPU and thread with no wakeup or
 * context switch, but in softirq context, sharing the softirq budget with NET_RX and friends.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Tasklet } from '../api/types.js';
import { pickBool } from './options.js';

export class TaskletStrategy implements DeferralStrategy {
  static readonly description =
    'tasklet_hi_schedule: runs at irq_exit on the same CPU, no wakeup (hi=false: TASKLET_SOFTIRQ)';
  static readonly claims = { cpu: 'same', context: 'softirq' } as const;
  private tasklets: Tasklet[] = [];
  private readonly hi: boolean;

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    this.hi = pickBool(options, 'hi', true, 'tasklet');
  }

  setup(s: StrategySetup): void {
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.tasklets.push(s.createTasklet(`fast_pool_mix/${c}`, (k) => d.run(k)));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    const t = this.tasklets[d.cpu];
    return this.hi ? k.taskletHiSchedule(t) : k.taskletSchedule(t);
  }
}
