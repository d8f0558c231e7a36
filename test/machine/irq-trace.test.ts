/**
 * --irq-trace on a real machine: the irq thread replays a tiny CSV trace's arrivals onto the
 * mapped CPUs instead of the generator's, and the CPUs handle exactly those (per-CPU
 * `interrupts`), or, looped, pass after pass. Counts only: nothing here asserts on timings, and
 * each test waits for the counts it checks (an extra window only where nothing more may come).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { shareIrqTrace } from '../../src/irq/replay.js';
import { parseIrqTrace } from '../../src/irq/trace-file.js';
import { builtin, drain, Machine, options, runFor, runUntil } from './helpers.js';

// Host CPU 7 → CPU 1: 4 arrivals; host CPU 9 → CPU 0: 2 arrivals; host CPU 4 (unmapped): dropped.
// The span is 3 ms, under the irq thread's 4 ms horizon: the whole trace is published at once.
const CSV = [
  'time_ns,cpu,irq',
  '1000000,7,40',
  '1200000,4,99',
  '1500000,9,41',
  '2000000,7,40',
  '2500000,9,41',
  '3000000,7,40',
  '4000000,7,40',
].join('\n');

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

async function boot(loop: boolean): Promise<Machine> {
  const irqTrace = shareIrqTrace(parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0', loop }));
  const machine = await Machine.boot(options({ strategies: [builtin('inline')], irqTrace }));
  machine.setActiveStrategy(0);
  return machine;
}

describe('--irq-trace replayed on the machine', () => {
  it('replays exactly the trace’s arrivals onto the mapped CPUs, instead of the generator’s', async () => {
    m = await boot(false);
    const machine = m;
    await runUntil(m, "the trace's 6 arrivals handled", () => machine.counters().interrupts >= 6);
    await runFor(m, 100); // nothing more may come: the trace is over and the generator is off
    await drain(m);
    const c = m.counters();
    // The generator (options(): 5k/s on CPUs 0 and 1) is replaced: only the trace's 6 arrive.
    expect(c.irqs_replayed).toBe(6);
    expect(c.irqs_raised).toBe(6);
    expect(c.irqs_skipped + c.irqs_dropped).toBe(0);
    expect(m.cpuCounters(0).interrupts).toBe(2);
    expect(m.cpuCounters(1).interrupts).toBe(4);
  }, 60_000);

  it('each measured stretch (a trial) replays the trace from its top again', async () => {
    m = await boot(false);
    const machine = m;
    await runUntil(m, "the trace's 6 arrivals handled", () => machine.counters().interrupts >= 6);
    await drain(m);
    await m.collect(); // a new epoch, as between two trials
    await runUntil(m, "the trace's 6 arrivals handled again", () => machine.counters().interrupts >= 12);
    await runFor(m, 100); // and no more
    await drain(m);
    expect(m.cpuCounters(0).interrupts).toBe(4);
    expect(m.cpuCounters(1).interrupts).toBe(8);
    expect(m.counters().irqs_replayed).toBe(12);
  }, 60_000);

  it('loops: the trace repeats for as long as the phase lasts', async () => {
    m = await boot(true);
    const machine = m;
    // A 3.75 ms period: pass after pass, until each CPU has had more than two passes' arrivals.
    await runUntil(
      m,
      'more than two passes on each CPU',
      () => machine.cpuCounters(0).interrupts > 2 * 2 && machine.cpuCounters(1).interrupts > 2 * 4,
    );
    await drain(m);
    const c = m.counters();
    const cpu0 = m.cpuCounters(0).interrupts;
    const cpu1 = m.cpuCounters(1).interrupts;
    expect(cpu0).toBeGreaterThan(2 * 2);
    expect(cpu1).toBeGreaterThan(2 * 4);
    // Every arrival published was handled (or refused by a full ring, counted); none invented.
    expect(cpu0 + cpu1).toBe(c.irqs_replayed);
    expect(c.irqs_raised).toBe(c.irqs_replayed);
  }, 60_000);
});
