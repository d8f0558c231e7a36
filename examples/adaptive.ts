/**
 * adaptive — hand the mix to a softirq while this CPU's softirqs are quiet, to a task when
 * they are busy.
 *
 * Trade-off: the tasklet-like no-wakeup path (WQ_BH work: softirq on this CPU at irq_exit)
 * while it is cheap, and a kthread (a WQ_UNBOUND worker kept on this CPU by affinity scope
 * 'cpu', strict) when softirqs are already backed up or tasks are queued, so that the mix
 * never lengthens a busy softirq pass — at the price of a wakeup exactly when the CPU is busiest.
 *
 * Run it against the tasklet:
 *   npx deferlab run --strategy ./examples/adaptive.ts --strategy tasklet
 *   npx deferlab check-strategy ./examples/adaptive.ts
 * Options (`./examples/adaptive.ts:busy_running=3`):
 *   busy_running  the CPU counts as busy when this many tasks are runnable on it (default 2)
 *
 * Why one work item and not a tasklet plus a work item: the job must be held by exactly one
 * pending object, or a second hand-off that chooses the other path queues it twice (the
 * conformance suite's double hand-off does exactly that: our own softirq raise makes the CPU
 * look busy the second time). A tasklet has no "pending" query, but one work_struct can be
 * queued on either workqueue, and its PENDING bit refuses the second queue whichever it is.
 * WQ_BH (Linux 6.9+) is the kernel's replacement for tasklets: same softirq, same CPU.
 *
 * To use it outside this repository, copy the file and import the types from 'deferlab'.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Work, Workqueue } from 'deferlab';

export default class AdaptiveStrategy implements DeferralStrategy {
  static readonly description =
    'WQ_BH (softirq, this CPU) while softirqs are quiet, an unbound worker kept on this CPU when busy';
  /** Runs on the hand-off's CPU, in softirq or task context depending on load. */
  static readonly claims = { cpu: 'same', context: 'any' } as const;

  private readonly busyRunning: number;
  private bh!: Workqueue;
  private worker!: Workqueue;
  /** One work item per CPU: the only object that ever holds that CPU's job. Set up once, read-only after. */
  private readonly works: Work[] = [];

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    for (const key of Object.keys(options)) {
      if (key !== 'busy_running') throw new Error(`unknown option ${key} (known: busy_running)`);
    }
    const n = options.busy_running ?? 2;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new Error(`option busy_running must be a whole number of tasks (got ${JSON.stringify(n)})`);
    }
    this.busyRunning = n;
  }

  /** Context: every thread, at start-up; the same objects in the same order everywhere. */
  setup(s: StrategySetup): void {
    this.bh = s.workqueue('system_bh_highpri_wq');
    this.worker = s.allocWorkqueue('adaptive_cpu', { unbound: true, affinityScope: 'cpu', affinityStrict: true });
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.works.push(s.createWork(`adaptive_mix/${c}`, (k) => d.run(k)));
    }
  }

  /** Softirqs already raised and not run, or tasks queued: do not add the mix to softirq time. */
  private busy(k: Kernel): boolean {
    const v = k.cpuView(k.cpu);
    return v.softirqPending !== 0 || v.nrRunning >= this.busyRunning;
  }

  /** Context: hardirq on CPU d.cpu; must not sleep. Returns false when the job is already queued. */
  handoff(k: Kernel, d: Deferred): boolean {
    const wq = this.busy(k) ? this.worker : this.bh;
    return k.queueWorkOn(k.cpu, wq, this.works[d.cpu]);
  }
}
