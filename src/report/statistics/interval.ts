/**
 * The paired comparison: a 95% interval of the mean per-trial difference, the smallest effect it
 * would likely have called, and the verdict. Pure numbers: nothing of the results model but the
 * Comparison shape it fills. Shared by stats.ts (pairs of trials) and slices.ts (slice cycles).
 *
 * The comparison method, and why (also in docs/results.md):
 *
 * Trials interleave strategies (A0 B0 C0 A1 B1 C1 ...), so trial i of a strategy ran right next to
 * trial i of the baseline, and whatever slowed the machine during that stretch (another process,
 * thermal state, a thread placement that made p50 bimodal) slowed both. We therefore work on the
 * *paired differences* d_i = candidate_i − baseline_i, which cancels that shared drift, and report
 * the mean of the d_i with a two-sided 95% Student-t interval: mean(d) ± t(0.975, n−1) · sd(d)/√n.
 *
 * Why this and not the alternatives, for the n = 3..20 trials a run has:
 * - Rank methods (sign test, Wilcoxon signed-rank, order-statistic intervals for the median) cannot
 *   reach 95% confidence below n = 6 pairs at all: with 3..5 trials they would call everything
 *   noise, whatever the data.
 * - A bootstrap has only a handful of distinct resamples at n = 3..5 (10 for n = 3) and its
 *   percentile interval is known to under-cover badly at such n: it would call noise a regression.
 * - The t interval is exact when the differences are normal, and each per-trial value is a summary
 *   of thousands of samples: per-trial means are close to normal (central limit theorem), so the
 *   differences are too. At n = 3 it is wide (t = 4.30): that is the honest price of 3 trials.
 *   For tail metrics (p99, p99.9) per-trial values are less normal; the interval is then
 *   approximate, which the docs say.
 * Unpaired methods (Welch) would throw away the pairing and with it most of the noise reduction
 * that interleaving buys.
 *
 * Pairs in which either side is missing (stage absent or count 0, i.e. NaN here) are dropped.
 */

import type { Comparison, Verdict } from '../types.js';
import { tCriticalTwoSided, tTwoSidedP } from './tdist.js';

/** Two-sided 95% Student-t critical values t(0.975, df) for df = 1..30 (index = df). */
const T975 = [
  Number.NaN,
  12.7062,
  4.3027,
  3.1824,
  2.7764,
  2.5706,
  2.4469,
  2.3646,
  2.306,
  2.2622,
  2.2281,
  2.201,
  2.1788,
  2.1604,
  2.1448,
  2.1314,
  2.1199,
  2.1098,
  2.1009,
  2.093,
  2.086,
  2.0796,
  2.0739,
  2.0687,
  2.0639,
  2.0595,
  2.0555,
  2.0518,
  2.0484,
  2.0452,
  2.0423,
];
/** Standard normal 0.975 quantile. */
const Z975 = 1.959963984540054;

/**
 * One-sided Student-t quantiles t(0.80, df) for df = 1..30 (index = df): the power term of the
 * minimum detectable effect (80% power). Checked against numerical integration of the t density.
 */
const T80 = [
  Number.NaN,
  1.3764,
  1.0607,
  0.9785,
  0.941,
  0.9195,
  0.9057,
  0.896,
  0.8889,
  0.8834,
  0.8791,
  0.8755,
  0.8726,
  0.8702,
  0.8681,
  0.8662,
  0.8647,
  0.8633,
  0.862,
  0.861,
  0.86,
  0.8591,
  0.8583,
  0.8575,
  0.8569,
  0.8562,
  0.8557,
  0.8551,
  0.8546,
  0.8542,
  0.8538,
];
/** Standard normal 0.80 quantile. */
const Z80 = 0.8416212335729143;

/**
 * t(0.975, df). Table for df ≤ 30; beyond, the Cornish-Fisher expansion of t around the normal
 * quantile (accurate to ~1e-4 from df = 30, where it gives 2.0423; plain 1.96 would be 4% narrow).
 */
export function tCritical95(df: number): number {
  if (!(df >= 1)) return Number.NaN;
  // A fractional df (the tails' kurtosis-matched df, tails.ts): the exact quantile, so the
  // interval and the p-value (tTwoSidedP, fractional) agree on what is called.
  if (!Number.isInteger(df)) return tCriticalTwoSided(0.05, df);
  const d = df;
  if (d <= 30) return T975[d];
  return cornishFisherT(Z975, d);
}

/** t(0.80, df): table for df ≤ 30, the Cornish-Fisher expansion beyond (0.8538 at df 30). */
export function tQuantile80(df: number): number {
  if (!(df >= 1)) return Number.NaN;
  if (!Number.isInteger(df)) return tCriticalTwoSided(0.4, df); // t(0.80) = the two-sided 0.40 point
  const d = df;
  if (d <= 30) return T80[d];
  return cornishFisherT(Z80, d);
}

