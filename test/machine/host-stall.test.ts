/**
 * Host stalls (src/machine/host-stall.ts) on one thread with a fake clock and a fake
 * /proc/thread-self reader: what a gap between preemption points records, and the steal charge
 * worked by hand from update_rq_clock_task() (kernel/sched/core.c, CONFIG_PARAVIRT_TIME_ACCOUNTING:
 * `delta -= steal; rq->clock_task += delta`, so update_curr()'s delta_exec leaves the steal out).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CPU_COUNTERS, CPUF_STALL_END, CpuCounter, SchedPolicy } from '../../src/hw/layout.js';
import { St } from '../../src/hw/trace.js';
import { TF_SUM_EXEC, TF_VRUNTIME } from '../../src/kernel/sched/rq.js';
import { type HostStallOptions, HostStalls, type SchedStatsReader, StallMode } from '../../src/machine/host-stall.js';
import { cpu0Queue, hogAndWaker } from '../kernel/helpers.js';
import { drain, fixture, Machine, options, runUntil } from './helpers.js';

const US = 1000;
const MS = 1_000_000;

/** A /proc reader whose run_delay and involuntary switches the test sets. */
function fakeStats(): SchedStatsReader & { present: boolean } {
  return {
    present: true,
    runDelayNs: 0,
    nvcsw: 0,
    read() {
      return this.present;
    },
    close() {},
  };
}

/** CPU 0 with nice-0 task `a` running since t = 1 ms, and a detector over a fake reader. */
function setup(opts: HostStallOptions = {}) {
  const q = cpu0Queue({ sched: 'eevdf' });
  const stats = fakeStats();
  q.run(q.a, SchedPolicy.Normal, 0, 0, 0, true);
  q.schedule(1 * MS); // a's thread takes CPU 0 at 1 ms: its clock starts there
  const rt = q.k.rt;
  const det = new HostStalls(rt.ctx, opts, (c, f, t) => rt.sched.chargeSteal(c, f, t), 0, stats, undefined);
  const counter = (name: keyof typeof CpuCounter) => q.k.mem.i32[rt.ctx.cw(0, CPU_COUNTERS) + CpuCounter[name]];
  /** update_curr() at `now` (as a tick or a wake-up does), under the lock. */
  const charge = (now: number) => {
    q.rqs.lock(0);
    q.rqs.updateCurr(0, now);
    q.rqs.unlock(0);
  };
  return { q, rt, det, stats, counter, charge };
}

describe('a gap between two preemption points', () => {
  it('below the threshold is nothing; above it is a host stall with its cross-check, the CPU stall end and the counters', () => {
    const { q, rt, det, stats, counter } = setup({ steal: true });
    det.arm(1 * MS);
    det.at(1 * MS + 150 * US); // 150 µs: below the 200 µs default
    expect(counter('host_stalls')).toBe(0);
    stats.runDelayNs = 3.5 * MS;
    stats.nvcsw = 2;
    q.k.clock.ns = 5.15 * MS; // the detector re-reads the clock after its look
    det.at(5.15 * MS); // a 4 ms gap: the host held the thread 3.5 ms of it
    expect(counter('host_stalls')).toBe(1);
    expect(counter('host_stall_us')).toBe(4000);
    expect(counter('host_stalls_preempted')).toBe(1);
    expect(counter('host_steal_us')).toBe(3500);
    expect(rt.ctx.f64[rt.ctx.cf(0, CPUF_STALL_END)]).toBe(5.15 * MS);
  });

  it('is not a stall when the thread was disarmed (it halted or handed the CPU over) in between', () => {
    const { det, counter } = setup();
    det.arm(1 * MS);
    det.disarm();
    det.at(50 * MS); // re-arms
    det.at(50 * MS + 10 * US);
    expect(counter('host_stalls')).toBe(0);
  });

  it('without /proc it is still recorded, with the involuntary switches unknown and no steal charged', () => {
    const { q, det, stats, counter } = setup({ steal: true });
    stats.present = false;
    det.arm(1 * MS);
    q.k.clock.ns = 5 * MS;
    det.at(5 * MS);
    expect(counter('host_stalls')).toBe(1);
    expect(counter('host_stalls_preempted')).toBe(0);
    expect(counter('host_steal_us')).toBe(0);
  });
});

