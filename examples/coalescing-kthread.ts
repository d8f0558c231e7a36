/**
 * coalescing-kthread — wake this CPU's kthread only when no wakeup is already in flight.
 *
 * Trade-off: the mix leaves interrupt context for a dedicated bound kthread (a workqueue of
 * its own), and a hand-off that finds a wakeup in flight costs one shared-memory load — no
 * atomic read-modify-write, no wakeup — at the price of the kthread's scheduling latency
 * (a wakeup and two context switches per burst, like `workqueue`).
 *
 * Run it against the workqueue it refines:
 *   npx deferlab run --strategy ./examples/coalescing-kthread.ts --strategy workqueue
 *   npx deferlab check-strategy ./examples/coalescing-kthread.ts
 * Options (`./examples/coalescing-kthread.ts:highpri=false`):
 *   highpri  the kthread runs at nice -20 (default true) or nice 0
 *
 * The pattern is Seastar's wakeup coalescing and the LMAX Disruptor's LiteBlockingWaitStrategy:
 * the producer wakes the consumer only when a flag says it is not already being woken; the
 * consumer clears the flag BEFORE it drains, so a job handed off while it drains sets the flag
 * again and causes one more wakeup instead of being stranded:
 *
 *   hand-off (hardirq, CPU n)                  kthread (task context, CPU n, another thread)
 *   job pending                                clear "wakeup in flight"      <- PENDING cleared
 *   if "wakeup in flight" is set: done         drain: run the pending job    <- d.run(k)
 *   else set it and wake the kthread
 *
 * The flag must be seen by the hand-off AND by the kthread, which run in different threads
 * with different instances of this class: it cannot be a field of `this`. It is the work
 * item's own PENDING bit — set by queue_work_on, cleared by the worker before it calls us —
 * read with k.workPending(). (A `this.inFlight[cpu]` flag would be set in the CPU's thread and
 * cleared in the kthread's copy: the CPU's copy stays set and every later job is stranded.)
 * With random.c the per-CPU queue of jobs is at most one deep (MIX_INFLIGHT): the job is
 * d.run for this CPU, and the work item's callback is the drain.
 *
 * To use it outside this repository, copy the file and import the types from 'deferlab'.
 */
import type { DeferralStrategy, Deferred, Kernel, StrategySetup, Work, Workqueue } from 'deferlab';

export default class CoalescingKthreadStrategy implements DeferralStrategy {
  static readonly description =
    'bound kthread woken only when no wakeup is in flight (PENDING read first): Seastar/LiteBlocking coalescing';
  static readonly claims = { cpu: 'same', context: 'task' } as const;

  private readonly highpri: boolean;
  private wq!: Workqueue;
  /** Per CPU: the kthread's wakeup. Its PENDING bit is the "wakeup in flight" flag. */
  private readonly wakeups: Work[] = [];

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    for (const key of Object.keys(options)) {
      if (key !== 'highpri') throw new Error(`unknown option ${key} (known: highpri)`);
    }
    const h = options.highpri ?? true;
    if (typeof h !== 'boolean') throw new Error(`option highpri must be true or false (got ${JSON.stringify(h)})`);
    this.highpri = h;
  }

  setup(s: StrategySetup): void {
    this.wq = s.allocWorkqueue(this.highpri ? 'coalesce_hi' : 'coalesce', { highpri: this.highpri });
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      // Context: task, kworker bound to CPU c. PENDING is already clear: a hand-off from now
      // on wakes us again, so draining cannot strand a job.
      this.wakeups.push(s.createWork(`coalesce_drain/${c}`, (k) => d.run(k)));
    }
  }

  /** Context: hardirq on CPU d.cpu; must not sleep. Returns false when a wakeup is in flight. */
  handoff(k: Kernel, d: Deferred): boolean {
    const w = this.wakeups[d.cpu];
    if (k.workPending(w)) return false; // a wakeup is in flight and will drain the job: coalesced
    return k.queueWorkOn(k.cpu, this.wq, w); // false only if it became pending since the load
  }
}
