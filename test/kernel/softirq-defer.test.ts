/**
 * Tejun Heo's theory, counted (issue 26 item 6), on one thread with a fake clock: why
 * __do_softirq stopped restarting (kernel/softirq.c: `time_before(jiffies, end) && !need_resched()
 * && --max_restart`), NET_RX left to a runnable ksoftirqd at irq exit (ksoftirqd_running(),
 * 4cd13c21b207, 5.15 and 6.1), how long NET_RX then waited for ksoftirqd, and the rule switched
 * off (`softirqDefer: false`) for the ablation.
 */
import { describe, expect, it } from 'vitest';
import { CPU_FLAGS, CpuFlag, Softirq, TaskState } from '../../src/hw/layout.js';
import { St } from '../../src/hw/trace.js';
import type { MachineOptions } from '../../src/machine/options.js';
import { oneThreadKernel } from './helpers.js';

/** A kernel with a NET_RX action that logs, and the tracer's records captured. */
function kernel(o: Partial<MachineOptions>) {
  const k = oneThreadKernel(o);
  const ran: string[] = [];
  k.rt.workload = { netRx: () => ran.push('NET_RX'), task: () => undefined };
  const waits: number[] = [];
  k.rt.ctx.tracer.record = (s: St, ns: number) => {
    if (s === St.NetRxKsoftirqdWait) waits.push(ns);
  };
  const ksoftirqd = k.mem.plan.ksoftirqd[0];
  /** A hard IRQ that raises NET_RX, then irq_exit. */
  const netIrq = () => {
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.NetRx);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
  };
  return { k, ran, waits, ksoftirqd, netIrq, counters: () => k.mem.cpuCounters(0) };
}

describe('why __do_softirq stopped restarting', () => {
  it('need_resched() with time and passes left: softirq_restarts_cut_resched', () => {
    const { k, counters } = kernel({});
    let runs = 0;
    k.rt.softirqs.open(Softirq.Block, (c) => {
      runs++;
      if (runs === 2) Atomics.or(k.mem.i32, k.rt.ctx.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
      k.rt.softirqs.mark(c, Softirq.Block);
    });
    k.rt.softirqs.raise(Softirq.Block);
    expect(runs).toBe(2);
    expect([counters().softirq_restarts_cut_resched, counters().softirq_restarts_cut_budget]).toEqual([1, 0]);
  });

  it('MAX_SOFTIRQ_RESTART passes used up: softirq_restarts_cut_budget', () => {
    const { k, counters } = kernel({});
    k.rt.softirqs.open(Softirq.Block, (c) => k.rt.softirqs.mark(c, Softirq.Block));
    k.rt.softirqs.raise(Softirq.Block);
    expect([counters().softirq_restarts_cut_resched, counters().softirq_restarts_cut_budget]).toEqual([0, 1]);
  });

  it('nothing left pending: neither', () => {
    const { k, counters } = kernel({});
    k.rt.softirqs.open(Softirq.Block, () => undefined);
    k.rt.softirqs.raise(Softirq.Block);
    expect([counters().softirq_restarts_cut_resched, counters().softirq_restarts_cut_budget]).toEqual([0, 0]);
  });
});

describe('NET_RX left to ksoftirqd, and its wait', () => {
  it('5.15: irq exit leaves NET_RX to a runnable ksoftirqd, counted; ksoftirqd records the wait on the clock', () => {
    const { k, ran, waits, ksoftirqd, netIrq, counters } = kernel({ kernel: '5.15' });
    k.rt.sched.wakeUp(ksoftirqd);
    expect(k.rt.sched.rqs.state(ksoftirqd)).toBe(TaskState.Runnable);
    k.clock.ns = 5_000_000;
    netIrq();
    k.clock.ns = 5_030_000;
    netIrq(); // a second one while it waits: counted, but the wait runs from the first
    expect(ran).toEqual([]);
    expect(counters().net_rx_left_to_ksoftirqd).toBe(2);
    k.clock.ns = 5_080_000;
    k.rt.softirqs.doSoftirq(true); // ksoftirqd's run
    expect(ran).toEqual(['NET_RX']);
    expect(waits).toEqual([80_000]);
    k.rt.softirqs.doSoftirq(true); // nothing waits any more: no second record
    expect(waits).toEqual([80_000]);
  });

  it('__do_softirq cut by need_resched with NET_RX pending: the wait starts at the wakeup of ksoftirqd', () => {
    const { k, waits, ksoftirqd } = kernel({ kernel: '5.15' });
    let runs = 0;
    k.rt.workload = {
      netRx: () => {
        runs++;
        Atomics.or(k.mem.i32, k.rt.ctx.cw(0, CPU_FLAGS), CpuFlag.NeedResched);
        k.rt.softirqs.mark(0, Softirq.NetRx); // NAPI used its whole budget: re-raised
      },
      task: () => undefined,
    };
    k.clock.ns = 1_000_000;
    k.rt.softirqs.raise(Softirq.NetRx);
    expect(runs).toBe(1);
    expect(k.rt.sched.rqs.state(ksoftirqd)).toBe(TaskState.Runnable);
    k.clock.ns = 1_250_000;
    k.rt.softirqs.doSoftirq(true);
    expect(waits).toEqual([250_000]);
  });

  it('NET_RX run at irq exit after all (HI pending, SOFTIRQ_NOW_MASK) ends the wait without recording it', () => {
    const { k, waits, ksoftirqd, netIrq } = kernel({ kernel: '5.15' });
    k.rt.sched.wakeUp(ksoftirqd);
    netIrq();
    k.rt.softirqs.open(Softirq.Hi, () => undefined);
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.Hi);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit(); // runs HI and the waiting NET_RX
    k.rt.softirqs.mark(0, Softirq.NetRx);
    k.rt.softirqs.doSoftirq(true);
    expect(waits).toEqual([]);
  });

  it('softirqDefer off on 5.15 (the ablation): irq exit runs NET_RX although ksoftirqd is runnable', () => {
    const { k, ran, ksoftirqd, netIrq, counters } = kernel({ kernel: '5.15', softirqDefer: false });
    k.rt.sched.wakeUp(ksoftirqd);
    netIrq();
    expect(ran).toEqual(['NET_RX']);
    expect(counters().net_rx_left_to_ksoftirqd).toBe(0);
    expect(counters().softirqs_left_to_ksoftirqd).toBe(0);
  });

  it('softirqDefer on under 6.9 puts the rule back', () => {
    const { k, ran, ksoftirqd, netIrq, counters } = kernel({ kernel: '6.9', softirqDefer: true });
    k.rt.sched.wakeUp(ksoftirqd);
    netIrq();
    expect(ran).toEqual([]);
    expect(counters().net_rx_left_to_ksoftirqd).toBe(1);
  });
});