describe('steal over a host stall (update_rq_clock_task, paravirt steal)', () => {
  // Worked by hand: a (nice 0, weight 1024) runs from 1 ms. Its thread passes preemption points at
  // 1.0 and 1.1 ms, then not until 5.1 ms: the host kept it off the host CPU 3.5 ms of that gap.
  // At 6 ms update_curr() charges it 6 − 1 − 3.5 = 1.5 ms of run time, and its vruntime moves
  // 1.5 ms · 1024 / 1024; the kernel's clock_task would have advanced 5 ms − 3.5 ms of steal.
  const worked = (steal: boolean) => {
    const { q, det, stats, charge, counter } = setup({ steal });
    const v0 = q.f64[q.rqs.tf(q.a, TF_VRUNTIME)];
    const s0 = q.f64[q.rqs.tf(q.a, TF_SUM_EXEC)];
    det.arm(1 * MS);
    det.at(1.1 * MS);
    stats.runDelayNs = 3.5 * MS;
    stats.nvcsw = 1;
    q.k.clock.ns = 5.1 * MS;
    det.at(5.1 * MS);
    charge(6 * MS);
    return {
      ran: q.f64[q.rqs.tf(q.a, TF_SUM_EXEC)] - s0,
      dv: q.f64[q.rqs.tf(q.a, TF_VRUNTIME)] - v0,
      counted: counter('host_steal_us'),
    };
  };

  it('with --host-steal is not charged to the running task: 1.5 ms of run time and of vruntime, not 5 ms', () => {
    const r = worked(true);
    expect(r.ran).toBeCloseTo(1.5 * MS, 3);
    expect(r.dv).toBeCloseTo(1.5 * MS, 3);
  });

  it("is charged without --host-steal (the default: the host's time is the task's), and still counted", () => {
    const r = worked(false);
    expect(r.ran).toBeCloseTo(5 * MS, 3);
    expect(r.counted).toBe(3500);
  });

  it('is charged at most once: a wake-up that charged the task inside the gap keeps what it charged', () => {
    const { q, det, stats, charge } = setup({ steal: true });
    const s0 = q.f64[q.rqs.tf(q.a, TF_SUM_EXEC)];
    det.arm(1 * MS);
    charge(3 * MS); // a remote wake-up at 3 ms charged 2 ms (the lab cannot know the host's steal then)
    stats.runDelayNs = 3.5 * MS; // steal: the last 3.5 ms of the gap, [1.6, 5.1] ms
    q.k.clock.ns = 5.1 * MS;
    det.at(5.1 * MS);
    charge(6 * MS);
    // 2 ms by 3 ms, then [3, 5.1] is skipped, then 0.9 ms.
    expect(q.f64[q.rqs.tf(q.a, TF_SUM_EXEC)] - s0).toBeCloseTo(2.9 * MS, 3);
  });
});

describe('--host-stalls: a sample that overlapped a stall (CpuContext.recordSample)', () => {
  const sample = (mode: StallMode, startedAt: number) => {
    const { q, rt, det } = setup({ mode: (['keep', 'mark', 'drop'] as const)[mode] });
    rt.ctx.stallMode = mode;
    rt.ctx.tracer.on = true;
    const rec: number[] = [];
    rt.ctx.tracer.record = (s: St) => void rec.push(s);
    det.arm(1 * MS);
    q.k.clock.ns = 5 * MS;
    det.at(5 * MS); // a stall on CPU 0 ending at 5 ms
    rec.length = 0;
    rt.ctx.recordSample(St.OneWay, St.OneWayHost, 100 * US, startedAt, 1, 0);
    return { rec, n: q.k.mem.i32[rt.ctx.cw(0, CPU_COUNTERS) + CpuCounter.samples_host_stalled] };
  };

  it('started before the stall ended: counted, and kept, marked or dropped as the mode says', () => {
    expect(sample(StallMode.Keep, 4 * MS)).toEqual({ rec: [St.OneWay], n: 1 });
    expect(sample(StallMode.Mark, 4 * MS)).toEqual({ rec: [St.OneWayHost, St.OneWay], n: 1 });
    expect(sample(StallMode.Drop, 4 * MS)).toEqual({ rec: [St.OneWayHost], n: 1 });
  });

  it('started after it: not counted, recorded as usual in every mode', () => {
    for (const m of [StallMode.Keep, StallMode.Mark, StallMode.Drop])
      expect(sample(m, 6 * MS)).toEqual({ rec: [St.OneWay], n: 0 });
  });
});

