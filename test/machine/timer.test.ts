/**
 * add_timer_on(cpu, expires = jiffies) runs on that CPU at its next tick. On an idle (NOHZ)
 * CPU a plain timer wakes it (a NOHZ kick), a deferrable one does not: it waits until the CPU
 * is awake for another reason (here: the Drain phase, which ticks every CPU).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { builtin, drain, Machine, options, runFor } from './helpers.js';

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
    await runFor(m, 1200);
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
    await runFor(m, 1200);
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
