/**
 * Task hosting: with `kthreads: 'cpu'` the bound kworkers and ksoftirqd run on their CPU's
 * thread (a same-thread switch) instead of threads of their own, and so do the unbound workers
 * (worker i on CPU i mod N). Work handed to a hosted kworker still runs exactly once, in task context. With `hogs:
 * 'cpu'` a hog runs on its CPU's thread too, and still yields the CPU to the work queued beside it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { planMachineTasks } from '../../src/machine/plan.js';
import { builtin, drain, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

describe('kthread hosting', () => {
  it("puts kworker/n and ksoftirqd/n on CPU n's thread with kthreads cpu, and on threads of their own by default", () => {
    for (const hosting of ['cpu', 'thread'] as const) {
      const plan = planMachineTasks(options({ cpus: 3, kthreads: hosting, unboundWorkers: 3 }));
      for (let c = 0; c < 3; c++) {
        for (const id of [plan.kworker[c], plan.kworkerHi[c], plan.ksoftirqd[c]]) {
          const t = plan.tasks[id];
          if (hosting === 'cpu') expect(t.thread, t.name).toBe(c);
          else expect(plan.threads[t.thread].kind, t.name).toBe('kthread');
        }
      }
      // Unbound worker i: on CPU i mod 3's thread, and staying there, or a thread of its own.
      const unbound = plan.pools[plan.unboundPool].workers;
      expect(unbound.length).toBe(3);
      unbound.forEach((id, i) => {
        const t = plan.tasks[id];
        if (hosting === 'cpu') expect([t.thread, t.cpu, t.bound], t.name).toEqual([i % 3, i % 3, true]);
        else expect([plan.threads[t.thread].kind, t.bound], t.name).toEqual(['kthread', false]);
      });
    }
    const hosted = planMachineTasks(options({ cpus: 3, kthreads: 'cpu', unboundWorkers: 3 }));
    const threaded = planMachineTasks(options({ cpus: 3, kthreads: 'thread', unboundWorkers: 3 }));
    expect(threaded.threads.length - hosted.threads.length).toBe(12);
  });

  // Hosted unbound workers cannot move: the waker wakes one hosted on the CPU it chose, or, where
  // none is hosted, a sleeping one elsewhere (workqueue.ts, kickUnbound). Fewer workers than CPUs
  // and more: every item runs once, and only on CPUs that host a worker.
  for (const workers of [1, 5]) {
    it(`runs every unbound hand-off once with ${workers} hosted unbound worker(s) on 3 CPUs, each where it is hosted`, async () => {
      m = await Machine.boot(
        options({
          cpus: 3,
          kthreads: 'cpu',
          unboundWorkers: workers,
          irq: { rate: 5000, pattern: 'poisson', burstSize: 2, cpus: [0, 1, 2] },
          strategies: [builtin('unbound', { scope: 'system' })],
        }),
      );
      const machine = m;
      await runUntil(m, '300 unbound work items run', () => {
        machine.onlineCpus(); // a mix run on another CPU's behalf is refused and leaves MIX_INFLIGHT set
        return machine.counters().works_run >= 300;
      });
      await drain(m);
      const c = m.counters();
      expect(c.works_run).toBe(c.works_queued);
      expect(c.mixes_duplicate).toBe(0);
      expect(c.mixes_task).toBe(c.mixes);
      const ranOn = [0, 1, 2].map((cpu) => m!.cpuCounters(cpu).works_run);
      if (workers === 1) expect(ranOn.slice(1), 'CPUs 1 and 2 host no unbound worker').toEqual([0, 0]);
      else expect(ranOn.filter((n) => n > 0).length, `work ran on ${ranOn}`).toBeGreaterThan(1);
    });
  }

  it('runs every workqueue hand-off once, in a kworker hosted on the CPU thread', async () => {
    m = await Machine.boot(
      options({
        kthreads: 'cpu',
        irq: { rate: 4000, pattern: 'poisson', burstSize: 1, cpus: [0, 1] },
        strategies: [builtin('workqueue')],
      }),
    );
    const machine = m;
    await runUntil(m, '20 work items run', () => machine.counters().works_run >= 20);
    await drain(m);
    const c = m.counters();
    expect(c.handoffs).toBeGreaterThan(0);
    expect(c.mixes).toBe(c.handoffs);
    expect(c.mixes_task).toBe(c.mixes);
    expect(c.kthread_switches).toBeGreaterThan(0);
    expect(c.mixes_duplicate).toBe(0);
  });

  it("puts a hog on its CPU's thread with hogs cpu (the default), and on a thread of its own with hogs thread", () => {
    const hog = { kind: 'hog', cpu: 1, policy: 'normal', nice: 0, rtPrio: 0 } as const;
    for (const hosting of ['cpu', 'thread', undefined] as const) {
      const plan = planMachineTasks(
        options({ cpus: 2, ...(hosting ? { hogs: hosting } : {}), workload: { kind: 'custom', tasks: [hog] } }),
      );
      const t = plan.tasks.find((x) => x.name === 'hog/1');
      expect(t, 'the hog is planned').toBeDefined();
      if (hosting !== 'thread') expect(t!.thread).toBe(1);
      else expect(plan.threads[t!.thread].kind).toBe('kthread');
    }
  });

  it('a hog hosted on the CPU thread runs, and the kworker beside it still runs every item once', async () => {
    m = await Machine.boot(
      options({
        cpus: 2,
        hogs: 'cpu',
        idle: { policy: 'halt', maxPollNs: 0 },
        irq: { rate: 1000, pattern: 'constant', burstSize: 1, cpus: [0] },
        workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, policy: 'normal', nice: 0, rtPrio: 0 }] },
        payload: { kind: 'driver_work', workNs: 20_000 },
        strategies: [builtin('workqueue', { wq: 'system' })],
      }),
    );
    m.setActiveStrategy(0);
    const machine = m;
    const hog = m.plan.tasks.find((t) => t.name === 'hog/0')!;
    expect(hog.thread).toBe(0);
    await runUntil(m, '40 work items run', () => machine.counters().works_run >= 40);
    await runUntil(m, 'the hog charged CPU time', () => machine.sumExec(hog.id) > 0);
    await drain(m);
    const c = m.counters();
    expect(c.works_run).toBe(c.works_queued);
    expect(c.mixes_duplicate).toBe(0);
    expect(c.kthread_switches).toBeGreaterThan(0);
  }, 120_000);
});
