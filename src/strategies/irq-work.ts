/**
 * `irq_work`: irq_work_queue_on(target) — hardirq context on the target CPU after an IPI (or a
 * self-IPI). Option `target`: `self` (default), `next` (the next CPU), or a CPU number.
 * Trade-off: no thread wakeup, but still hardirq context (the lock stays raw), and a remote
 * target costs an IPI and runs the mix off its CPU, which random.c refuses.
 */
import type { DeferralStrategy, Deferred, IrqWork, Kernel, StrategySetup } from '../api/types.js';
import { badOption } from './options.js';

export class IrqWorkStrategy implements DeferralStrategy {
  static readonly description = 'irq_work_queue_on(target): hardirq context after a (self-)IPI (target=self|next|N)';
  static readonly claims = { cpu: 'any', context: 'hardirq' } as const;
  private works: IrqWork[] = [];
  private readonly target: string | number;
  private nrCpus = 1;

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    const t = options.target ?? 'self';
    if (t !== 'self' && t !== 'next' && !(typeof t === 'number' && Number.isInteger(t) && t >= 0)) {
      throw badOption('irq_work', 'target', 'self, next or a CPU number', t);
    }
    this.target = t;
  }

  setup(s: StrategySetup): void {
    this.nrCpus = s.nrCpus;
    if (typeof this.target === 'number' && this.target >= s.nrCpus) {
      throw badOption('irq_work', 'target', `a CPU from 0 to ${s.nrCpus - 1}`, this.target);
    }
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.works.push(s.createIrqWork(`fast_pool_mix/${c}`, (k) => d.run(k)));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    const t =
      this.target === 'self' ? k.cpu : this.target === 'next' ? (k.cpu + 1) % this.nrCpus : (this.target as number);
    return k.irqWorkQueueOn(this.works[d.cpu], t);
  }
}
