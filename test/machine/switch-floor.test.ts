/**
 * The context-switch model (`--switch-cost`): a switch lasts at least the floor, from the
 * outgoing side's schedule() to the incoming task running, charged by the incoming thread's spin
 * in Runtime.enterCpu; on a fake clock that advances a fixed step per read, so what is checked is
 * how far the clock was driven, never how long anything took.
 */
import { describe, expect, it } from 'vitest';
import { machineDefaults, tcpLatOptions } from '../../src/config/defaults.js';
import { CPU_OWNER, CPU_WORDS, CPUF_SWITCH_NS } from '../../src/hw/layout.js';
import { MachineMemory } from '../../src/machine/memory.js';
import type { MachineOptions } from '../../src/machine/options.js';
import { Runtime } from '../../src/machine/runtime.js';
import { chargedSwitchEnd, chargeSwitch, SWITCH_SPIN_MAX_READS } from '../../src/machine/switch-floor.js';

describe('chargedSwitchEnd', () => {
  it('a switch faster than the floor ends at its start + the floor', () => {
    expect(chargedSwitchEnd(1000, 1800, 2500)).toBe(3500);
  });
  it('a switch that already took the floor or more is not charged', () => {
    expect(chargedSwitchEnd(1000, 3500, 2500)).toBe(3500);
    expect(chargedSwitchEnd(1000, 9000, 2500)).toBe(9000);
  });
  it('no floor, or no switch (start 0: the CPU had no owner before), is not charged', () => {
    expect(chargedSwitchEnd(1000, 1200, 0)).toBe(1200);
    expect(chargedSwitchEnd(0, 1200, 2500)).toBe(1200);
  });
});

describe('chargeSwitch', () => {
  it('reads the clock until the charged end and returns the reading there', () => {
    let t = 1800;
    let reads = 0;
    const end = chargeSwitch(1000, 1800, 2500, () => {
      reads++;
      t += 100;
      return t;
    });
    expect(end).toBe(3500);
    expect(reads).toBe(17);
  });
  it('is bounded when the clock stands still', () => {
    let reads = 0;
    const end = chargeSwitch(1000, 1800, 2500, () => {
      reads++;
      return 1800;
    });
    expect(end).toBe(1800);
    expect(reads).toBe(SWITCH_SPIN_MAX_READS);
  });
});

/** A machine whose tcp_lat client is hosted on CPU 0's thread beside its idle task (as calibrate-switch.ts). */
const OPTS: MachineOptions = {
  ...machineDefaults(2),
  irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
  workload: tcpLatOptions({ ringBytes: 4096 }),
  strategies: [],
  tracing: false,
};

/**
 * Switch CPU 0 from its idle task to the client task and back on one thread, on a clock that
 * advances STEP ns per read; returns the clock's reading when each switch-in ended and when it began.
 */
function switchInAndOut(floorNs: number | undefined) {
  const STEP = 10;
  const opts: MachineOptions = floorNs === undefined ? OPTS : { ...OPTS, switchFloorNs: floorNs };
  const mem = MachineMemory.build(opts);
  let t = 1_000_000;
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, 0, () => (t += STEP));
  const task = mem.plan.tasks.find((k) => k.kind === 'app' && k.thread === 0)?.id;
  if (task === undefined) throw new Error('no task hosted on CPU 0');
  const owner = mem.R.cpu + 0 * CPU_WORDS + CPU_OWNER;
  const f64 = new Float64Array(mem.sab);
  const switchNs = rt.ctx.cf(0, CPUF_SWITCH_NS);
  rt.enterCpu(0, 0);
  rt.sched.wakeUp(task);
  rt.sched.schedule();
  expect(Atomics.load(mem.i32, owner)).toBe(task);
  const inBegan = f64[switchNs];
  const before = t;
  rt.enterCpu(0, task);
  const inEnded = t;
  rt.sched.sleepCurrent(() => false);
  expect(Atomics.load(mem.i32, owner)).toBe(0);
  const outBegan = f64[switchNs];
  rt.enterCpu(0, 0);
  return { inBegan, before, inEnded, outBegan, outEnded: t };
}

describe('Runtime.enterCpu with a switch floor', () => {
  it('without a floor the switch-in reads the clock once', () => {
    const s = switchInAndOut(undefined);
    expect(s.inEnded - s.before).toBeLessThan(200); // a handful of reads, no spin
    expect(s.inEnded - s.inBegan).toBeLessThan(1000);
  });
  it('with a floor, both switches (idle → task, task → idle) last at least the floor on the clock', () => {
    const floor = 50_000;
    const s = switchInAndOut(floor);
    expect(s.inEnded - s.inBegan).toBeGreaterThanOrEqual(floor);
    expect(s.outEnded - s.outBegan).toBeGreaterThanOrEqual(floor);
    // and not much more: the spin stops at the floor (a few reads of bookkeeping after it)
    expect(s.inEnded - s.inBegan).toBeLessThan(floor + 1000);
  });
});
