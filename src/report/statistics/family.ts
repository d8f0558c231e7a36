/**
 * One family of tests per run: the multiplicity adjustment of a point's verdicts, and the
 * practical-significance band (`--threshold`).
 *
 * A default run makes 8 Δ-mean tests and 32 tail tests against the baseline; each at 95% alone,
 * a run where nothing differs would call something most of the time. So, per point and stage:
 *
 * - Δ mean, over all candidates (the A/A control excluded): Holm's step-down procedure (Holm
 *   1979) on the t tests' p-values. Each candidate's printed interval is at the level of the step
 *   that decided it: sorted by p, the i-th (from 0) of m is tested at alpha/(m − i) and, once one
 *   is not rejected, every later one gets that same level. Its interval then excludes 0 exactly
 *   when Holm rejects, and the first step's level is Bonferroni's (1 − 0.05/8 = 99.375% for 8
 *   candidates). The family-wise error rate is at most alpha whatever the correlation between the
 *   tests (all share the baseline).
 * - Tails (p50, p90, p99, p99.9 of every candidate: 32 tests): Benjamini-Hochberg (1995) at
 *   q = alpha, the false discovery rate; with R of m rejected, every tail interval is printed at
 *   level 1 − max(R, 1)·q/m, Benjamini & Yekutieli's (2005) false-coverage-rate interval, which
 *   excludes 0 exactly for the rejected tests.
 * - The A/A control (`--control`) is not a candidate: its 95% interval is the noise floor.
 *
 * The band: a difference is called only when its (adjusted) interval lies wholly outside
 * ±threshold% of the baseline's value, as criterion.rs calls a change only when its interval
 * lies outside its noise threshold (criterion.rs `compare_to_threshold`, default 1%).
 * {@link DEFAULT_THRESHOLD_PCT}: why 2%.
 */
import type { ComparableMetric, Comparison, StageName } from '../types.js';
import { tQuantile80, verdictOf } from './interval.js';
import { tCriticalTwoSided } from './tdist.js';

/** The family's error rate: Holm's family-wise alpha and BH's q. */
export const FAMILY_ALPHA = 0.05;

/**
 * `--threshold`'s default, % of the baseline's value. criterion.rs calls nothing inside ±1% (its
 * `noise_threshold` default) for CPU-bound micro-benchmarks on a quiet machine. This lab's
 * resolution is coarser: on an idle 2-core host a default run's Δ-mean intervals were ±2.5–2.9%
 * of the baseline (median half-width, `npm run bench:aa`, docs/results.md), so a default run
 * resolves nothing below ~2% anyway, and a run made long enough to (`--until 1`) would start
 * calling differences of 1–2% that two A/A copies can show from what the emulation cannot hold
 * equal between two instances (ring and histogram slots, JIT state, the order effects left
 * after the balanced schedule). 2% keeps those out, and lies well below the effects the seeds
 * argue about (5–30%). A user who wants any resolved difference: `--threshold 0`.
 */
export const DEFAULT_THRESHOLD_PCT = 2;

/** Holm's per-hypothesis levels (alpha of each interval), in the input's order. NaN p: NaN. */
export function holmLevels(ps: readonly number[], alpha = FAMILY_ALPHA): number[] {
  const idx = ps.map((_, i) => i).filter((i) => Number.isFinite(ps[i]));
  idx.sort((a, b) => ps[a] - ps[b]);
  const m = idx.length;
  const out = ps.map(() => Number.NaN);
  let stop = -1;
  for (let i = 0; i < m; i++) {
    const a = alpha / (m - i);
    if (stop < 0 && ps[idx[i]] > a) stop = i;
    out[idx[i]] = stop < 0 ? a : alpha / (m - stop);
  }
  return out;
}

