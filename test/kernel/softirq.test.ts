/**
 * softirq.c on one thread with a fake clock: __do_softirq's restart and time budget and the
 * hand-over to ksoftirqd/n, and the vectors' order (HI before NET_RX before TASKLET).
 */
import { describe, expect, it } from 'vitest';
import type { Tasklet } from '../../src/api/types.js';
import { MAX_SOFTIRQ_RESTART, MAX_SOFTIRQ_TIME_NS } from '../../src/kernel/softirq.js';
import { Softirq, TaskState } from '../../src/machine/layout.js';
import { oneThreadKernel } from './helpers.js';

describe('__do_softirq', () => {
  it('restarts while a vector keeps re-raising itself, MAX_SOFTIRQ_RESTART passes at most, then wakes ksoftirqd/n', () => {
    const k = oneThreadKernel();
    let runs = 0;
    k.rt.softirqs.open(Softirq.Block, (c) => {
      runs++;
      k.rt.softirqs.mark(c, Softirq.Block);
    });
    const ksoftirqd = k.mem.plan.ksoftirqd[0];
    expect(k.rt.sched.rqs.state(ksoftirqd)).toBe(TaskState.Sleeping);
    k.rt.softirqs.raise(Softirq.Block); // task context: runs at once, as local_bh_enable would
    expect(runs).toBe(MAX_SOFTIRQ_RESTART);
    const c = k.mem.cpuCounters(0);
    expect(c.softirq_restarts).toBe(MAX_SOFTIRQ_RESTART - 1);
    expect(c.ksoftirqd_wakeups).toBe(1);
    expect(k.rt.sched.rqs.state(ksoftirqd)).toBe(TaskState.Runnable);
    expect(k.rt.softirqs.pending(0) & (1 << Softirq.Block)).not.toBe(0); // left for ksoftirqd
  });

  it('stops restarting once MAX_SOFTIRQ_TIME has passed', () => {
    const k = oneThreadKernel();
    let runs = 0;
    const step = (0.8 * MAX_SOFTIRQ_TIME_NS) / 2; // 0.8 ms: the third pass ends past 2 ms
    k.rt.softirqs.open(Softirq.Block, (c) => {
      runs++;
      k.clock.ns += step;
      k.rt.softirqs.mark(c, Softirq.Block);
    });
    k.rt.softirqs.raise(Softirq.Block);
    expect(runs).toBe(3);
    expect(k.mem.cpuCounters(0).ksoftirqd_wakeups).toBe(1);
  });

  it('run by ksoftirqd itself, leaves the rest pending without waking ksoftirqd again', () => {
    const k = oneThreadKernel();
    k.rt.softirqs.open(Softirq.Block, (c) => k.rt.softirqs.mark(c, Softirq.Block));
    k.rt.softirqs.mark(0, Softirq.Block);
    k.rt.softirqs.doSoftirq(true);
    expect(k.mem.cpuCounters(0).ksoftirqd_wakeups).toBe(0);
    expect(k.rt.softirqs.pending(0)).toBe(1 << Softirq.Block);
  });

  it('does not run from inside a hard interrupt: irq_exit runs what was raised there', () => {
    const k = oneThreadKernel();
    let runs = 0;
    k.rt.softirqs.open(Softirq.Block, () => runs++);
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.Block);
    expect(runs).toBe(0);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(runs).toBe(1);
    expect(k.rt.softirqs.pending(0)).toBe(0);
  });
});

describe('vector order', () => {
  it('runs HI tasklets before NET_RX, and NET_RX before TASKLET, whatever order they were raised in', () => {
    const k = oneThreadKernel();
    const order: string[] = [];
    const tasklet = (name: string): Tasklet => ({
      kind: 'tasklet',
      id: k.rt.objects.create('tasklet', name, () => order.push(name), -1),
      name,
    });
    const hi = tasklet('HI');
    const normal = tasklet('TASKLET');
    k.rt.workload = { netRx: () => order.push('NET_RX'), task: () => undefined };
    k.rt.ctx.hardirq = 1; // raised from a hard IRQ handler: all run at irq_exit
    k.rt.tasklets.schedule(normal, false);
    k.rt.softirqs.raise(Softirq.NetRx);
    k.rt.tasklets.schedule(hi, true);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(order).toEqual(['HI', 'NET_RX', 'TASKLET']);
  });

  it('tasklet_schedule of a scheduled tasklet returns false and runs it once', () => {
    const k = oneThreadKernel();
    let runs = 0;
    const t: Tasklet = { kind: 'tasklet', id: k.rt.objects.create('tasklet', 't', () => runs++, -1), name: 't' };
    k.rt.ctx.hardirq = 1;
    expect(k.rt.tasklets.schedule(t, true)).toBe(true);
    expect(k.rt.tasklets.schedule(t, true)).toBe(false);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(runs).toBe(1);
    expect(k.mem.cpuCounters(0).tasklets_run).toBe(1);
  });
});
