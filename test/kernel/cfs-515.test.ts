/**
 * The 5.15 profile as seed 000 ran it (issue 26 item 4), on one thread with fake times:
 * CFS's tunables scaled by the emulated machine's CPUs, and check_preempt_wakeup's early return
 * when the CPU already has NEED_RESCHED (kernel/sched/fair.c, 5.15:
 * `if (test_tsk_need_resched(curr)) return;`).
 */
import { describe, expect, it } from 'vitest';
import { CPU_FLAGS, CpuFlag, SchedPolicy } from '../../src/hw/layout.js';
import type { CfsPolicy } from '../../src/kernel/sched/cfs.js';
import { RQ_NEXT_BUDDY, T_WAKEUPS, TF_VRUNTIME } from '../../src/kernel/sched/rq.js';
import { cpu0Queue } from './helpers.js';

const MS = 1_000_000;

describe('CFS tunables follow the emulated machine (get_update_sysctl_factor, SCHED_TUNABLESCALING_LOG)', () => {
  it.each([
    { cpus: 1, factor: 1 },
    { cpus: 4, factor: 3 },
    { cpus: 16, factor: 4 }, // seed 000's X7: min(16, 8) = 8, 1 + ilog2(8) = 4
  ])('$cpus CPUs: sched_latency, min_granularity, wakeup_granularity × $factor', ({ cpus, factor }) => {
    const q = cpu0Queue({ sched: 'cfs', cpus, hz: 1000 });
    const cfs = q.rqs.fair as CfsPolicy;
    expect([cfs.latency, cfs.minGranularity, cfs.wakeupGranularity]).toEqual([
      6 * MS * factor,
      0.75 * MS * factor,
      1 * MS * factor,
    ]);
  });
});

describe("check_preempt_wakeup's early return when NEED_RESCHED is already set", () => {
  /** CPU 0 (2 CPUs, CFS): task a running with 20 ms of vruntime; b and c sleep far behind it. */
  function setup() {
    const q = cpu0Queue({ sched: 'cfs', cpus: 2, hz: 1000 });
    q.run(q.a, SchedPolicy.Normal, 0, 0, 0, true);
    expect(q.schedule(0)).toBe(q.a);
    q.tick(20 * MS);
    for (const [t, v] of [
      [q.b, 17 * MS],
      [q.c, 16 * MS],
    ]) {
      q.rqs.initTask(t, 0, SchedPolicy.Normal, 0, 0);
      q.k.mem.i32[q.rqs.tw(t, T_WAKEUPS)] = 1;
      q.f64[q.rqs.tf(t, TF_VRUNTIME)] = v;
    }
    const flags = q.k.rt.ctx.cw(0, CPU_FLAGS);
    const nextBuddy = () => q.k.mem.i32[q.rqs.rq(0) + RQ_NEXT_BUDDY];
    const preemptions = () => q.k.mem.cpuCounters(0).wakeup_preemptions;
    return { q, flags, nextBuddy, preemptions };
  }

  it('the first wakeup preempts and becomes the next buddy; a second one, with NEED_RESCHED set, changes nothing', () => {
    const { q, flags, nextBuddy, preemptions } = setup();
    expect(q.k.rt.sched.wakeUp(q.b)).toBe(true);
    expect(Atomics.load(q.k.mem.i32, flags) & CpuFlag.NeedResched).toBe(CpuFlag.NeedResched);
    expect(nextBuddy()).toBe(q.b);
    expect(preemptions()).toBe(1);
    // c is 4 ms behind a (more than wakeup_gran, 2 ms): it would preempt and become the buddy.
    expect(q.k.rt.sched.wakeUp(q.c)).toBe(true);
    expect(nextBuddy()).toBe(q.b);
    expect(preemptions()).toBe(1);
  });

  it('without NEED_RESCHED set, the same second wakeup preempts (the rule is the flag, not the order)', () => {
    const { q, flags, nextBuddy, preemptions } = setup();
    expect(q.k.rt.sched.wakeUp(q.b)).toBe(true);
    Atomics.and(q.k.mem.i32, flags, ~CpuFlag.NeedResched); // as if the CPU had rescheduled already
    expect(q.k.rt.sched.wakeUp(q.c)).toBe(true);
    expect(nextBuddy()).toBe(q.c);
    expect(preemptions()).toBe(2);
  });

  it('the run queues answer 1 (woken, no preemption) when told the flag is set', () => {
    const { q } = setup();
    q.rqs.lock(0);
    try {
      expect(q.rqs.wakeLocked(0, q.c, 20 * MS, true)).toBe(1);
    } finally {
      q.rqs.unlock(0);
    }
  });
});
