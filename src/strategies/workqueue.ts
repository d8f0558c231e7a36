/**
 * `workqueue`: queue_work_on(this CPU, system_highpri_wq) — random.c's 5.18–6.0 code that
 * regressed qperf tcp_lat by 10% (seed 000). Option `wq=system` uses system_wq instead
 * (schedule_work_on, nice 0), which the seed says regressed too. Trade-off: the mix leaves the
 * interrupt path entirely, but every hand-off wakes the bound kworker/n thread, which must win
 * CPU n from whatever runs there: a wakeup and two context switches per mix.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Work, Workqueue } from '../api/types.js';
import { pickOption } from './options.js';

export class WorkqueueStrategy implements DeferralStrategy {
  static readonly description =
    'queue_work_on(this CPU, system_highpri_wq): wakes the bound kworker/n (wq=system: system_wq, nice 0)';
  static readonly claims = { cpu: 'same', context: 'task' } as const;
  private wq!: Workqueue;
  private works: Work[] = [];
  private readonly wqName: 'system_wq' | 'system_highpri_wq';

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    const wq = pickOption(options, 'wq', ['highpri', 'system'], 'highpri', 'workqueue');
    this.wqName = wq === 'system' ? 'system_wq' : 'system_highpri_wq';
  }

  setup(s: StrategySetup): void {
    this.wq = s.workqueue(this.wqName);
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.works.push(s.createWork(`fast_pool_mix/${c}`, (k) => d.run(k)));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    return k.queueWorkOn(k.cpu, this.wq, this.works[d.cpu]);
  }
}
