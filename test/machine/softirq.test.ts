/** __do_softirq's budget: work beyond 2 ms / 10 restarts goes to ksoftirqd/n, which runs it. */
import { afterEach, expect, it } from 'vitest';
import { drain, fixture, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

it('softirq work beyond the budget is handed to ksoftirqd/n and still runs once', async () => {
  m = await Machine.boot(
    options({
      irq: { rate: 2000, pattern: 'constant', burstSize: 8, cpus: [0] },
      fastPool: { trigger: 64, variant: '64' },
      strategies: [fixture('tasklet-chain.ts')],
    }),
  );
  const machine = m;
  await runUntil(m, 'work left to ksoftirqd/0', () => machine.cpuCounters(0).ksoftirqd_wakeups > 0);
  await drain(m);
  const c0 = m.cpuCounters(0);
  expect(c0.handoffs).toBeGreaterThan(0);
  expect(c0.ksoftirqd_wakeups, JSON.stringify(c0)).toBeGreaterThan(0);
  const ksoftirqd = m.plan.tasks.find((t) => t.name === 'ksoftirqd/0')!;
  expect(m.slices(ksoftirqd.id)).toBeGreaterThan(0);
  const all = m.counters();
  expect(all.mixes).toBe(all.handoffs);
  expect(all.mixes_duplicate).toBe(0);
});
