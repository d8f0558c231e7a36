/**
 * `--kthread-charge` (src/kernel/sched/rq.ts, KTHREAD_CHARGES) on real threads: beside a nice −20
 * hog on CPU 0, seed 004's driver queues 20 µs of work to the bound kworker at every interrupt.
 * Under `work` (the default model) update_curr() charges the kworker what its jobs reported, at
 * most the driver's 20 µs each (driver.ts, runDeferred), never the lab's own switch, worker loop
 * and bookkeeping around them; under `wall` it charges every µs the kworker held the CPU, and
 * each run spins its 20 µs at least. Counts and invariants only: no timing is asserted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KthreadCharge } from '../../src/kernel/sched/rq.js';
import { builtin, Machine, options, runUntil } from './helpers.js';

const WORK_NS = 20_000;
let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

async function kworkerCharge(charge: KthreadCharge) {
  m = await Machine.boot(
    options({
      cpus: 2,
      kthreadCharge: charge,
      idle: { policy: 'halt', maxPollNs: 0 },
      irq: { rate: 1000, pattern: 'constant', burstSize: 1, cpus: [0] },
      workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, policy: 'normal', nice: -20, rtPrio: 0 }] },
      payload: { kind: 'driver_work', workNs: WORK_NS },
      strategies: [builtin('workqueue', { wq: 'system' })],
    }),
  );
  m.setActiveStrategy(0);
  const machine = m;
  const kworker = m.plan.kworker[0];
  await runUntil(m, '60 work items run', () => machine.counters().works_run >= 60);
  // Read while the machine still runs: the kworker's charge so far against the items it ran.
  // (An item still running has reported nothing yet; one charged is counted: charged ≤ run × 20 µs.)
  const before = m.counters().works_run;
  const charged = m.sumExec(kworker);
  const after = m.counters().works_run;
  return { charged, before, after };
}

describe('--kthread-charge', () => {
  it('work: the bound kworker is charged at most 20 µs a work item, and something', async () => {
    const { charged, after } = await kworkerCharge('work');
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThanOrEqual(after * (WORK_NS + 1)); // + 1: each report is rounded to a ns
  }, 120_000);

  it('wall: the bound kworker is charged at least its 20 µs of spinning a work item', async () => {
    const { charged, before } = await kworkerCharge('wall');
    // Each item charged spun 20 µs of the clock; the items counted before the read were charged
    // when their kworker went to sleep or was preempted, all but the last two for certain (the
    // mix's work is queued once at a time, and at most once more while it runs).
    expect(charged).toBeGreaterThanOrEqual((before - 2) * WORK_NS);
  }, 120_000);
});
