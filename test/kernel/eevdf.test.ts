/**
 * EEVDF's constants as the kernel computes them (fair.c, 6.6+): the base slice scaled by the CPU
 * count, and the lag saved at dequeue clamped to calc_delta_fair(max(2 · slice, TICK_NSEC), se).
 * One thread, hand-made queues, fake times.
 */
import { describe, expect, it } from 'vitest';
import { SchedPolicy } from '../../src/hw/layout.js';
import type { EevdfPolicy } from '../../src/kernel/sched/eevdf.js';
import { sysctlFactor, tickNsec } from '../../src/kernel/sched/fair.js';
import { TF_DEADLINE, TF_VLAG, TF_VRUNTIME } from '../../src/kernel/sched/rq.js';
import { cpu0Queue } from './helpers.js';

describe('tunable scaling (get_update_sysctl_factor, SCHED_TUNABLESCALING_LOG)', () => {
  it('is 1 + ilog2(min(cpus, 8))', () => {
    const f = [1, 2, 3, 4, 7, 8, 64].map(sysctlFactor);
    expect(f).toEqual([1, 2, 2, 3, 3, 4, 4]);
  });

  it('TICK_NSEC is (NSEC_PER_SEC + HZ/2) / HZ', () => {
    expect([100, 250, 300, 1000].map(tickNsec)).toEqual([10_000_000, 4_000_000, 3_333_333, 1_000_000]);
  });

  it("EEVDF's base slice is 0.75 ms times the factor: 1.5 ms on 2 CPUs, 3 ms on 8", () => {
    for (const [cpus, slice] of [
      [1, 750_000],
      [2, 1_500_000],
      [8, 3_000_000],
    ]) {
      const q = cpu0Queue({ cpus });
      expect((q.rqs.fair as EevdfPolicy).slice).toBe(slice);
      // A task placed on an empty queue gets deadline = vruntime + slice · 1024 / w.
      q.run(q.a, SchedPolicy.Normal, 0);
      expect(q.f64[q.rqs.tf(q.a, TF_DEADLINE)] - q.f64[q.rqs.tf(q.a, TF_VRUNTIME)]).toBe(slice);
    }
  });
});

describe('EEVDF lag clamp (update_entity_lag)', () => {
  // On 2 CPUs the slice is 1.5 ms, so 2 · slice = 3 ms: below TICK_NSEC at HZ 250 (4 ms), above it at 1000 (1 ms).
  const cases = [
    { hz: 250, nice: -20, limit: (4_000_000 * 1024) / 88761 },
    { hz: 250, nice: 0, limit: 4_000_000 },
    { hz: 1000, nice: -20, limit: (3_000_000 * 1024) / 88761 },
    { hz: 1000, nice: 0, limit: 3_000_000 },
  ];
  it.each(cases)('HZ $hz, nice $nice: |vlag| ≤ $limit ns of virtual time', ({ hz, nice, limit }) => {
    const { rqs, run, f64, a, b, c } = cpu0Queue({ cpus: 2, hz });
    run(a, SchedPolicy.Normal, nice);
    run(b, SchedPolicy.Normal, nice);
    run(c, SchedPolicy.Normal, 0);
    // a far behind the average (owed a second of service), b far ahead of it.
    f64[rqs.tf(a, TF_VRUNTIME)] = 0;
    f64[rqs.tf(b, TF_VRUNTIME)] = 2e9;
    f64[rqs.tf(c, TF_VRUNTIME)] = 1e9;
    rqs.lock(0);
    rqs.dequeue(0, a);
    rqs.dequeue(0, b);
    rqs.unlock(0);
    expect(f64[rqs.tf(a, TF_VLAG)]).toBeCloseTo(limit, 6);
    expect(f64[rqs.tf(b, TF_VLAG)]).toBeCloseTo(-limit, 6);
  });

  it('a lag inside the limit is kept as it is', () => {
    const { rqs, run, f64, a, b } = cpu0Queue({ cpus: 2, hz: 250 });
    run(a);
    run(b);
    f64[rqs.tf(a, TF_VRUNTIME)] = 10_000_000;
    f64[rqs.tf(b, TF_VRUNTIME)] = 12_000_000; // V = 11 ms: a's lag +1 ms, inside ±4 ms
    rqs.lock(0);
    rqs.dequeue(0, a);
    rqs.unlock(0);
    expect(f64[rqs.tf(a, TF_VLAG)]).toBe(1_000_000);
  });
});

describe('EEVDF RUN_TO_PARITY', () => {
  it('a woken task with an earlier deadline waits while curr is eligible and within the slice it was picked with', () => {
    const MS = 1_000_000;
    const { run, schedule, tick, a, b } = cpu0Queue({ cpus: 2, hz: 1000 }); // slice 1.5 ms
    run(a, SchedPolicy.Normal, 0, 0, 0, true);
    expect(schedule(0)).toBe(a);
    expect(tick(0.5 * MS)).toBe(false);
    // b (nice −20) is placed at V = a's vruntime: a is still eligible, b's deadline is 17 µs away, a's 1 ms.
    expect(run(b, SchedPolicy.Normal, -20, 0, 0.5 * MS, true)).toBe(1);
    expect(tick(1 * MS)).toBe(false);
    expect(tick(2 * MS)).toBe(true); // a passed its deadline: a new slice, and the parity is over
    expect(schedule(2 * MS)).toBe(b);
  });
});
