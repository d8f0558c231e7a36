/**
 * `bh_workqueue`: queue_work_on(this CPU, system_bh_highpri_wq) — WQ_BH (Linux 6.9+), the
 * replacement for tasklets. Option `highpri=false` uses system_bh_wq (TASKLET_SOFTIRQ).
 * Trade-off: like a tasklet (softirq context on the queueing CPU, no wakeup), with workqueue
 * semantics and the BH worker's own budget of 10 items or 2 ms per run.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Work, Workqueue } from '../api/types.js';
import { pickBool } from './options.js';

export class BhWorkqueueStrategy implements DeferralStrategy {
  static readonly description =
    'WQ_BH workqueue (6.9+): softirq context on the queueing CPU, no wakeup (highpri=false: system_bh_wq)';
  static readonly claims = { cpu: 'same', context: 'softirq' } as const;
  private wq!: Workqueue;
  private works: Work[] = [];
  private readonly highpri: boolean;

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    this.highpri = pickBool(options, 'highpri', true, 'bh_workqueue');
  }

  setup(s: StrategySetup): void {
    this.wq = s.workqueue(this.highpri ? 'system_bh_highpri_wq' : 'system_bh_wq');
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.works.push(s.createWork(`fast_pool_mix/${c}`, (k) => d.run(k)));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    return k.queueWorkOn(k.cpu, this.wq, this.works[d.cpu]);
  }
}
