/**
 * `deferlab demo`: the emulated machine by itself — N CPUs taking background interrupts for
 * --duration with the inline strategy, then the counters. A quick check that the machine works
 * here. It takes the machine's settings; those it would ignore (--strategy, --workload,
 * --trials, --warmup, --sweep, --out, ...) are rejected before it starts (DEMO_RULES in
 * config/rules.ts; its --help lists what it takes).
 */

import type { ResolvedConfig } from '../config/schema.js';
import { machineOptions } from '../harness/options.js';
import { Phase } from '../hw/layout.js';
import { Machine } from '../machine/machine.js';
import { builtinRef } from '../strategies/ref.js';
import { type CliIo, sayStopped } from './main.js';

export async function runDemo(config: ResolvedConfig, io: CliIo, signal: AbortSignal): Promise<number> {
  const opts = {
    ...machineOptions(config),
    workload: { kind: 'irq_only' as const },
    strategies: [builtinRef('inline')],
  };
  io.stdout(
    `demo: strategy inline on ${opts.cpus} emulated CPUs, ${opts.irq.rate} interrupts/s each (${opts.irq.pattern}) on CPUs ${opts.irq.cpus.join(',')}, HZ=${opts.hz}, for ${config.trialMs < 1000 ? `${config.trialMs} ms` : `${(config.trialMs / 1000).toFixed(1)} s`}\n`,
  );
  const m = await Machine.boot(opts);
  try {
    m.setPhase(Phase.Measure);
    const t0 = Date.now();
    while (Date.now() - t0 < config.trialMs * (opts.tdf ?? 1) && !signal.aborted && !m.fault)
      await new Promise((r) => setTimeout(r, 50));
    m.setPhase(Phase.Drain);
    await m.drain(5000);
    const c = m.counters();
    io.stdout('counters of strategy inline (non-zero; docs/results.md explains each):\n');
    for (const [k, v] of Object.entries(c)) if (v) io.stdout(`  ${k.padEnd(28)} ${v}\n`);
  } finally {
    await m.stop();
  }
  if (m.fault) {
    sayStopped(io, 'failed', m.fault.message);
    return 1;
  }
  return signal.aborted ? 130 : 0;
}
