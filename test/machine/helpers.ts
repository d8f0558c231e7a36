/** Booting small machines for tests: options with test-friendly defaults, and phase helpers. */
import { pathToFileURL } from 'node:url';
import { Machine, Phase } from '../../src/machine/machine.js';
import { defaultTopology, type MachineOptions, type StrategyRef } from '../../src/machine/options.js';

export function builtin(name: string, options: Record<string, string | number | boolean> = {}): StrategyRef {
  return { label: name, name, kind: 'builtin', options };
}

export function fixture(file: string, options: Record<string, string | number | boolean> = {}): StrategyRef {
  const url = new URL(`./fixtures/${file}`, import.meta.url);
  return { label: file, name: file, kind: 'file', url: pathToFileURL(url.pathname).href, options };
}

export function options(o: Partial<MachineOptions> = {}): MachineOptions {
  const cpus = o.cpus ?? 2;
  return {
    cpus,
    hz: 250,
    notify: 'if-idle',
    topology: defaultTopology(cpus),
    unboundWorkers: 2,
    lockSpins: 200,
    idleSpinNs: 0,
    fastPool: { trigger: 8, variant: '64' },
    tracing: true,
    watchdogMs: 2000,
    seed: 7,
    irq: { rate: 5000, pattern: 'constant', burstSize: 8, cpus: [0, 1] },
    workload: { kind: 'irq_only' },
    strategies: [builtin('inline')],
    ...o,
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Run `phase` for `ms`, failing fast on a machine fault. */
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
