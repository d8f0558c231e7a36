/** Booting small machines for tests: options with test-friendly defaults, and phase helpers. */
import { fileURLToPath } from 'node:url';
import { machineDefaults } from '../../src/config/defaults.js';
import { Machine, Phase } from '../../src/machine/machine.js';
import type { MachineOptions, StrategyRef } from '../../src/machine/options.js';
import { builtinRef, fileRef } from '../../src/strategies/ref.js';

export { builtinRef as builtin };

/** A strategy file in test/machine/fixtures/, labelled by its file name. */
export function fixture(file: string, options: Record<string, string | number | boolean> = {}): StrategyRef {
  return fileRef(fileURLToPath(new URL(`./fixtures/${file}`, import.meta.url)), options);
}

/**
 * Test machines: the machine defaults (src/config/defaults.ts) with no application, 5k
 * interrupts/s on CPUs 0 and 1 in bursts of 8 (constant pacing), two unbound workers, a fast
 * pool that mixes every 8 interrupts (so hand-offs are frequent), seed 7; `o` overrides.
 */
export function options(o: Partial<MachineOptions> = {}): MachineOptions {
  const d = machineDefaults(o.cpus);
  return {
    ...d,
    unboundWorkers: 2,
    fastPool: { ...d.fastPool, trigger: 8 },
    seed: 7,
    irq: { rate: 5000, pattern: 'constant', burstSize: 8, cpus: [0, 1] },
    workload: { kind: 'irq_only' },
    ...o,
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long a test waits for a count before it fails: far beyond what a host at load 15 needs. */
export const COUNT_BOUND_MS = 30_000;

/**
 * Run `phase` until `done()` holds (polled every 5 ms): what the test needs to have happened
 * decides, not how long it ran, so a busy host only makes it slower. Fails at once on a machine
 * fault, and after `boundMs` with `what` it waited for, the counters and the machine's state.
 */
export async function runUntil(
  m: Machine,
  what: string,
  done: () => boolean,
  opts: { phase?: Phase; boundMs?: number } = {},
): Promise<void> {
  m.setPhase(opts.phase ?? Phase.Measure);
  const boundMs = opts.boundMs ?? COUNT_BOUND_MS;
  const giveUpAt = Date.now() + boundMs;
  while (!done()) {
    if (m.fault) throw new Error(`machine fault: ${JSON.stringify(m.fault)}\n${m.debugState()}`);
    if (Date.now() > giveUpAt)
      throw new Error(
        `waited ${boundMs / 1000} s for ${what}: counters ${JSON.stringify(m.counters())}\n${m.debugState()}`,
      );
    await sleep(5);
  }
  if (m.fault) throw new Error(`machine fault: ${JSON.stringify(m.fault)}\n${m.debugState()}`);
}

/**
 * Run `phase` for `ms`, failing fast on a machine fault. Only for a window in which something
 * must NOT happen, after the counts the test needs were waited for (runUntil): a busy host can
 * make such a window miss a fault, never fail a correct machine.
 */
export async function runFor(m: Machine, ms: number, phase: Phase = Phase.Measure): Promise<void> {
  m.setPhase(phase);
  const r = await Promise.race([sleep(ms).then(() => 'ok'), m.onFault().then((f) => f)]);
  if (r !== 'ok') throw new Error(`machine fault: ${JSON.stringify(r)}\n${m.debugState()}`);
}

/** Stop generating work and wait for everything deferred to finish. */
export async function drain(m: Machine): Promise<void> {
  m.setPhase(Phase.Drain);
  const busy = await m.drain(5000);
  if (busy) throw new Error(`did not drain: ${busy}\n${m.debugState()}`);
  m.setPhase(Phase.Pause);
}

export { Machine, Phase };
