/**
 * Softirqs (kernel/softirq.c): raise_softirq, irq_exit's invoke_softirq, __do_softirq with its
 * restart budget, and the hand-over to ksoftirqd/n.
 *
 * Emulates: the vectors in the kernel's order (HI, TIMER, NET_TX, NET_RX, ..., TASKLET); each
 * vector's actions registered with `open()` (open_softirq; a vector may have more than one, as
 * 6.9's TASKLET runs tasklet_action and then the BH workqueue); __do_softirq restarting while
 * vectors are pending, at most MAX_SOFTIRQ_RESTART passes and MAX_SOFTIRQ_TIME, then
 * wakeup_softirqd(). Hard interrupts are taken between vectors (they are enabled in softirq
 * context): `pollIrq`, injected by the runtime.
 * Differences: softirqs raised from task context run at once (as local_bh_enable would run
 * them); the restart loop checks elapsed time on the clock, not jiffies, and does not look at
 * need_resched(); there is no ksoftirqd_running() short-cut (kernels before 6.5 have one).
 *
 * Context: the CPU's owner (any thread that owns it); never allocates.
 */
import { CPU_IN_SOFTIRQ, CPU_SOFTIRQ, CpuCounter, NR_SOFTIRQS, Where } from '../machine/layout.js';
import { St } from '../machine/trace.js';
import type { CpuContext } from './context.js';
import type { Scheduler } from './sched/core.js';

/** MAX_SOFTIRQ_TIME: 2 ms (kernel/softirq.c). */
export const MAX_SOFTIRQ_TIME_NS = 2_000_000;
/** MAX_SOFTIRQ_RESTART: 10 passes. */
export const MAX_SOFTIRQ_RESTART = 10;

/** A softirq action: runs on the owner of CPU `cpu`, in softirq context. */
export type SoftirqAction = (cpu: number) => void;

export class Softirqs {
  private readonly actions: SoftirqAction[][] = Array.from({ length: NR_SOFTIRQS }, () => []);

  constructor(
    private readonly ctx: CpuContext,
    private readonly sched: Scheduler,
    /** Task id of ksoftirqd/c, per CPU. */
    private readonly ksoftirqd: readonly number[],
    /** Take pending hard interrupts now (between vectors). */
    private readonly pollIrq: () => void,
  ) {}

  /** open_softirq(): add `action` to vector `nr` (called in the order the actions run). */
  open(nr: number, action: SoftirqAction): void {
    this.actions[nr].push(action);
  }

  /** Softirq bits pending on `cpu` (racy from another CPU). */
  pending(cpu: number): number {
    return Atomics.load(this.ctx.i32, this.ctx.cw(cpu, CPU_SOFTIRQ));
  }

  /** Mark `nr` pending on `cpu` without running it (a handler re-raising for a later pass). */
  mark(cpu: number, nr: number): void {
    Atomics.or(this.ctx.i32, this.ctx.cw(cpu, CPU_SOFTIRQ), 1 << nr);
  }

  /** raise_softirq on the current CPU. From task context the softirq runs now (local_bh_enable). */
  raise(nr: number): void {
    const ctx = this.ctx;
    this.mark(ctx.cpu, nr);
    if (ctx.hardirq === 0 && ctx.softirq === 0) this.doSoftirq(false);
  }

  /** irq_exit(): run pending softirqs unless already inside interrupt or softirq processing. */
  irqExit(): void {
    const ctx = this.ctx;
    if (ctx.hardirq === 0 && ctx.softirq === 0 && this.pending(ctx.cpu) !== 0) this.doSoftirq(false);
  }

  /**
   * __do_softirq(): run pending vectors in order; restart while more are raised, for at most
   * MAX_SOFTIRQ_TIME and MAX_SOFTIRQ_RESTART passes; then leave the rest to ksoftirqd/n.
   */
  doSoftirq(fromKsoftirqd: boolean): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const c = ctx.cpu;
    const word = ctx.cw(c, CPU_SOFTIRQ);
    const start = ctx.now();
    let restarts = MAX_SOFTIRQ_RESTART;
    ctx.softirq++;
    i32[ctx.cw(c, CPU_IN_SOFTIRQ)]++;
    ctx.count(CpuCounter.softirq_runs);
    try {
      for (;;) {
        const pending = Atomics.exchange(i32, word, 0);
        for (let nr = 0; nr < NR_SOFTIRQS; nr++) {
          if ((pending & (1 << nr)) === 0) continue;
          ctx.setWhere(c, Where.Softirq + nr);
          const acts = this.actions[nr];
          for (let k = 0; k < acts.length; k++) acts[k](c);
          ctx.setWhere(c, Where.Softirq);
          this.pollIrq();
        }
        if (Atomics.load(i32, word) === 0) break;
        if (ctx.now() - start < MAX_SOFTIRQ_TIME_NS && --restarts > 0) {
          ctx.count(CpuCounter.softirq_restarts);
          continue;
        }
        if (!fromKsoftirqd) this.wakeKsoftirqd(c);
        break;
      }
    } catch (e) {
      ctx.faultAt ??= { context: 'softirq', cpu: c };
      throw e;
    } finally {
      ctx.softirq--;
      i32[ctx.cw(c, CPU_IN_SOFTIRQ)]--;
      ctx.setWhere(c, ctx.hardirq > 0 ? Where.Hardirq : Where.Task);
    }
    if (ctx.tracer.on) ctx.tracer.record(St.Softirq, ctx.now() - start);
  }

  /** wakeup_softirqd(). */
  private wakeKsoftirqd(c: number): void {
    this.ctx.count(CpuCounter.ksoftirqd_wakeups);
    this.sched.wakeUp(this.ksoftirqd[c]);
  }
}