/** Benjamini-Hochberg: how many of the finite `ps` are rejected at FDR q, and the FCR level. */
export function bhLevel(ps: readonly number[], q = FAMILY_ALPHA): { rejected: number; alpha: number; m: number } {
  const sorted = ps.filter(Number.isFinite).sort((a, b) => a - b);
  const m = sorted.length;
  let r = 0;
  for (let k = 1; k <= m; k++) if (sorted[k - 1] <= (k * q) / m) r = k;
  return { rejected: r, alpha: m > 0 ? (Math.max(r, 1) * q) / m : q, m };
}

/**
 * `c` with its interval at level 1 − `alpha` (from its se and df), the band set and the verdict
 * decided against it. A comparison without se or df (older results, fewer than 2 units) keeps its
 * interval and only gains the band. Context: any; pure.
 */
export function adjusted(
  c: Comparison,
  alpha: number,
  adjust: 'holm' | 'bh' | 'none',
  thresholdPct: number,
): Comparison {
  const threshold = (thresholdPct / 100) * Math.abs(c.baseline);
  const band = (lo: number, hi: number) => verdictOf(lo - threshold, hi + threshold, 'lower');
  if (c.se === undefined || c.df === undefined || !Number.isFinite(c.se) || !(c.df >= 1)) {
    return { ...c, threshold, verdict: Number.isFinite(c.ciLow) ? band(c.ciLow, c.ciHigh) : c.verdict };
  }
  const crit = tCriticalTwoSided(alpha, c.df);
  const ciLow = c.diff - crit * c.se;
  const ciHigh = c.diff + crit * c.se;
  return {
    ...c,
    ciLow,
    ciHigh,
    detectable: (crit + tQuantile80(c.df)) * c.se,
    level: 1 - alpha,
    adjust,
    threshold,
    // Called only when the whole interval lies outside ±threshold (a band containing 0).
    verdict: band(ciLow, ciHigh),
  };
}

/** One strategy's comparisons, by label, as `withComparisons` holds them. */
export interface LabelledComparisons {
  label: string;
  comparison: Comparison[];
}

/**
 * The family adjustment of one point: `candidates` (the control excluded) adjusted per stage,
 * Holm over their Δ means and Benjamini-Hochberg over all their tail tests; `control`'s
 * comparisons at 95% with the band. Returns new lists, in the input's order.
 */
export function adjustPoint(
  candidates: readonly LabelledComparisons[],
  thresholdPct: number,
  alpha = FAMILY_ALPHA,
): LabelledComparisons[] {
  const out = candidates.map((c) => ({ label: c.label, comparison: [...c.comparison] }));
  const stages = new Set<StageName>(candidates.flatMap((c) => c.comparison.map((x) => x.stage)));
  const slots = (stage: StageName, metrics: readonly ComparableMetric[]) =>
    out.flatMap((c, ci) =>
      c.comparison.flatMap((x, xi) => (x.stage === stage && metrics.includes(x.metric) ? [[ci, xi] as const] : [])),
    );
  for (const stage of stages) {
    const means = slots(stage, ['mean']);
    const levels = holmLevels(
      means.map(([ci, xi]) => out[ci].comparison[xi].p ?? Number.NaN),
      alpha,
    );
    means.forEach(([ci, xi], i) => {
      const x = out[ci].comparison[xi];
      out[ci].comparison[xi] = adjusted(x, Number.isFinite(levels[i]) ? levels[i] : alpha, 'holm', thresholdPct);
    });
    const tails = slots(stage, ['p50', 'p90', 'p99', 'p99_9']);
    const bh = bhLevel(
      tails.map(([ci, xi]) => out[ci].comparison[xi].p ?? Number.NaN),
      alpha,
    );
    for (const [ci, xi] of tails)
      out[ci].comparison[xi] = adjusted(out[ci].comparison[xi], bh.alpha, 'bh', thresholdPct);
  }
  return out;
}

/** The control's comparisons: 95%, unadjusted (the noise floor), with the band. */
export function controlComparisons(comparison: readonly Comparison[], thresholdPct: number): Comparison[] {
  return comparison.map((c) => adjusted(c, FAMILY_ALPHA, 'none', thresholdPct));
}
