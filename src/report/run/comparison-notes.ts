/**
 * The lines under a table about its comparisons: how the tail intervals were made and adjusted,
 * the A/A control's noise floor, the called tail verdicts of the default table, and how --until
 * ended. Context: main thread; pure.
 */
import { plural } from '../../text.js';
import { comparisonFor } from '../statistics/stats.js';
import { type Comparison, metricTitle, type PointResult, type StageName, type StrategyResult } from '../types.js';
import { fmtDelta, foundLine, type Marker, markerOf } from './format-cells.js';
import { listOf } from './notes.js';

/**
 * How the tail intervals were made and adjusted, one line: under every table whose stage has
 * tail comparisons (the default table lists only the called ones; --wide shows them all).
 */
export function tailMethodNote(point: PointResult, stage: StageName, wide = false): string | undefined {
  const tails = point.strategies.flatMap(
    (s) => s.comparison?.filter((c) => c.stage === stage && c.metric !== 'mean' && Number.isFinite(c.ciLow)) ?? [],
  );
  const adj = tails.find((c) => c.adjust === 'bh');
  if (!adj) return undefined;
  const m = tails.filter((c) => c.adjust === 'bh').length;
  const called = tails.filter((c) => c.adjust === 'bh' && c.verdict !== 'within-noise').length;
  const units = /over (\d+) slice cycles/.exec(adj.method)?.[1];
  return (
    `tail Δ (p50, p90, p99, p99.9): merged-histogram quantiles, ${units ? `se by Woodruff's linearisation over ${units} slice cycles, t on the df their kurtosis leaves` : 'paired by trial'}; ` +
    `Benjamini-Hochberg over ${m} tail tests: ${called} called, intervals at ${((adj.level ?? 0.95) * 100).toFixed(2)}% ` +
    `(false-coverage-rate adjusted); every tail interval: ${wide ? 'the table above' : '--wide'}, results.json`
  );
}

/**
 * With an A/A control: the run's measured noise floor (the control's Δ on the mean and the tail),
 * and a warning when the control itself differs from the baseline (its interval excludes 0): the
 * run's noise is then larger than its intervals say.
 */
export function noiseFloorNotes(
  point: PointResult,
  baselineLabel: string,
  control: StrategyResult,
  stage: StageName,
): string[] {
  const parts: string[] = [];
  const off: string[] = [];
  for (const metric of ['mean', 'p50', 'p99', 'p99_9'] as const) {
    const title = metricTitle(metric);
    const c = comparisonFor(point, baselineLabel, control, stage, metric);
    if (!c) continue;
    parts.push(`${title} ${fmtDelta(c)}`);
    if (c.verdict !== 'within-noise') off.push(title);
  }
  if (!parts.length) return [];
  const out = [`noise floor (A/A: ${control.label} − ${baselineLabel}, µs): ${parts.join(', ')}`];
  if (off.length) {
    out.push(
      `warning: the A/A control differs from its baseline on ${listOf(off)}: this run's noise exceeds its intervals ` +
        '(host load, drift); no verdict inside the floor is called, but consider more trials (--until)',
    );
  }
  return out;
}

/**
 * `tail: workqueue p99.9 +9.20 [+2.10, +16.30] worse`: one line per strategy whose tail (p50,
 * p99, p99.9) comparison calls a difference; for the default table, which has no tail Δ columns.
 */
export function tailVerdictNotes(
  point: PointResult,
  baselineLabel: string,
  stage: StageName,
  control?: string,
): string[] {
  return tailsCalled(point, baselineLabel, stage, control).map(
    ({ s, called }) =>
      `tail: ${s.label} ${called.map(({ metric, c }) => `${metricTitle(metric)} ${fmtDelta(c)} ${markerOf(c)}`).join(', ')} (µs)`,
  );
}

/** Each candidate (the control aside) with the tail comparisons that call a difference, in metric order. */
function tailsCalled(
  point: PointResult,
  baselineLabel: string,
  stage: StageName,
  control?: string,
): { s: StrategyResult; called: { metric: (typeof TAIL_METRICS)[number]; c: Comparison }[] }[] {
  const out: { s: StrategyResult; called: { metric: (typeof TAIL_METRICS)[number]; c: Comparison }[] }[] = [];
  for (const s of point.strategies) {
    if (s.label === baselineLabel || s.label === control) continue;
    const called = TAIL_METRICS.flatMap((metric) => {
      const c = comparisonFor(point, baselineLabel, s, stage, metric);
      return c && c.verdict !== 'within-noise' ? [{ metric, c }] : [];
    });
    if (called.length) out.push({ s, called });
  }
  return out;
}

const TAIL_METRICS = ['p50', 'p90', 'p99', 'p99_9'] as const;

/**
 * The tail differences called in a point, compactly (`wqcopy.js p99.9 better`), for the `found:`
 * line, which otherwise reads only the Δ mean: a line saying "no strategy differed" above a
 * `tail:` line that calls one contradicted it.
 */
export function calledTails(point: PointResult, baselineLabel: string, stage: StageName, control?: string): string[] {
  return tailsCalled(point, baselineLabel, stage, control).flatMap(({ s, called }) =>
    called.map(({ metric, c }) => `${s.label} ${metricTitle(metric)} ${markerOf(c)}`),
  );
}

/** The widest of `widths` (label → half-width %), a missing interval (NaN) counting as widest. */
export function widestInterval(widths: Record<string, number>): [label: string, width: number] | undefined {
  const rank = (w: number) => (Number.isFinite(w) ? w : Number.POSITIVE_INFINITY);
  return Object.entries(widths).reduce<[string, number] | undefined>(
    (a, e) => (!a || rank(e[1]) > rank(a[1]) ? e : a),
    undefined,
  );
}

/** Under the table of a point that ran with --until: whether the target was reached, and how. */
export function untilLine(point: PointResult): string | undefined {
  const u = point.until;
  if (!u) return undefined;
  const widest = widestInterval(u.widthPct);
  const w = widest
    ? `; widest Δ-mean interval${u.stage ? ` of ${u.stage}` : ''} ${Number.isFinite(widest[1]) ? `±${widest[1].toFixed(1)}%` : 'none'} (${widest[0]})`
    : '';
  const rounds = plural(u.rounds, 'round');
  const why: Record<typeof u.stop, string> = {
    reached: `reached after ${rounds}`,
    time: `not reached: --max-time (${Math.round(u.maxTimeMs / 1000)} s) ran out after ${rounds}`,
    trials: `not reached: the trial limit stopped it after ${rounds}`,
    ended: `not reached: the run ended after ${rounds}`,
  };
  return `until ±${u.pct}%: ${why[u.stop]}${w}`;
}

/**
 * The `found:` line (format-cells.ts foundLine) with the tails called beside it: what the terminal
 * and report.html print under a point's table. Undefined where nothing was compared.
 */
export function foundWithTails(
  point: PointResult,
  baselineLabel: string,
  t: {
    baseline: string;
    stage: StageName;
    rows: readonly { label: string; marker: Marker; comparison?: Comparison }[];
  },
  control?: string,
): string | undefined {
  const found = foundLine(t.baseline, t.rows);
  if (!found) return undefined;
  const tails = calledTails(point, baselineLabel, t.stage, control);
  return tails.length ? `${found}; in the tails: ${tails.join(', ')}` : found;
}
