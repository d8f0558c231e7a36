/**
 * Counters that explain a strategy's cost or flag its mistakes: kthread_switches (switches into
 * a kworker, an unbound worker or ksoftirqd) and handoffs_lost (a hand-off refused while nothing
 * was pending: the job never runs and random.c's fast pool stays in flight).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { builtin, drain, fixture, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

describe('kthread_switches and handoffs_lost', () => {
  it('a workqueue hand-off switches into a kworker; nothing is lost', async () => {
    m = await Machine.boot(options({ strategies: [builtin('workqueue')] }));
    m.setActiveStrategy(0);
    const machine = m;
    await runUntil(m, '20 work items run', () => machine.counters().works_run >= 20);
    await drain(m);
    const c = m.counters();
    expect(c.works_run).toBeGreaterThan(0);
    expect(c.kthread_switches).toBeGreaterThan(0);
    expect(c.kthread_switches).toBeLessThanOrEqual(c.ctx_switches);
    expect(c.handoffs_lost).toBe(0);
  }, 60_000);

  it('inline never switches into a kthread for its mix', async () => {
    m = await Machine.boot(options({ strategies: [builtin('inline')] }));
    m.setActiveStrategy(0);
    const machine = m;
    await runUntil(m, '200 hand-offs', () => machine.counters().handoffs >= 200);
    await drain(m);
    const c = m.counters();
    expect(c.handoffs).toBeGreaterThan(0);
    expect(c.works_run).toBe(0);
    // ksoftirqd may run (softirq budget) but no kworker: far fewer switches than hand-offs
    expect(c.kthread_switches).toBeLessThan(c.handoffs);
  }, 60_000);

  it('a hand-off refused with nothing pending is counted as lost', async () => {
    m = await Machine.boot(options({ strategies: [fixture('refuses.ts')] }));
    m.setActiveStrategy(0);
    const machine = m;
    // Refused with nothing pending, a CPU's fast pool stays in flight: one per CPU (0 and 1).
    await runUntil(m, 'a refused hand-off on each CPU', () => machine.counters().handoffs_refused >= 2);
    const c = m.counters();
    expect(c.handoffs_refused).toBeGreaterThan(0);
    expect(c.handoffs_lost).toBe(c.handoffs_refused);
  }, 60_000);
});
