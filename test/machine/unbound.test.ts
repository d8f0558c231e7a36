/**
 * Unbound work never waits for a busy CPU while another CPU in its scope is idle: with a hog on
 * CPU 0 and interrupts only on CPU 0, an unbound worker (scope system) runs the work on idle
 * CPU 1; a bound worker (system_wq) must run it on CPU 0, behind the hog.
 *
 * The hog sleeps once the phase leaves Measure, and CPU 0 is then idle: a work item queued
 * during the drain rightly runs there. So the unbound case stops handing off before it drains
 * (see {@link settleWithHog}).
 */
import { afterEach, expect, it } from 'vitest';
import { MIX_INFLIGHT } from '../../src/random/index.js';
import { builtin, COUNT_BOUND_MS, drain, Machine, options, Phase, runUntil, sleep } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

const hogOn0 = (strategy: ReturnType<typeof builtin>) =>
  options({
    hz: 1000,
    irq: { rate: 3000, pattern: 'constant', burstSize: 8, cpus: [0] },
    workload: { kind: 'custom', tasks: [{ kind: 'hog', cpu: 0, policy: 'normal', nice: -20, rtPrio: 0 }] },
    strategies: [strategy],
  });

/** Measure until CPU 0 has queued `n` work items, re-onlining the CPUs often: a mix run on CPU 1
 *  for CPU 0's pool is refused by random.c and leaves MIX_INFLIGHT set, which would stop further
 *  hand-offs. Fails after COUNT_BOUND_MS. */
async function measureOnlining(machine: Machine, n: number): Promise<void> {
  machine.setPhase(Phase.Measure);
  const giveUpAt = Date.now() + COUNT_BOUND_MS;
  while (machine.cpuCounters(0).works_queued < n) {
    if (machine.fault) throw new Error(machine.fault.message);
    if (Date.now() > giveUpAt)
      throw new Error(`waited ${COUNT_BOUND_MS / 1000} s for ${n} work items queued on CPU 0\n${machine.debugState()}`);
    machine.onlineCpus();
    await sleep(5);
  }
  if (machine.fault) throw new Error(machine.fault.message);
}

/** Still measuring (the hog running), stop re-onlining and wait until CPU 0 can hand off no
 *  more: its MIX_INFLIGHT is set and every queued item has run. A mix run on CPU 1 is refused
 *  and leaves MIX_INFLIGHT set; one run on CPU 0 would clear it and hand off again, so the wait
 *  also ends as soon as CPU 0 has run any. */
async function settleWithHog(machine: Machine): Promise<void> {
  await runUntil(machine, "CPU 0's hand-offs to stop (MIX_INFLIGHT set, every queued item run)", () => {
    const c0 = machine.cpuCounters(0);
    if (c0.works_run > 0) return true;
    const ran = c0.works_run + machine.cpuCounters(1).works_run;
    return (machine.fastPoolCounts()[0] & MIX_INFLIGHT) !== 0 && ran === c0.works_queued;
  });
}

it('unbound work goes to the idle CPU of its scope, not behind the hog', async () => {
  m = await Machine.boot(hogOn0(builtin('unbound', { scope: 'system' })));
  await measureOnlining(m, 10);
  await settleWithHog(m);
  await drain(m);
  const c0 = m.cpuCounters(0);
  const c1 = m.cpuCounters(1);
  expect(c0.works_queued).toBeGreaterThan(5);
  expect(c0.works_run, `CPU0 ran ${c0.works_run}, CPU1 ran ${c1.works_run}`).toBe(0);
  expect(c1.works_run).toBe(c0.works_queued);
});

it('bound work (system_wq) runs on the hog CPU', async () => {
  m = await Machine.boot(hogOn0(builtin('workqueue', { wq: 'system' })));
  await measureOnlining(m, 5);
  await drain(m);
  const c0 = m.cpuCounters(0);
  expect(c0.works_queued).toBeGreaterThan(0);
  expect(c0.works_run).toBe(c0.works_queued);
  expect(m.cpuCounters(1).works_run).toBe(0);
});
