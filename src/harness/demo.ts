/**
 * `deferlab demo`: the emulated machine by itself — N CPUs taking interrupts for a few seconds
 * with the inline strategy, then the counters. A quick check that the machine works here.
 */
import type { CliIo } from '../cli/main.js';
import type { ResolvedConfig } from '../config/schema.js';
import { Phase } from '../machine/layout.js';
import { Machine } from '../machine/machine.js';
import { machineOptions } from './options.js';

export async function runDemo(config: ResolvedConfig, io: CliIo, signal: AbortSignal): Promise<number> {
  const opts = {
    ...machineOptions(config),
    workload: { kind: 'irq_only' as const },
    strategies: [{ label: 'inline', name: 'inline', kind: 'builtin' as const, options: {} }],
  };
  io.stdout(
    `demo: ${opts.cpus} emulated CPUs, ${opts.irq.rate} interrupts/s each (${opts.irq.pattern}), HZ=${opts.hz}, for ${(config.trialMs / 1000).toFixed(1)} s\n`,
  );
  const m = await Machine.boot(opts);
  try {
    m.setPhase(Phase.Measure);
    const t0 = Date.now();
    while (Date.now() - t0 < config.trialMs && !signal.aborted && !m.fault) await new Promise((r) => setTimeout(r, 50));
    m.setPhase(Phase.Drain);
    await m.drain(5000);
    const c = m.counters();
    for (const [k, v] of Object.entries(c)) if (v) io.stdout(`  ${k.padEnd(28)} ${v}\n`);
  } finally {
    await m.stop();
  }
  if (m.fault) {
    io.stderr(`deferlab: ${m.fault.message}\n`);
    return 1;
  }
  return signal.aborted ? 130 : 0;
}
