/**
 * The explain table (`deferlab explain DIR`, the end of `deferlab run --explain`): per point and
 * strategy, the median band's and the slowest 1%'s latency by cause, and each strategy's slowest
 * 1% against the baseline's, cause by cause. Returns text; the caller prints it.
 */

import { band, type Decomposed, delta, type ExplainSeries } from './buckets.js';
import type { ExplainResults } from './collect.js';

/** The bands the table shows: the middle 1% of ranks and the slowest 1%. */
export const BANDS = [
  { key: 'p50', name: 'median', lo: 0.495, hi: 0.505 },
  { key: 'p99', name: 'slowest 1%', lo: 0.99, hi: 1 },
] as const;

/** Causes listed by name in a line; the rest are summed into "n more". */
const SHOWN = 6;

const us = (ns: number): string => (ns / 1000).toFixed(ns < 10_000 && ns > -10_000 ? 2 : 1);

function causeList(d: Decomposed, signed: boolean): string {
  const list = Object.entries(d.causes)
    .filter(([, v]) => Math.abs(v) >= 0.5)
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const shown = list.slice(0, SHOWN).map(([k, v]) => `${signed && v >= 0 ? '+' : ''}${us(v)} ${k}`);
  const rest = list.slice(SHOWN).reduce((a, [, v]) => a + v, 0);
  if (list.length > SHOWN) shown.push(`${signed && rest >= 0 ? '+' : ''}${us(rest)} in ${list.length - SHOWN} more`);
  return shown.join(', ');
}

/** The series the table explains for a strategy: its exchanges, else its hand-offs. */
export function primarySeries(series: readonly ExplainSeries[], label: string): ExplainSeries | undefined {
  return (
    series.find((s) => s.label === label && s.kind === 'exchange' && s.count > 0) ??
    series.find((s) => s.label === label && s.kind === 'handoff' && s.count > 0)
  );
}

/**
 * The labels of a point's series in the order the table lists them: the baseline first (the others
 * are read against it), then the others in the series' order, which {@link inRunOrder} (read.ts)
 * makes the run's.
 */
export function explainOrder(series: readonly ExplainSeries[], baseline: string): string[] {
  const labels = [...new Set(series.map((s) => s.label))];
  return labels.includes(baseline) ? [baseline, ...labels.filter((l) => l !== baseline)] : labels;
}

/** The lines of the explain table for `e` (baseline: the run's baseline label). */
export function renderExplain(
  e: ExplainResults,
  baseline: string,
  sweep?: { param: string; values: number[] } | null,
): string {
  const out: string[] = [];
  for (const p of e.points) {
    const where = sweep ? ` at ${sweep.param} = ${sweep.values[p.point]}` : '';
    const labels = explainOrder(p.series, baseline);
    const base = primarySeries(p.series, baseline);
    const what =
      base?.kind === 'handoff'
        ? 'requests (each hand-off, and each request that found the work pending) → the start of the run that served them'
        : 'one-way latency (tcp_lat exchanges)';
    out.push(`explained${where}: ${what} by cause along its critical path, µs (mean of each band)`);
    for (const label of labels) {
      const s = primarySeries(p.series, label);
      if (!s) {
        out.push(`  ${label}: nothing explained`);
        continue;
      }
      const cover =
        s.unexplained > 0 ? `, ${s.unexplained} not explained: begun before recording started, or overwritten` : '';
      out.push(`  ${label} (${s.count} ${s.kind === 'exchange' ? 'exchanges' : 'requests'}${cover})`);
      for (const b of BANDS) {
        const d = band(s, b.lo, b.hi);
        out.push(`    ${b.name.padEnd(11)} ${us(d.latencyNs).padStart(9)} = ${causeList(d, false)}`);
      }
      if (base && label !== baseline && base.kind === s.kind) {
        for (const b of BANDS) {
          const d = delta(band(s, b.lo, b.hi), band(base, b.lo, b.hi));
          const dir = d.latencyNs >= 0 ? 'above' : 'below';
          out.push(
            `    ${b.name} is ${us(Math.abs(d.latencyNs))} µs ${dir} ${baseline}'s: ${causeList(d, true) || 'no cause moved'}`,
          );
        }
      }
    }
  }
  return out.join('\n');
}
