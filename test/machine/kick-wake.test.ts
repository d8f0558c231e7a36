/**
 * kick_wake: a halted idle CPU woken by another thread's ring records how long after the notify
 * its thread ran again (src/shm/doorbell.ts wokenNsAgo, src/machine/idle.ts halt), at most once
 * per halt; and wakeup_to_run, once per wake-up that queued a task. Counts only: the values are
 * timings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { builtin, drain, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

describe('kick_wake', () => {
  it('is recorded for a halted CPU woken from another CPU, at most once per halt', async () => {
    // Interrupts on CPU 0 only, beside a nice -20 hog; each hands its mix to an unbound worker,
    // and the waker picks the idle CPU for it (placeUnbound): CPU 1, halted between items, is
    // woken by CPU 0's ring.
    m = await Machine.boot(
      options({
        cpus: 2,
        idle: 'halt',
        kthreads: 'cpu',
        unboundWorkers: 2,
        irq: { rate: 2000, pattern: 'poisson', burstSize: 1, cpus: [0] },
        strategies: [builtin('unbound', { scope: 'system' })],
        workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, policy: 'normal', nice: -20, rtPrio: 0 }] },
      }),
    );
    const machine = m;
    await machine.collect(); // drop whatever boot recorded
    await runUntil(m, 'CPU 1 halted 50 times and ran 50 unbound items', () => {
      machine.onlineCpus(); // a mix run on CPU 1 for CPU 0's pool is refused and leaves MIX_INFLIGHT set
      return machine.cpuCounters(1).idle_halts >= 50 && machine.cpuCounters(1).works_run >= 50;
    });
    await drain(m);
    // The machine runs on after the drain (interrupts, the hog): read the counters after the
    // histograms, so that every reading collected has its halt and its wake-up counted (a
    // wake-up between a counter read first and the collect gave 52 readings over 51 wake-ups).
    const h = await machine.collect();
    const halts = machine.cpuCounters(0).idle_halts + machine.cpuCounters(1).idle_halts;
    const kicked = h.kick_wake?.totalCount ?? 0;
    console.log(`kick_wake: ${kicked} readings over ${halts} halts`);
    expect(kicked, 'CPU 1 was woken by rings while it halted').toBeGreaterThan(0);
    expect(kicked, 'one reading per halt at most').toBeLessThanOrEqual(halts);
    // wakeup_to_run: each wake-up that queued a task, read once when it ran (the unbound worker's
    // among them: every item it ran followed one).
    const wakeups = machine.cpuCounters(0).wakeups + machine.cpuCounters(1).wakeups;
    const ran = h.wakeup_to_run?.totalCount ?? 0;
    expect(ran, 'woken tasks that ran').toBeGreaterThan(0);
    // The `wakeups` counter counts the wake-ups made by a thread executing as a CPU (core.ts
    // afterWake: ctx.cpu ≥ 0); one made outside one stamps its task uncounted, at most one
    // pending stamp per task. 1 reading over the count was seen in about one run in five here
    // (which waker was not traced). A reading twice per wake-up would be ~2× the count.
    expect(ran, 'one reading per wake-up at most').toBeLessThanOrEqual(wakeups + machine.plan.tasks.length);
    // wake_to_kick and kick_to_run (src/machine/kick-parts.ts): the unbound worker's wake-ups that
    // ended CPU 1's halts, in two parts each, recorded together; each part lies inside its
    // wake-up's wakeup_to_run, so neither part's largest reading exceeds that stage's.
    const parts = h.kick_to_run?.totalCount ?? 0;
    expect(parts, 'wake-ups of the worker that ended a halt').toBeGreaterThan(0);
    expect(h.wake_to_kick?.totalCount, 'both parts of each').toBe(parts);
    expect(parts, 'a part per kick at most').toBeLessThanOrEqual(kicked);
    expect(parts, 'a part per wake-up at most').toBeLessThanOrEqual(ran);
    const max = (x: { maxValue: number } | undefined) => x?.maxValue ?? 0;
    expect(max(h.kick_to_run)).toBeLessThanOrEqual(max(h.wakeup_to_run));
    expect(max(h.wake_to_kick)).toBeLessThanOrEqual(max(h.wakeup_to_run));
  }, 60_000);
});
