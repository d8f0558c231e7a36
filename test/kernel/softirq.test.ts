/**
 * softirq.c on one thread with a fake clock: __do_softirq's restart and time budget and the
 * hand-over to ksoftirqd/n, and the vectors' order (HI before NET_RX before TASKLET).
 */
import { describe, expect, it } from 'vitest';
import type { Tasklet } from '../../src/api/types.js';
import { CPU_FLAGS, CpuFlag, Softirq, TaskState } from '../../src/hw/layout.js';
import { MAX_SOFTIRQ_RESTART, msecsToJiffies } from '../../src/kernel/softirq.js';
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

  it.each([100, 250, 1000])(
    'stops restarting once jiffies reach the MAX_SOFTIRQ_TIME budget (msecs_to_jiffies(2)) at HZ %i',
    (hz) => {
      const k = oneThreadKernel({ hz });
      k.setJiffies(1000);
      const budget = msecsToJiffies(2, hz);
      expect(budget).toBe(hz === 1000 ? 2 : 1);
      let runs = 0;
      k.rt.softirqs.open(Softirq.Block, (c) => {
        runs++;
        if (runs === 3) k.setJiffies(1000 + budget); // a tick passes during the third pass
        k.rt.softirqs.mark(c, Softirq.Block);
      });
      k.rt.softirqs.raise(Softirq.Block);
      expect(runs).toBe(3);
      expect(k.mem.cpuCounters(0).ksoftirqd_wakeups).toBe(1);
    },
  );

  it('stops restarting as soon as need_resched() is set, and wakes ksoftirqd', () => {
    const k = oneThreadKernel();
    let runs = 0;
    k.rt.softirqs.open(Softirq.Block, (c) => {
      runs++;
      if (runs === 2) Atomics.or(k.mem.i32, k.rt.ctx.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
      k.rt.softirqs.mark(c, Softirq.Block);
    });
    k.rt.softirqs.raise(Softirq.Block);
    expect(runs).toBe(2);
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

describe('ksoftirqd_running (the 5.15 and 6.1 profiles; gone in 6.5)', () => {
  /** A kernel where ksoftirqd/0 has been woken (runnable) and an action on NET_RX that counts. */
  function withRunnableKsoftirqd(kernel: '5.15' | '6.1' | '6.9') {
    const k = oneThreadKernel({ kernel });
    const ran: string[] = [];
    k.rt.workload = { netRx: () => ran.push('NET_RX'), task: () => undefined };
    k.rt.sched.wakeUp(k.mem.plan.ksoftirqd[0]);
    expect(k.rt.sched.rqs.state(k.mem.plan.ksoftirqd[0])).toBe(TaskState.Runnable);
    return { k, ran };
  }

  it('leaves NET_RX raised in a hard IRQ to a runnable ksoftirqd instead of running it at irq_exit', () => {
    const { k, ran } = withRunnableKsoftirqd('5.15');
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.NetRx);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(ran).toEqual([]);
    expect(k.rt.softirqs.pending(0)).toBe(1 << Softirq.NetRx);
    expect(k.mem.cpuCounters(0).softirqs_left_to_ksoftirqd).toBe(1);
    k.rt.softirqs.doSoftirq(true); // ksoftirqd's own run
    expect(ran).toEqual(['NET_RX']);
  });

  it('still runs at once when HI or TASKLET is pending (SOFTIRQ_NOW_MASK)', () => {
    const { k, ran } = withRunnableKsoftirqd('6.1');
    let tasklets = 0;
    const t = { kind: 'tasklet' as const, id: k.rt.objects.create('tasklet', 't', () => tasklets++, -1), name: 't' };
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.NetRx);
    k.rt.tasklets.schedule(t, true);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(tasklets).toBe(1);
    expect(ran).toEqual(['NET_RX']);
  });

  it('does not defer in kernels without the rule (6.5 and later)', () => {
    const { k, ran } = withRunnableKsoftirqd('6.9');
    k.rt.ctx.hardirq = 1;
    k.rt.softirqs.raise(Softirq.NetRx);
    k.rt.ctx.hardirq = 0;
    k.rt.softirqs.irqExit();
    expect(ran).toEqual(['NET_RX']);
  });
});
