/**
 * Softirqs (kernel/softirq.c): raise_softirq, irq_exit's invoke_softirq, __do_softirq with its
 * restart budget, and the hand-over to ksoftirqd/n.
 *
 * Emulates: the vectors in the kernel's order (HI, TIMER, NET_TX, NET_RX, ..., TASKLET); each
 * vector's actions registered with `open()` (open_softirq; a vector may have more than one, as
 * 6.9's TASKLET runs tasklet_action and then the BH workqueue); __do_softirq restarting while
 * vectors are pending `time_before(jiffies, end) && !need_resched() && --max_restart` (5.15,
 * 6.1 and 6.9 alike: end = jiffies + MAX_SOFTIRQ_TIME, msecs_to_jiffies(2), so the budget is 1–2
 * ticks), then wakeup_softirqd(); and, where `rules.ksoftirqdDefers` (kernels before 6.5:
 * 4cd13c21b207 "softirq: Let ksoftirqd do its job", reverted by d15121be7485), invoke_softirq()
 * and do_softirq() leave pending softirqs to ksoftirqd while it is runnable, unless HI or TASKLET
 * is pending (SOFTIRQ_NOW_MASK). Hard interrupts are taken between vectors (they are enabled in
 * softirq context): `pollIrq`, injected by the runtime.
 * Differences: softirqs raised from task context run at once (as local_bh_enable would run
 * them), subject to the same ksoftirqd rule.
 *
 * Context: the CPU's owner (any thread that owns it); never allocates.
 */

import {
  CPU_FLAGS,
  CPU_IN_SOFTIRQ,
  CPU_SOFTIRQ,
  CPUF_NET_RX_LEFT_NS,
  CpuCounter,
  CpuFlag,
  NR_SOFTIRQS,
  Softirq,
  TaskState,
  Where,
} from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import type { CpuContext } from './context.js';
import type { Scheduler } from './sched/core.js';
import type { HostedTask, TaskHost } from './task.js';

/** MAX_SOFTIRQ_TIME: msecs_to_jiffies(2) (kernel/softirq.c), counted in jiffies. */
export const MAX_SOFTIRQ_TIME_MS = 2;
/** MAX_SOFTIRQ_RESTART: 10 passes. */
export const MAX_SOFTIRQ_RESTART = 10;

/** A softirq action: runs on the owner of CPU `cpu`, in softirq context. */
export type SoftirqAction = (cpu: number) => void;

/** Where kernels differ (set by the kernel profile). */
export interface SoftirqRules {
  /** ksoftirqd_running(): irq_exit and local_bh_enable leave softirqs to a runnable ksoftirqd
   *  unless HI or TASKLET is pending (5.15, 6.1; gone in 6.5). */
  ksoftirqdDefers: boolean;
}

/**
 * `--softirq-defer on|off` (config `softirqDefer`): the ksoftirqd_running() rule switched on or off
 * whatever the kernel profile says, for an ablation of Tejun Heo's theory (issue 26 item 6).
 */
export const SOFTIRQ_DEFER_VALUES = ['on', 'off'] as const;
export type SoftirqDefer = (typeof SOFTIRQ_DEFER_VALUES)[number];

/** NET_RX_SOFTIRQ's bit in the pending word. */
const NET_RX_BIT = 1 << Softirq.NetRx;

/** SOFTIRQ_NOW_MASK: HI and TASKLET run at once even while ksoftirqd is runnable. */
export const SOFTIRQ_NOW_MASK = (1 << Softirq.Hi) | (1 << Softirq.Tasklet);

/** msecs_to_jiffies(ms) for HZ `hz` (include/linux/jiffies.h: rounds up). */
export function msecsToJiffies(ms: number, hz: number): number {
  return Math.ceil((ms * hz) / 1000);
}

export class Softirqs {
  private readonly actions: SoftirqAction[][] = Array.from({ length: NR_SOFTIRQS }, () => []);
  /** MAX_SOFTIRQ_TIME in jiffies at this HZ. */
  private readonly budgetJiffies: number;

