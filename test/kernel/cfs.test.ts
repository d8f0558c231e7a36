/**
 * CFS as in 5.15 (src/kernel/sched/cfs.ts) on hand-made run queues: one thread, fake times.
 * A 2-CPU machine, so the tunables are scaled by 1 + ilog2(2) = 2: sched_latency 12 ms,
 * min_granularity 1.5 ms, wakeup_granularity 2 ms; a sleeper's credit is 12 / 2 = 6 ms.
 */
import { describe, expect, it } from 'vitest';
import { SchedPolicy, TaskState } from '../../src/hw/layout.js';
import type { CfsPolicy } from '../../src/kernel/sched/cfs.js';
import { T_STATE, T_WAKEUPS, TF_VRUNTIME } from '../../src/kernel/sched/rq.js';
import { cpu0Queue, hogAndWaker } from './helpers.js';

const MS = 1_000_000;

/** CPU 0 under CFS with task `a` (nice 0) running since 0 and charged up to `at`. */
function running(at: number) {
  const q = cpu0Queue({ sched: 'cfs', cpus: 2, hz: 1000 });
  q.run(q.a, SchedPolicy.Normal, 0, 0, 0, true);
  expect(q.schedule(0)).toBe(q.a);
  q.tick(at);
  const cfs = q.rqs.fair as CfsPolicy;
  return { ...q, cfs, vr: (t: number) => q.f64[q.rqs.tf(t, TF_VRUNTIME)] };
}

/** Make `task` a sleeping nice-`nice` task that has run before, with vruntime `v`. */
function sleeper(
  q: Pick<ReturnType<typeof cpu0Queue>, 'rqs' | 'k' | 'f64'>,
  task: number,
  nice: number,
  v: number,
): void {
  q.rqs.initTask(task, 0, SchedPolicy.Normal, nice, 0);
  q.k.mem.i32[q.rqs.tw(task, T_WAKEUPS)] = 1;
  q.f64[q.rqs.tf(task, TF_VRUNTIME)] = v;
}

describe('CFS tunables', () => {
  it('are scaled by 1 + ilog2(min(cpus, 8)); a 2-CPU machine doubles them', () => {
    const { cfs, a } = running(0);
    expect([cfs.latency, cfs.minGranularity, cfs.wakeupGranularity]).toEqual([12 * MS, 1.5 * MS, 2 * MS]);
    expect(cfs.wakeupGran(a)).toBe(2 * MS); // nice 0: calc_delta_fair leaves it as it is
  });
});

describe('CFS wakeup preemption (wakeup_preempt_entity)', () => {
  // wakeup_gran(se) = 2 ms · 1024 / w(se): 2 ms at nice 0, 0.656 ms at nice −5 (3121), 6.11 ms at nice 5 (335).
  const cases = [
    { nice: 0, lead: 2.5 * MS, preempts: true },
    { nice: 0, lead: 2 * MS, preempts: false }, // exactly the granularity: not more than it
    { nice: 0, lead: 1.5 * MS, preempts: false },
    { nice: 0, lead: 1 * MS, preempts: false },
    { nice: -5, lead: 1 * MS, preempts: true },
    { nice: -5, lead: 0.6 * MS, preempts: false },
    { nice: 5, lead: 5 * MS, preempts: false },
    { nice: 5, lead: 6 * MS, preempts: false },
  ];
  it.each(cases)(
    'a nice $nice task woken $lead ns of vruntime behind curr preempts: $preempts',
    ({ nice, lead, preempts }) => {
      const q = running(20 * MS);
      expect(q.vr(q.a)).toBe(20 * MS);
      expect(q.cfs.minVruntime(0)).toBe(20 * MS);
      sleeper(q, q.b, nice, 20 * MS - lead);
      expect(q.wake(q.b, 20 * MS)).toBe(preempts ? 2 : 1);
      expect(q.vr(q.b)).toBe(20 * MS - lead); // inside the sleeper credit: placed where it was
    },
  );

  it('the task that won wakeup preemption runs next even when another is a little further left (next buddy)', () => {
    const q = running(20 * MS);
    sleeper(q, q.c, 0, 18.5 * MS);
    expect(q.wake(q.c, 20 * MS)).toBe(1);
    q.f64[q.rqs.tf(q.c, TF_VRUNTIME)] = 17 * MS; // now the leftmost
    sleeper(q, q.b, 0, 17.5 * MS);
    expect(q.wake(q.b, 20 * MS)).toBe(2); // 2.5 ms behind curr
    expect(q.schedule(20 * MS)).toBe(q.b); // 0.5 ms right of c: within c's wakeup_gran, not unfair
  });
});