/** The t quantile for `d` degrees of freedom from the normal quantile `z` (Cornish-Fisher, 3 terms). */
function cornishFisherT(z: number, d: number): number {
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return (
    z +
    (z3 + z) / (4 * d) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * d * d * d)
  );
}

export interface CompareOptions {
  /** Which direction is better. Latencies: `lower` (the default). Throughputs, entropy rates: `higher`. */
  better?: 'lower' | 'higher';
}

/** The result of {@link compare}: a {@link Comparison} without the stage and metric it is about. */
export type Interval = Omit<Comparison, 'stage' | 'metric'> & { /** pairs used */ n: number };

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Compare a strategy's per-trial values with the baseline's: trial i is paired with baseline
 * trial i (interleaved runs; see the top of this file). Non-finite entries drop their pair; extra
 * trials on either side (an interrupted run) are ignored.
 *
 * Verdict: `regression` when the 95% interval lies entirely on the worse side of zero,
 * `improvement` when entirely on the better side, otherwise `within-noise`. With fewer than 2
 * pairs there is no interval: NaN bounds, `within-noise`, and `method` says why.
 *
 * Context: any thread; pure.
 */
export function compare(baselineTrials: number[], trials: number[], opts: CompareOptions = {}): Interval {
  const better = opts.better ?? 'lower';
  const b: number[] = [];
  const v: number[] = [];
  const len = Math.min(baselineTrials.length, trials.length);
  for (let i = 0; i < len; i++) {
    if (Number.isFinite(baselineTrials[i]) && Number.isFinite(trials[i])) {
      b.push(baselineTrials[i]);
      v.push(trials[i]);
    }
  }
  const n = b.length;
  const baseline = n > 0 ? mean(b) : Number.NaN;
  const value = n > 0 ? mean(v) : Number.NaN;
  const diffs = v.map((x, i) => x - b[i]);
  const diff = n > 0 ? mean(diffs) : Number.NaN;
  if (n < 2) {
    return intervalOf(
      { n, baseline, value, diff },
      Number.NaN,
      better,
      () =>
        `paired t: no interval from ${n} paired trial${n === 1 ? '' : 's'} (needs at least 2; use --trials 3 or more)`,
    );
  }
  const sd = Math.sqrt(diffs.reduce((a, d) => a + (d - diff) ** 2, 0) / (n - 1));
  return intervalOf(
    { n, baseline, value, diff },
    sd / Math.sqrt(n),
    better,
    (df, t) => `paired t, 95% interval of the mean per-trial difference: n=${n} pairs, df=${df}, t=${t.toFixed(3)}`,
  );
}

/**
 * A paired comparison's Interval from its point estimate and standard error `se` (n − 1 degrees
 * of freedom, or `est.df` where the caller has its own: the tails', tails.ts kurtosisDf): `diff ± t(0.975, n−1) · se`, the detectable effect and the verdict, and `method`
 * says it in words. `se` NaN (fewer than 2 pairs): no interval. Shared by {@link compare} (pairs of
 * trials) and compareSlices (slice cycles, slices.ts).
 */
export function intervalOf(
  est: { n: number; baseline: number; value: number; diff: number; df?: number },
  se: number,
  better: 'lower' | 'higher',
  method: (df: number, t: number) => string,
): Interval {
  const ratio = est.value / est.baseline;
  if (!(est.n >= 2) || Number.isNaN(se)) {
    return {
      ...est,
      ciLow: Number.NaN,
      ciHigh: Number.NaN,
      ratio,
      detectable: Number.NaN,
      verdict: 'within-noise',
      method: method(Number.NaN, Number.NaN),
    };
  }
  const df = est.df ?? est.n - 1;
  const t = tCritical95(df);
  const ciLow = est.diff - t * se;
  const ciHigh = est.diff + t * se;
  return {
    ...est,
    ciLow,
    ciHigh,
    ratio,
    detectable: minimumDetectable(se, df),
    verdict: verdictOf(ciLow, ciHigh, better),
    method: method(df, t),
    se,
    df,
    p: se > 0 ? tTwoSidedP(est.diff / se, df) : est.diff === 0 ? 1 : 0,
  };
}

/**
 * The minimum detectable effect of a paired comparison: the true difference that a 95% interval
 * with this standard error `se` (and `df` degrees of freedom) would exclude 0 for, 80% of the
 * time: (t(0.975, df) + t(0.80, df)) · se. It is what "within noise" rules out: a regression at
 * least this large would, 4 times in 5, have been called. (The interval's half-width, t(0.975) ·
 * se, is the size detected only half the time.) Uses the sample sd, so it is itself an estimate.
 */
export function minimumDetectable(se: number, df: number): number {
  return (tCritical95(df) + tQuantile80(df)) * se;
}

/** Policy: a difference is called only when the whole interval is on one side of zero. */
export function verdictOf(ciLow: number, ciHigh: number, better: 'lower' | 'higher'): Verdict {
  const above = ciLow > 0;
  const below = ciHigh < 0;
  if (!above && !below) return 'within-noise';
  const worse = better === 'lower' ? above : below;
  return worse ? 'regression' : 'improvement';
}
