/**
 * The lines under the setup line of a run that replayed `--irq-trace`: how fast the trace's
 * arrivals came as recorded and as replayed in the measured phases (`irqs_replayed`, with those
 * skipped and dropped, the counters the generator reports too), and, for a trace played once,
 * that it ran out before the trials ended. Pure; nothing here prints.
 */

import type { RunResults } from '../types.js';
import { fmtRate } from './format-cells.js';
import { nsText } from './setup-line.js';

/** The generator's counters and the measured time (ns), summed over every trial of the run. */
function trialSums(results: Pick<RunResults, 'points'>) {
  const sum = { irqs_raised: 0, irqs_replayed: 0, irqs_skipped: 0, irqs_dropped: 0, ns: 0 };
  for (const p of results.points)
    for (const s of p.strategies)
      for (const t of s.trials) {
        sum.irqs_raised += t.counters.irqs_raised ?? 0;
        sum.irqs_replayed += t.counters.irqs_replayed ?? 0;
        sum.irqs_skipped += t.counters.irqs_skipped ?? 0;
        sum.irqs_dropped += t.counters.irqs_dropped ?? 0;
        sum.ns += t.durationNs;
      }
  return sum;
}

/** `1.2 s`, `300 ms`. */
function msText(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(2)} s` : `${ms} ms`;
}

/**
 * `irq trace: 290 arrivals per 10.9 ms pass (26.6k/s as recorded); replayed 26.5k/s in the measured
 * phases (irqs_replayed), 0 skipped late, 0 dropped`, and a `note:` when a trace played once
 * ended before the trials did. Empty without a trace. Context: main thread; pure.
 */
export function irqTraceNotes(results: Pick<RunResults, 'meta' | 'points'>): string[] {
  const m = results.meta.irqTrace;
  if (!m) return [];
  const out: string[] = [];
  const { irqs_replayed: replayed, irqs_skipped: skipped, irqs_dropped: dropped, ns } = trialSums(results);
  const passNs = m.loop ? m.periodNs : m.spanNs;
  const recorded = passNs > 0 ? ` (${fmtRate((m.events / passNs) * 1e9)}/s as recorded)` : '';
  const measured =
    ns > 0
      ? `; replayed ${fmtRate((replayed / ns) * 1e9)}/s in the measured phases (irqs_replayed), ` +
        `${skipped} skipped late, ${dropped} dropped`
      : '';
  out.push(`irq trace: ${m.events} arrivals per ${nsText(passNs)} pass${recorded}${measured}`);

  const o = (results.meta.options ?? {}) as { warmupMs?: unknown; trialMs?: unknown };
  const warmupMs = typeof o.warmupMs === 'number' ? o.warmupMs : 0;
  const trialMs = typeof o.trialMs === 'number' ? o.trialMs : undefined;
  if (!m.loop && trialMs !== undefined && m.spanNs < (warmupMs + trialMs) * 1e6) {
    const ends = `the irq trace ends ${nsText(m.spanNs)} into each trial (it starts with the trial's warm-up)`;
    const inWarmup = m.spanNs < warmupMs * 1e6;
    out.push(
      inWarmup
        ? `note: ${ends}, within the ${msText(warmupMs)} warm-up: the measured phases had no trace arrivals; --irq-trace-loop repeats it`
        : `note: ${ends}, ${nsText(m.spanNs - warmupMs * 1e6)} into the ${msText(trialMs)} measured phase: ` +
            'arrivals stopped for the rest; --irq-trace-loop repeats it',
    );
  }
  return out;
}

/** The share of due interrupts lost (skipped or dropped) from which the run says so, %. */
export const GENERATOR_LOSS_NOTE_PCT = 1;

/**
 * Without a trace: a `note:` when the built-in generator fell behind in the measured phases, as
 * `irqs_skipped` (arrivals more than IRQ_MAX_LAG_NS late, skipped) and `irqs_dropped` (a full
 * arrival ring) count it: the CPUs were offered fewer background interrupts than the setup line's
 * rate. Empty when none was lost, or with a trace (irqTraceNotes reports those). Pure.
 */
export function generatorLossNotes(results: Pick<RunResults, 'meta' | 'points'>): string[] {
  if (results.meta.irqTrace) return [];
  const { irqs_raised: raised, irqs_skipped: skipped, irqs_dropped: dropped } = trialSums(results);
  const lost = skipped + dropped;
  if (!(lost > 0)) return [];
  const offered = raised + lost;
  const pct = (100 * lost) / offered;
  // Below 1% the rate offered is the rate given, within what a busy host shifts anyway (a fresh
  // clone's default run beside two CPU burners skipped 0.3%); the counters keep every count.
  if (pct < GENERATOR_LOSS_NOTE_PCT) return [];
  return [
    `note: the interrupt generator fell behind in the measured phases: of ${offered} device interrupts due, ` +
      `${skipped} were skipped late and ${dropped} dropped (a full ring), ${pct.toFixed(1)}%; ` +
      'the CPUs took fewer than the setup line says (fewer emulated CPUs, a higher --tdf or a quieter host lets it keep up)',
  ];
}
