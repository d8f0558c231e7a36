/**
 * timer.c on one thread with a fake clock and hand-set jiffies: seed 001's fix rests on a timer
 * armed with `expires = jiffies` running at the next tick of its CPU, and not before.
 */
import { describe, expect, it } from 'vitest';
import type { Timer } from '../../src/api/types.js';
import { CPU_FLAGS, CPU_NEXT_TIMER, CPU_NEXT_TIMER_ANY, CpuFlag, Softirq } from '../../src/hw/layout.js';
import { timerNone } from '../../src/kernel/timer.js';
import { type OneThreadKernel, oneThreadKernel } from './helpers.js';

function timer(k: OneThreadKernel, deferrable: boolean, fn: () => void): Timer {
  return { kind: 'timer', id: k.rt.objects.create('timer', 't', fn, -1), name: 't', deferrable };
}

/** A tick on CPU 0 at jiffy `j`: the irq thread's store of jiffies and TICK flag, then a preemption point. */
function tick(k: OneThreadKernel, j: number): void {
  k.setJiffies(j);
  Atomics.or(k.mem.i32, k.rt.ctx.cw(0, CPU_FLAGS), CpuFlag.Tick);
  expect(k.rt.poll()).toBe(true);
}

describe('timers', () => {
  it('a timer armed with expires = jiffies runs at the next tick of its CPU, and not before', () => {
    const k = oneThreadKernel();
    k.setJiffies(100);
    const ran: number[] = [];
    const t = timer(k, false, () => ran.push(k.rt.ctx.jiffies()));
    k.rt.timers.addOn(t, 0, 100);
    expect(k.rt.timers.pending(t)).toBe(true);
    // Softirqs that run before the tick (a NET_RX at irq exit, say) do not expire it.
    k.rt.workload = { netRx: () => {}, task: () => undefined };
    k.rt.softirqs.raise(Softirq.NetRx);
    expect(ran).toEqual([]);
    tick(k, 101);
    expect(ran).toEqual([101]);
    expect(k.rt.timers.pending(t)).toBe(false);
    tick(k, 102);
    expect(ran).toEqual([101]); // once
    expect(k.mem.cpuCounters(0).timers_run).toBe(1);
  });

  it('a timer armed for a later jiffy waits for that tick', () => {
    const k = oneThreadKernel();
    k.setJiffies(10);
    const ran: number[] = [];
    k.rt.timers.addOn(
      timer(k, false, () => ran.push(k.rt.ctx.jiffies())),
      0,
      14,
    );
    for (let j = 11; j <= 13; j++) tick(k, j);
    expect(ran).toEqual([]);
    tick(k, 14);
    expect(ran).toEqual([14]);
  });

  it('only a non-deferrable timer makes an idle CPU due for a NOHZ kick (CPU_NEXT_TIMER)', () => {
    const k = oneThreadKernel();
    k.setJiffies(50);
    const i32 = k.mem.i32;
    const d = timer(k, true, () => {});
    k.rt.timers.addOn(d, 0, 52);
    expect(Atomics.load(i32, k.rt.ctx.cw(0, CPU_NEXT_TIMER))).toBe(timerNone(50));
    expect(Atomics.load(i32, k.rt.ctx.cw(0, CPU_NEXT_TIMER_ANY))).toBe(52);
    const p = timer(k, false, () => {});
    k.rt.timers.addOn(p, 0, 53);
    expect(Atomics.load(i32, k.rt.ctx.cw(0, CPU_NEXT_TIMER))).toBe(53);
    expect(k.rt.timers.del(p)).toBe(true);
    expect(k.rt.timers.del(p)).toBe(false);
    expect(Atomics.load(i32, k.rt.ctx.cw(0, CPU_NEXT_TIMER))).toBe(timerNone(50));
  });

  it('add_timer_on of a pending timer is the kernel BUG it is', () => {
    const k = oneThreadKernel();
    const t = timer(k, false, () => {});
    k.rt.timers.addOn(t, 0, 5);
    expect(() => k.rt.timers.addOn(t, 0, 6)).toThrow(/already pending/);
  });
});
