/**
 * add_timer_on(cpu, expires = jiffies) runs on that CPU at its next tick. On an idle (NOHZ)
 * CPU a plain timer wakes it (a NOHZ kick), a deferrable one does not: it waits until the CPU
 * is awake for another reason (here: the Drain phase, which ticks every CPU). The test waits for
 * counts (hand-offs, interrupts taken), not for a length of time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { builtin, drain, Machine, options, runUntil } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

const idleCpuOptions = (deferrable: boolean) =>
  options({
    hz: 100,
    irq: { rate: 400, pattern: 'constant', burstSize: 8, cpus: [0] },
    strategies: [builtin('timer', { deferrable })],
  });

describe('timers', () => {
  it('a plain timer armed on an idle CPU wakes it at the next tick and runs there', async () => {
    m = await Machine.boot(idleCpuOptions(false));
    const machine = m;
    await runUntil(m, 'CPU 0: 6 hand-offs, each timer run after a NOHZ kick', () => {
      const c = machine.cpuCounters(0);
      return c.handoffs > 5 && c.nohz_kicks > 0 && c.timers_run > 0;
    });
    const during = m.cpuCounters(0);
    await drain(m);
    const after = m.cpuCounters(0);
    expect(during.handoffs).toBeGreaterThan(5);
    expect(during.nohz_kicks, JSON.stringify(during)).toBeGreaterThan(0);
    expect(during.timers_run).toBeGreaterThan(0);
    expect(after.mixes).toBe(after.handoffs);
    expect(after.mixes_remote).toBe(0);
    expect(m.cpuCounters(1).timers_run).toBe(0);
  });

  it('a deferrable timer never wakes an idle CPU, and still runs on it once the CPU ticks', async () => {
    m = await Machine.boot(idleCpuOptions(true));
    const machine = m;
    await runUntil(m, 'a first hand-off on CPU 0', () => machine.cpuCounters(0).handoffs > 0);
    // Then 200 more interrupts raised for CPU 0 (half a second at 400/s, 50 ticks at HZ 100): a
    // plain timer would have kicked the CPU long before.
    const seen = m.counters().irqs_raised;
    await runUntil(m, '200 more interrupts raised', () => machine.counters().irqs_raised >= seen + 200);
    const during = m.cpuCounters(0);
    // The first hand-off arms the timer; it waits (MIX_INFLIGHT stays set meanwhile).
    expect(during.handoffs).toBeGreaterThan(0);
    expect(during.nohz_kicks, JSON.stringify(during)).toBe(0);
    await drain(m);
    const after = m.cpuCounters(0);
    expect(after.mixes).toBe(after.handoffs);
    expect(after.mixes_remote).toBe(0);
  });
});