describe('CFS last buddy (LAST_BUDDY, with sched_nr_latency tasks queued)', () => {
  /** `n` normal tasks on CPU 0 besides a (curr at 20 ms): x at 19.5 ms, the rest at 21 ms; then
   *  w wakes 2.5 ms behind a, preempts, runs 0.5 ms and sleeps. Who runs next? */
  function afterPreemptAndSleep(n: number): { next: number; a: number; x: number } {
    const q = running(20 * MS);
    const spare = q.k.mem.plan.tasks.filter((t) => t.kind !== 'idle' && t.id !== q.a).map((t) => t.id);
    const [w, x, ...rest] = spare;
    sleeper(q, x, 0, 19.5 * MS);
    expect(q.wake(x, 20 * MS)).toBe(1);
    for (const t of rest.slice(0, n - 2)) {
      sleeper(q, t, 0, 21 * MS);
      expect(q.wake(t, 20 * MS)).toBe(1);
    }
    sleeper(q, w, 0, 17.5 * MS);
    expect(q.wake(w, 20 * MS)).toBe(2);
    expect(q.schedule(20 * MS)).toBe(w);
    q.rqs.lock(0);
    q.rqs.updateCurr(0, 20.5 * MS);
    Atomics.store(q.k.mem.i32, q.rqs.tw(w, T_STATE), TaskState.Sleeping);
    q.rqs.unlock(0);
    return { next: q.schedule(20.5 * MS), a: q.a, x };
  }

  it('with 8 tasks queued at the wakeup, the preempted task gets the CPU back over a slightly-left one', () => {
    const { next, a } = afterPreemptAndSleep(7); // a, x, 5 more, and w: 8
    expect(next).toBe(a);
  });

  it('with fewer, the leftmost runs', () => {
    const { next, x } = afterPreemptAndSleep(4);
    expect(next).toBe(x);
  });
});

describe('CFS placement (place_entity)', () => {
  it('a long sleeper is placed at min_vruntime − sched_latency / 2, not further back', () => {
    const q = running(100 * MS);
    sleeper(q, q.b, 0, 0);
    expect(q.wake(q.b, 100 * MS)).toBe(2); // 6 ms behind: more than the 2 ms granularity
    expect(q.vr(q.b)).toBe(94 * MS);
    expect(q.cfs.minVruntime(0)).toBe(100 * MS);
  });

  it('the credit is in virtual time, the same for any weight', () => {
    const q = running(100 * MS);
    sleeper(q, q.b, -20, 0);
    q.wake(q.b, 100 * MS);
    expect(q.vr(q.b)).toBe(94 * MS);
  });

  it('a short sleeper keeps its vruntime (never placed forward of it)', () => {
    const q = running(100 * MS);
    sleeper(q, q.b, 0, 97 * MS);
    expect(q.wake(q.b, 100 * MS)).toBe(2);
    expect(q.vr(q.b)).toBe(97 * MS);
  });

  it('a new task starts one vslice after min_vruntime (START_DEBIT) and does not preempt', () => {
    const q = running(100 * MS);
    q.rqs.initTask(q.c, 0, SchedPolicy.Normal, 0, 0); // never woken: its first enqueue is its fork
    expect(q.wake(q.c, 100 * MS)).toBe(1);
    // sched_vslice with c counted: period 12 ms · 1024 / (1024 + 1024) = 6 ms.
    expect(q.vr(q.c)).toBe(106 * MS);
  });

  it('a sleeper moved to another CPU keeps its place relative to min_vruntime', () => {
    const q = running(100 * MS);
    sleeper(q, q.b, 0, 99 * MS); // 1 ms behind CPU 0's min_vruntime
    q.rqs.lock(0);
    q.rqs.setTaskCpu(q.b, 1);
    q.rqs.unlock(0);
    q.rqs.lock(1);
    expect(q.rqs.wakeLocked(1, q.b, 100 * MS)).toBe(2); // CPU 1 is idle
    q.rqs.unlock(1);
    expect(q.cfs.minVruntime(1)).toBe(0);
    expect(q.vr(q.b)).toBe(-1 * MS);
  });
});

describe('CFS tick preemption (check_preempt_tick)', () => {
  it('reschedules once the task ran longer than its ideal runtime (sched_slice)', () => {
    const q = running(0);
    sleeper(q, q.b, 0, 0);
    expect(q.wake(q.b, 0)).toBe(1); // level with curr
    // Two nice-0 tasks: sched_slice = 12 ms · 1024 / 2048 = 6 ms.
    expect(q.cfs.slice(0, q.a, true)).toBe(6 * MS);
    for (let t = 1; t <= 6; t++) expect(q.tick(t * MS), `tick at ${t} ms`).toBe(false);
    expect(q.tick(7 * MS)).toBe(true);
    expect(q.schedule(7 * MS)).toBe(q.b);
  });

  it('past min_granularity, reschedules when curr leads the leftmost by more than the slice', () => {
    const q = running(0);
    sleeper(q, q.b, 0, 0);
    q.wake(q.b, 0);
    q.f64[q.rqs.tf(q.b, TF_VRUNTIME)] = -7 * MS; // by hand: 7 ms left of curr
    expect(q.tick(1 * MS)).toBe(false); // ran 1 ms < min_granularity 1.5 ms
    expect(q.tick(2 * MS)).toBe(true); // 9 ms lead > 6 ms ideal runtime
  });
});

