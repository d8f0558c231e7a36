/**
 * An idle CPU's halt under time dilation, on a fake clock: the halt waits until its next device
 * interrupt is due, an emulated span, so the host wait (Atomics.wait's timeout) is TDF times as
 * long; under haltpoll it wakes IDLE_WAKE_EARLY_NS of host time early, 1/TDF of that emulated.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { initClock, newEpoch } from '../../src/clock.js';
import { machineDefaults } from '../../src/config/defaults.js';
import { CPUF_NIC_DUE } from '../../src/hw/layout.js';
import { IDLE_WAKE_EARLY_NS } from '../../src/machine/cpuidle.js';
import { IdleTask } from '../../src/machine/idle.js';
import { MachineMemory } from '../../src/machine/memory.js';
import type { MachineOptions } from '../../src/machine/options.js';
import { Runtime } from '../../src/machine/runtime.js';
import { Doorbell } from '../../src/shm/doorbell.js';

afterEach(() => {
  vi.restoreAllMocks();
  initClock(newEpoch(), 1);
});

const OPTS: MachineOptions = {
  ...machineDefaults(2),
  irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
  workload: { kind: 'irq_only' },
  strategies: [],
};

/** The host wait (ms) CPU 0's idle task asks for when its NIC is due `dueInNs` from now. */
function haltWaitMs(tdf: number, policy: 'halt' | 'haltpoll', dueInNs: number): number {
  initClock(newEpoch(), tdf);
  const mem = MachineMemory.build(OPTS);
  let now = 1_000_000_000; // the fake clock: emulated ns, still while the CPU halts
  const rt = new Runtime(mem.sab, mem.R, mem.plan, OPTS, 0, () => now);
  const idle = mem.plan.tasks.find((t) => t.kind === 'idle' && t.cpu === 0)!.id;
  rt.enterCpu(0, idle);
  rt.ctx.f64[rt.ctx.cf(0, CPUF_NIC_DUE)] = now + dueInNs;
  const waits: number[] = [];
  vi.spyOn(Doorbell.prototype, 'sleep').mockImplementation((ms?: number) => {
    waits.push(ms ?? Number.POSITIVE_INFINITY);
    now += 1; // woke at once, long before the interrupt is due: a spurious wake
    return true;
  });
  const task = new IdleTask(rt, idle, policy);
  (task as unknown as { halt(): void }).halt();
  expect(waits).toHaveLength(1);
  return waits[0];
}

describe('idle halt under time dilation (fake clock)', () => {
  it('halt: waits the emulated span × TDF on the host', () => {
    expect(haltWaitMs(1, 'halt', 5_000_000)).toBeCloseTo(5, 9);
    expect(haltWaitMs(4, 'halt', 5_000_000)).toBeCloseTo(20, 9);
    expect(haltWaitMs(2.5, 'halt', 2_000_000)).toBeCloseTo(5, 9);
  });
  it('haltpoll: wakes early by the host oversleep, the same host ms at any TDF', () => {
    const early = IDLE_WAKE_EARLY_NS / 1e6; // host ms
    expect(haltWaitMs(1, 'haltpoll', 5_000_000)).toBeCloseTo(5 - early, 9);
    expect(haltWaitMs(4, 'haltpoll', 5_000_000)).toBeCloseTo(4 * 5 - early, 9);
  });
});