  constructor(
    private readonly ctx: CpuContext,
    private readonly sched: Scheduler,
    /** Task id of ksoftirqd/c, per CPU. */
    private readonly ksoftirqd: readonly number[],
    /** Take pending hard interrupts now (between vectors). */
    private readonly pollIrq: () => void,
    private readonly rules: SoftirqRules = { ksoftirqdDefers: false },
  ) {
    this.budgetJiffies = msecsToJiffies(MAX_SOFTIRQ_TIME_MS, ctx.hz);
  }

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
    if (ctx.hardirq === 0 && ctx.softirq === 0 && !this.leaveToKsoftirqd(ctx.cpu)) this.doSoftirq(false);
  }

  /** irq_exit() → invoke_softirq(): run pending softirqs unless already inside interrupt or
   *  softirq processing (or, under the ksoftirqd rule, ksoftirqd is runnable). */
  irqExit(): void {
    const ctx = this.ctx;
    if (ctx.hardirq === 0 && ctx.softirq === 0 && this.pending(ctx.cpu) !== 0 && !this.leaveToKsoftirqd(ctx.cpu))
      this.doSoftirq(false);
  }

  /** ksoftirqd_running(pending) where the profile has it: counted when it defers. */
  private leaveToKsoftirqd(c: number): boolean {
    if (!this.rules.ksoftirqdDefers) return false;
    if ((this.pending(c) & SOFTIRQ_NOW_MASK) !== 0) return false;
    if (this.sched.rqs.state(this.ksoftirqd[c]) !== TaskState.Runnable) return false;
    this.ctx.count(CpuCounter.softirqs_left_to_ksoftirqd);
    if ((this.pending(c) & NET_RX_BIT) !== 0) {
      this.ctx.count(CpuCounter.net_rx_left_to_ksoftirqd);
      this.netRxLeft(c);
    }
    return true;
  }

  /** NET_RX of `c` is left to ksoftirqd from now, unless it already waits (its first time counts). */
  private netRxLeft(c: number): void {
    const ctx = this.ctx;
    const w = ctx.cf(c, CPUF_NET_RX_LEFT_NS);
    if (ctx.f64[w] === 0) ctx.f64[w] = ctx.now();
  }

  /**
   * NET_RX of `c` is about to run: ksoftirqd's run records how long it waited since it was left
   * to ksoftirqd (stage net_rx_ksoftirqd_wait); any run ends the wait.
   */
  private netRxRuns(c: number, fromKsoftirqd: boolean, now: number): void {
    const ctx = this.ctx;
    const w = ctx.cf(c, CPUF_NET_RX_LEFT_NS);
    const left = ctx.f64[w];
    if (left === 0) return;
    ctx.f64[w] = 0;
    if (fromKsoftirqd) ctx.tracer.record(St.NetRxKsoftirqdWait, now - left);
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
    const end = ctx.jiffies() + this.budgetJiffies;
    const flags = ctx.cw(c, CPU_FLAGS);
    let restarts = MAX_SOFTIRQ_RESTART;
    ctx.softirq++;
    i32[ctx.cw(c, CPU_IN_SOFTIRQ)]++;
    ctx.count(CpuCounter.softirq_runs);
    try {
      for (;;) {
        const pending = Atomics.exchange(i32, word, 0);
        if ((pending & NET_RX_BIT) !== 0) this.netRxRuns(c, fromKsoftirqd, start);
        for (let nr = 0; nr < NR_SOFTIRQS; nr++) {
          if ((pending & (1 << nr)) === 0) continue;
          ctx.setWhere(c, Where.Softirq + nr);
          ctx.timeline.begin(TlWhat.Softirq, c, nr);
          const acts = this.actions[nr];
          for (let k = 0; k < acts.length; k++) acts[k](c);
          ctx.timeline.end(TlWhat.Softirq, c, nr);
          ctx.setWhere(c, Where.Softirq);
          this.pollIrq();
        }
        const left = Atomics.load(i32, word);
        if (left === 0) break;
        // time_before(jiffies, end) && !need_resched() && --max_restart
        const inTime = ctx.jiffies() - end < 0;
        const resched = (Atomics.load(i32, flags) & CpuFlag.NeedResched) !== 0;
        if (inTime && !resched && --restarts > 0) {
          ctx.count(CpuCounter.softirq_restarts);
          continue;
        }
        // Which condition stopped the restart (need_resched with time left: Tejun's case).
        ctx.count(inTime && resched ? CpuCounter.softirq_restarts_cut_resched : CpuCounter.softirq_restarts_cut_budget);
        if (!fromKsoftirqd) {
          if ((left & NET_RX_BIT) !== 0) this.netRxLeft(c);
          this.wakeKsoftirqd(c);
        }
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

/** ksoftirqd/n: run softirqs left over when irq_exit's budget ran out. */
export class KsoftirqdTask implements HostedTask {
  private readonly pending: number;
  private readonly recheck: () => boolean;
  constructor(
    private readonly rt: TaskHost,
    private readonly softirqs: Softirqs,
    readonly id: number,
    cpu: number,
  ) {
    this.pending = rt.ctx.cw(cpu, CPU_SOFTIRQ);
    this.recheck = () => Atomics.load(rt.i32, this.pending) !== 0 || rt.isStopping();
  }
  run(): void {
    const rt = this.rt;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (Atomics.load(rt.i32, this.pending) !== 0) {
        // The pass is what ksoftirqd is charged under --kthread-charge work (rq.ts); the clock is
        // read for it only then.
        const rqs = rt.sched.rqs;
        const byWork = rqs.chargedByWork(this.id);
        const t0 = byWork ? rt.ctx.now() : 0;
        this.softirqs.doSoftirq(true);
        if (byWork) rqs.addWork(this.id, rt.ctx.now() - t0);
        continue;
      }
      if (rt.sched.sleepCurrent(this.recheck)) return;
      if (rt.task !== this.id) return;
    }
  }
}