describe('tick share by weight, both policies (a loop of ticks, no threads)', () => {
  /** Ticks at HZ 1000 for `n` ms with a nice-`na` task and a nice-`nb` task always runnable on CPU 0. */
  function share(sched: 'eevdf' | 'cfs', na: number, nb: number, n: number): [number, number] {
    const q = cpu0Queue({ sched, cpus: 2, hz: 1000 });
    q.run(q.a, SchedPolicy.Normal, na, 0, 0, true);
    q.run(q.b, SchedPolicy.Normal, nb, 0, 0, true);
    q.schedule(0);
    for (let t = 1; t <= n; t++) if (q.tick(t * MS)) q.schedule(t * MS);
    return [q.rqs.ticks(q.a), q.rqs.ticks(q.b)];
  }

  it.each(['eevdf', 'cfs'] as const)('%s: nice −20 against nice 0 is about 88761 : 1024 (≈87)', (sched) => {
    const [hog, nice0] = share(sched, -20, 0, 20_000);
    expect(hog + nice0).toBe(20_000);
    const ratio = hog / nice0;
    expect(ratio, `${hog} : ${nice0}`).toBeGreaterThan(75);
    expect(ratio, `${hog} : ${nice0}`).toBeLessThan(100);
  });

  it.each(['eevdf', 'cfs'] as const)('%s: two nice 0 tasks split evenly', (sched) => {
    const [a, b] = share(sched, 0, 0, 1_000);
    expect(Math.abs(a - b), `${a} : ${b}`).toBeLessThanOrEqual(10);
  });
});

describe('seed 004 on CFS (5.15): a nice −20 hog and a nice-0 task woken beside it (issue 24)', () => {
  // Worked by hand from fair.c (5.15): update_curr() advances the hog's vruntime by
  // delta · 1024 / 88761 (11.5 µs a ms); place_entity(cfs_rq, se, 0) puts a waking task at
  // max(se->vruntime, min_vruntime − sysctl_sched_latency / 2) (GENTLE_FAIR_SLEEPERS: 6 ms on 2
  // CPUs); check_preempt_wakeup() preempts when wakeup_preempt_entity(curr, se) == 1, i.e.
  // curr->vruntime − se->vruntime > wakeup_gran(se) (2 ms at nice 0 on 2 CPUs).
  it('a task that slept while the hog ran is placed 6 ms behind min_vruntime and preempts the hog at once', () => {
    const q = cpu0Queue({ sched: 'cfs', cpus: 2, hz: 1000 });
    const { rqs, f64, a: hog, b: waker } = q;
    const cfs = rqs.fair as CfsPolicy;
    q.run(hog, SchedPolicy.Normal, -20, 0, 0, true);
    expect(q.schedule(0)).toBe(hog);
    q.tick(1000 * MS); // a second of the hog alone: min_vruntime 11.54 ms
    expect(cfs.minVruntime(0)).toBeCloseTo((1000 * MS * 1024) / 88761, 3);
    sleeper(q, waker, 0, 0); // asleep since vruntime 0
    expect(q.wake(waker, 1000 * MS)).toBe(2);
    expect(f64[rqs.tf(waker, TF_VRUNTIME)]).toBeCloseTo(cfs.minVruntime(0) - 6 * MS, 3);
    expect(q.schedule(1000 * MS)).toBe(waker);
  });

  /** Every 5 ms the waker runs 20 µs (seed 004's driver work): 300 cycles at HZ 1000. */
  const cycles = (handoffNs: number) =>
    hogAndWaker({ sched: 'cfs', hz: 1000, handoffNs, periodNs: 5 * MS, workNs: 20_000, cycles: 300 }).slice(100);

  it('in steady state every wake-up preempts the hog: 20 µs of work a period keeps the task behind', () => {
    const c = cycles(0);
    expect(c.filter((x) => x.woke !== 2)).toEqual([]);
    expect(Math.max(...c.map((x) => x.waitNs))).toBe(0);
  });

  it("the same when each context switch's thread takes the CPU 300 µs after the pick (the lab's host hand-off)", () => {
    // Before the fix the task was charged 320 µs a run, more than the hog's 57.7 µs of vruntime
    // a period: it drifted ahead of min_vruntime, never preempted, and waited ~25 ms.
    const c = cycles(300_000);
    expect(c.filter((x) => x.woke !== 2)).toEqual([]);
    expect(Math.max(...c.map((x) => x.waitNs))).toBe(0);
  });
});
