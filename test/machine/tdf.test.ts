/**
 * A real machine at TDF 2: its ticks and its background interrupts follow the emulated clock
 * (host time / 2), not the host's. Asserted on counts (jiffies, interrupts raised) against the
 * emulated clock, with bounds that hold however late the irq thread is on a busy host: a tick or
 * arrival counted at the host's rate would be twice too many.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hostNowNs } from '../../src/clock.js';
import { C_JIFFIES } from '../../src/hw/layout.js';
import { ARRIVAL_HORIZON_NS, IRQ_MAX_LAG_NS } from '../../src/machine/irq-thread.js';
import { drain, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

describe('time dilation on a real machine', () => {
  it('at TDF 2, jiffies advance at HZ per emulated second and interrupts arrive at their rate in emulated time', async () => {
    const hz = 250;
    const rate = 2000;
    const cpus = [0, 1];
    m = await Machine.boot(options({ tdf: 2, hz, irq: { rate, pattern: 'constant', burstSize: 8, cpus } }));
    const machine = m;
    const jiffies = () => Atomics.load(machine.i32, machine.R.control + C_JIFFIES);
    // Let the generator start its stretch (a first interrupt raised) before counting.
    await runUntil(m, 'a first interrupt raised', () => machine.counters().irqs_raised > 0);
    // Each emulated read is bracketed by two host reads: a preemption between them (a busy host)
    // widens the bracket instead of breaking the ratio.
    const h0a = hostNowNs();
    const e0 = m.nowNs();
    const h0b = hostNowNs();
    const j0 = jiffies();
    const r0 = m.counters().irqs_raised;
    await runUntil(m, '50 jiffies', () => jiffies() - j0 >= 50);
    const r1 = m.counters().irqs_raised;
    const j1 = jiffies();
    const h1a = hostNowNs();
    const e1 = m.nowNs();
    const h1b = hostNowNs();
    await drain(m);

    const emulated = e1 - e0;
    const host = (h1a + h1b) / 2 - (h0a + h0b) / 2;
    // The main thread's clock is the machine's: the host time between the two emulated reads lies
    // within the brackets, and is twice the emulated time (1 µs of rounding either side).
    const slack = 1e3;
    expect(2 * emulated, 'emulated time × TDF').toBeGreaterThanOrEqual(h1a - h0b - slack);
    expect(2 * emulated, 'emulated time × TDF').toBeLessThanOrEqual(h1b - h0a + slack);
    const dj = j1 - j0;
    const what = `${dj} jiffies in ${(emulated / 1e6).toFixed(1)} emulated ms (${(host / 1e6).toFixed(1)} host ms)`;
    // jiffies = floor(emulated now / tick), published by the irq thread: never ahead of the
    // emulated clock read after it. At the host's rate it would be twice that. (Not a bound on
    // j1 − j0 from the emulated time between e0 and e1: j0 may be stale, the irq thread late to
    // publish it, which makes that difference larger: CI, 50 jiffies in 194.8 emulated ms.)
    expect(j1, what).toBeLessThanOrEqual(Math.floor((e1 * hz) / 1e9));
    expect(dj, what).toBeGreaterThanOrEqual(50);
    // Arrivals are published up to ARRIVAL_HORIZON_NS (emulated) ahead, and a generator that was
    // late at r0 catches up at most IRQ_MAX_LAG_NS (beyond that it skips): at most that much extra.
    const raised = r1 - r0;
    const most = rate * cpus.length * ((emulated + ARRIVAL_HORIZON_NS + IRQ_MAX_LAG_NS) / 1e9) + cpus.length;
    const hostRate = rate * cpus.length * (host / 1e9);
    const irqs = `${raised} raised; at most ${most.toFixed(0)} in emulated time, ${hostRate.toFixed(0)} at the host's`;
    expect(most, 'the bound tells the two rates apart').toBeLessThan(0.75 * hostRate);
    expect(raised, irqs).toBeLessThanOrEqual(most);
    expect(raised, irqs).toBeGreaterThan(0);
  });
});