describe('in a running machine (real threads)', () => {
  let m: Machine | undefined;
  afterEach(async () => {
    await m?.stop();
    m = undefined;
  });

  it('a 2 ms gap between preemption points (a hand-off that spins) is a host stall on its CPU, with its time', async () => {
    m = await Machine.boot(
      options({ strategies: [fixture('spins.ts')], irq: { rate: 500, pattern: 'constant', burstSize: 1, cpus: [0] } }),
    );
    m.setActiveStrategy(0);
    const machine = m;
    await runUntil(m, '3 spinning hand-offs on CPU 0', () => machine.cpuCounters(0).handoffs >= 3);
    await drain(m); // every hand-off's gap ends at a preemption point before the CPU goes idle
    const c = m.cpuCounters(0);
    // Each spinning hand-off holds the CPU 2 ms with no preemption point in it. Hand-offs that run
    // back to back (an interrupt raised while the previous one spun is taken on the same irq exit)
    // are one gap, so stalls may be fewer than hand-offs (CI: 4 stalls for 5 hand-offs); their time
    // is not: at least 2 ms a hand-off. The host may add stalls of its own.
    expect(c.host_stalls).toBeGreaterThanOrEqual(1);
    expect(c.host_stall_us).toBeGreaterThanOrEqual(2000 * c.handoffs - c.handoffs);
    expect(m.cpuCounters(1).handoffs).toBe(0); // no interrupts there, no spins
  }, 60_000);

  it('detection off (threshold +∞) records none', async () => {
    m = await Machine.boot(
      options({
        strategies: [fixture('spins.ts')],
        irq: { rate: 500, pattern: 'constant', burstSize: 1, cpus: [0] },
        hostStalls: { thresholdNs: Number.POSITIVE_INFINITY },
      }),
    );
    m.setActiveStrategy(0);
    const machine = m;
    await runUntil(m, '3 spinning hand-offs', () => machine.cpuCounters(0).handoffs >= 3);
    expect(m.cpuCounters(0).host_stalls).toBe(0);
  }, 60_000);
});

describe("seed 004 on EEVDF with the host holding the kworker's thread (issue 24's remainder)", () => {
  // A nice-0 task woken every 5 ms beside a nice −20 hog on CPU 0 runs 20 µs, and the host holds
  // its thread 300 µs inside each run. Charged to it, each run costs it 320 µs of lag, and the hog
  // (88761 : 1024) must catch up 87 × that in virtual time before the task is eligible again: it
  // waits ~27 ms every period. As steal, its run is 20 µs and it waits at most ~3 ms, as with no
  // stall (test/kernel/eevdf.test.ts, "in steady state").
  const waits = (steal: boolean) =>
    hogAndWaker({
      sched: 'eevdf',
      hz: 1000,
      handoffNs: 0,
      periodNs: 5 * MS,
      workNs: 20 * US,
      cycles: 300,
      stallNs: 300 * US,
      steal,
    })
      .slice(100)
      .map((c) => c.waitNs);

  it('charged as its run time, the woken task waits ~27 ms every period', () => {
    expect(Math.min(...waits(false))).toBeGreaterThan(10 * MS);
  });

  it('charged as steal, it waits at most ~3 ms', () => {
    expect(Math.max(...waits(true))).toBeLessThanOrEqual(3 * MS);
  });
});
