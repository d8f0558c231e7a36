/**
 * Tail comparisons (p50, p90, p99, p99.9) with slice cycles as the units: the merged-histogram
 * quantiles of binned slice histograms (slice-hist.ts), and their standard error by Woodruff's
 * linearisation over the paired cycles ({@link woodruffSe}).
 *
 * The estimate is the difference of the two sides' quantiles of their merged histograms (the
 * table's columns), never an average of per-slice percentiles. The standard error treats each
 * slice cycle as a unit (5 trials of 10 slices: 50), the pair of slices of one cycle together, so
 * what the host did in that cycle it did to both, as the Δ mean's delta method does (slices.ts).
 *
 * Why not a bootstrap of cycles: tried first (400 resamples, a t interval on the bootstrap se),
 * it under-covered p99 on the realistic model (9.4% A/A false calls over 1,000 runs, against
 * 6.1% here on the same data): a few stalled slices carry a quantile's variance, and resampling 50
 * cycles misjudges it. Coverage and false-call rates: test/report/calibration-realistic.test.ts,
 * docs/results.md ("Tested coverage on realistic data").
 *
 * Cost: one pass over each side's bins per stage (cumulative counts, cycles × bins), no
 * resampling; measured in bench/aa.ts's "comparisons ... per run" line.
 */
import type { StageName, StrategyResult } from '../types.js';
import { binValue, decodeBins } from './slice-hist.js';
import { normalQuantile } from './tdist.js';

/** The quantiles compared, as fractions, in COMPARABLE_METRICS' order after the mean. */
export const TAIL_METRICS = [
  ['p50', 0.5],
  ['p90', 0.9],
  ['p99', 0.99],
  ['p99_9', 0.999],
] as const;
export type TailMetric = (typeof TAIL_METRICS)[number][0];

/** One side's slices of every cycle, in cycle order: sparse bins and counts (empty: none). */
export type CycleHists = ReadonlyArray<{ bins: readonly number[]; counts: readonly number[] }>;

/** Quantiles per weighting of the cycles, per metric: `q[metric][r]`, ns (NaN: no samples). */
export type BootQuantiles = Record<TailMetric, Float64Array>;

/**
 * The cycles of `s`'s trials in `stage`, keyed by the baseline's cycles: for each baseline trial
 * (in order) and slice, `s`'s slice of the same trial index and slice (empty when `s` lacks it).
 * Undefined when the baseline has no binned slices in the stage (whole trials, a stage not in
 * TAIL_STAGES, or results written before bins).
 */
export function cyclesOf(baseline: StrategyResult, s: StrategyResult, stage: StageName): CycleHists | undefined {
  const byIndex = new Map(s.trials.map((t) => [t.index, t]));
  const out: Array<{ bins: readonly number[]; counts: readonly number[] }> = [];
  const empty = { bins: [], counts: [] };
  for (const b of baseline.trials) {
    const bs = b.slices?.[stage];
    if (!bs?.hist) return undefined;
    const t = byIndex.get(b.index)?.slices?.[stage];
    for (let k = 0; k < bs.hist.length; k++) {
      const h = t?.hist?.[k];
      out.push((h !== undefined ? decodeBins(h) : undefined) ?? empty);
    }
  }
  return out.length > 0 ? out : undefined;
}

/** The bin range [lo, hi] over several sides' cycles. */
export function binRange(sides: readonly CycleHists[]): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const cycles of sides)
    for (const c of cycles)
      if (c.bins.length) {
        lo = Math.min(lo, c.bins[0]);
        hi = Math.max(hi, c.bins[c.bins.length - 1]);
      }
  return [lo, hi];
}

/**
 * One side's quantiles of the merged histogram of the cycles listed in each of `draws` (a cycle
 * listed twice counts twice; `[0, 1, ..., N−1]`: every cycle once, the point estimate), over bins
 * `range`: HdrHistogram's rule, the value at rank ceil(p · total) of the merged counts. Each
 * cycle's counts are made cumulative over the range once; each quantile's bin is then found by
 * bisection on the weighted cumulative sum. NaN where a draw has no samples. Context: any; pure.
 */
export function bootQuantiles(
  cycles: CycleHists,
  draws: readonly Int32Array[],
  range: [number, number],
): BootQuantiles {
  const { lo, width, n, cum, totals } = cumulative(cycles, range);
  const out = Object.fromEntries(
    TAIL_METRICS.map(([m]) => [m, new Float64Array(draws.length)]),
  ) as unknown as BootQuantiles;
  const w = new Float64Array(n);
  const used: number[] = [];
  draws.forEach((d, r) => {
    w.fill(0);
    for (let i = 0; i < d.length; i++) w[d[i]]++;
    used.length = 0;
    let total = 0;
    for (let j = 0; j < n; j++) {
      if (w[j] === 0) continue;
      const t = totals[j];
      if (t === 0) continue;
      used.push(j);
      total += w[j] * t;
    }
    const at = (b: number): number => {
      let s = 0;
      for (const j of used) s += w[j] * cum[j * width + b];
      return s;
    };
    let from = 0;
    for (const [m, p] of TAIL_METRICS) {
      if (total === 0) {
        out[m][r] = Number.NaN;
        continue;
      }
      const rank = Math.max(1, Math.ceil(p * total));
      // The first bin whose cumulative count reaches rank (quantiles ascend: start at the last).
      let a = from;
      let z = width - 1;
      while (a < z) {
        const mid = (a + z) >>> 1;
        if (at(mid) >= rank) z = mid;
        else a = mid + 1;
      }
      from = a;
      out[m][r] = binValue(a + lo);
    }
  });
  return out;
}

/** One side's merged counts: per cycle its total and cumulative counts over `range` (as bootQuantiles). */
interface Cumulative {
  width: number;
  lo: number;
  n: number;
  cum: Float64Array;
  totals: Float64Array;
  /** Merged over all cycles: cumulative counts per bin. */
  merged: Float64Array;
  total: number;
}

function cumulative(cycles: CycleHists, range: [number, number]): Cumulative {
  const [lo, hi] = range;
  const width = Math.max(1, hi - lo + 1);
  const n = cycles.length;
  const cum = new Float64Array(n * width);
  const totals = new Float64Array(n);
  const merged = new Float64Array(width);
  for (let j = 0; j < n; j++) {
    const c = cycles[j];
    const row = j * width;
    for (let i = 0; i < c.bins.length; i++) cum[row + c.bins[i] - lo] += c.counts[i];
    for (let b = 1; b < width; b++) cum[row + b] += cum[row + b - 1];
    totals[j] = cum[row + width - 1];
    for (let b = 0; b < width; b++) merged[b] += cum[row + b];
  }
  let total = 0;
  for (let j = 0; j < n; j++) total += totals[j];
  return { width, lo, n, cum, totals, merged, total };
}

/** The first bin (index into the range) whose merged cumulative count reaches fraction p. */
function binAt(c: Cumulative, p: number): number {
  const rank = Math.max(1, Math.ceil(Math.min(1, Math.max(0, p)) * c.total));
  let a = 0;
  let z = c.width - 1;
  while (a < z) {
    const mid = (a + z) >>> 1;
    if (c.merged[mid] >= rank) z = mid;
    else a = mid + 1;
  }
  return a;
}

/**
 * Hall and Sheather's bandwidth for estimating the density at a p-quantile from n samples (Hall &
 * Sheather, "On the distribution of a studentized quantile", JRSS B 50, 1988; the default of
 * Koenker's quantreg, "hs"): h = n^(−1/3) · z_(0.975)^(2/3) · (1.5 φ(Φ⁻¹(p))² / (2 Φ⁻¹(p)² + 1))^(1/3).
 */
export function hallSheatherBandwidth(n: number, p: number): number {
  const z = normalQuantile(p);
  const phi = Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
  return n ** (-1 / 3) * Z_975 ** (2 / 3) * ((1.5 * phi * phi) / (2 * z * z + 1)) ** (1 / 3);
}
const Z_975 = normalQuantile(0.975);

/**
 * Per cycle, the linearised error of a side's p-quantile (Woodruff 1952; Francisco & Fuller
 * 1991): the quantile's error is −(F̂(q) − p)/f(q), F̂ the merged fraction at or below q, a ratio
 * of per-cycle counts whose cluster (cycle) variance is the same delta method as the mean's
 * (slices.ts). f, the density at q, is the merged histogram's ΔF/Δq over the quantiles at p ± h,
 * h Hall and Sheather's bandwidth for the side's sample count (at least one sample's share). Until
 * 2026-12-03 h was Woodruff's 2·se(F̂), about twice as wide at p50 and p90 here: since the
 * quantile function is convex in the tail, a wider window underestimates f there, and p90's
 * intervals covered 98.1% where 95% was meant (docs/results.md, "Tested coverage"). With
 * `density` 'log' (the default since 2026-12-06), Δq is measured on the log scale, f = ΔF /
 * (q · Δln q). The secant over p ± h overstates the quantile function's slope Q'(p) by about
 * h²·Q'''(p)/6; where a tail grows about exponentially (ln Q near linear in p, as the real runs'
 * one_way tail is: realistic.ts, REAL_QUANTILES) Q''' ≈ Q'·((ln Q)')², large, while the secant
 * of ln Q has no such term: f is less underestimated, se less overestimated. On the realistic model (stalls 11%, 2,000 runs) p99.9's
 * linear secant covered 97.5%, the log one 96.7%. Returns u_j / f per cycle (the caller differences the two sides'), or undefined when the side has no
 * samples.
 */
function linearised(c: Cumulative, p: number, density: TailMethod['density']): Float64Array | undefined {
  if (c.total === 0) return undefined;
  const b = binAt(c, p);
  const F = c.merged[b] / c.total;
  const perCycle = c.total / c.n;
  const u = new Float64Array(c.n);
  for (let j = 0; j < c.n; j++) u[j] = (c.cum[j * c.width + b] - F * c.totals[j]) / perCycle;
  const h = Math.max(hallSheatherBandwidth(c.total, p), 1 / c.total);
  let b1 = binAt(c, p - h);
  let b2 = binAt(c, p + h);
  if (b2 <= b1) {
    b1 = Math.max(0, b - 1);
    b2 = Math.min(c.width - 1, b + 1);
  }
  const dF = (c.merged[b2] - (b1 > 0 ? c.merged[b1 - 1] : 0)) / c.total;
  const hiV = binValue(b2 + c.lo + 0.5);
  const loV = binValue(b1 + c.lo - 0.5);
  const dq = density === 'log' ? binValue(b + c.lo) * Math.log(hiV / loV) : hiV - loV;
  const f = dF / dq;
  if (!(f > 0)) return undefined;
  for (let j = 0; j < c.n; j++) u[j] /= f;
  return u;
}

/** A tail difference's standard error and the degrees of freedom its t interval uses. */
export interface TailSe {
  se: number;
  df: number;
}

/** How tail intervals take their degrees of freedom: 'kurtosis' (the default) or N − 1 ('cycles'). */
/**
 * How the tails' interval is made (docs/results.md, "Tested coverage on realistic data", compares
 * them): `df` 'kurtosis' ({@link kurtosisDf}) or 'cycles' (N − 1, until 2026-12-06); `density`
 * 'log' (the quantile function's slope measured on the log scale) or 'linear' (until 2026-12-06).
 */
export interface TailMethod {
  df: 'kurtosis' | 'cycles';
  density: 'log' | 'linear';
}
export const TAIL_METHOD: Readonly<TailMethod> = { df: 'kurtosis', density: 'log' };

/**
 * Degrees of freedom for a t interval on the mean of `z` (n values) whose se is sd(z)/√n, by
 * Satterthwaite's matching of the variance of the sample variance: Var(s²) ≈ σ⁴ (2/(n−1) + κ/n),
 * κ the excess kurtosis, so df = 2 / (2/(n−1) + κ/n); κ from the sample (m₄/m₂² − 3, never below
 * 0, so df never exceeds n − 1).
 */
export function kurtosisDf(z: ArrayLike<number>): number {
  const n = z.length;
  let s = 0;
  for (let j = 0; j < n; j++) s += z[j];
  const mean = s / n;
  let m2 = 0;
  let m4 = 0;
  for (let j = 0; j < n; j++) {
    const d = (z[j] - mean) ** 2;
    m2 += d;
    m4 += d * d;
  }
  m2 /= n;
  m4 /= n;
  const kappa = m2 > 0 ? Math.max(0, m4 / (m2 * m2) - 3) : 0;
  return kappa > 0 ? 2 / (2 / (n - 1) + kappa / n) : n - 1;
}

/**
 * Standard errors of candidate − baseline for every tail metric by Woodruff's linearisation over
 * the paired cycles (`base[j]` and `cand[j]` ran in cycle j): per cycle z_j = e_B,j − e_A,j with
 * e the sides' linearised errors, se = sd(z)/√N, with the degrees of freedom {@link kurtosisDf}
 * gives z. Deterministic, one pass. NaN where a side has no samples.
 */
export function woodruffSe(
  base: CycleHists,
  cand: CycleHists,
  method: Readonly<TailMethod> = TAIL_METHOD,
): Record<TailMetric, TailSe> {
  const cb = cumulative(base, binRange([base]));
  const cc = cumulative(cand, binRange([cand]));
  const out = {} as Record<TailMetric, TailSe>;
  const none = { se: Number.NaN, df: Number.NaN };
  for (const [m, p] of TAIL_METRICS) {
    // Too few samples beyond the quantile on a side: it is that side's largest few samples, the
    // linearised errors collapse to ~0 and the interval to a point (a 16-CPU run with ~1000
    // exchanges called p99.9 "better" by [-852, -852]). Not estimable: no interval, no call.
    if (!tailEstimable(cb.total, p) || !tailEstimable(cc.total, p)) {
      out[m] = none;
      continue;
    }
    const eb = linearised(cb, p, method.density);
    const ec = linearised(cc, p, method.density);
    if (!eb || !ec || eb.length !== ec.length || eb.length < 2) {
      out[m] = none;
      continue;
    }
    const z = new Float64Array(eb.length);
    for (let j = 0; j < eb.length; j++) z[j] = eb[j] - ec[j];
    let s = 0;
    for (let j = 0; j < z.length; j++) s += z[j];
    const mean = s / z.length;
    let ss = 0;
    for (let j = 0; j < z.length; j++) ss += (z[j] - mean) ** 2;
    const se = Math.sqrt(ss / (z.length - 1) / z.length);
    // no spread between cycles at all: nothing to judge by
    out[m] = se > 0 ? { se, df: method.df === 'kurtosis' ? kurtosisDf(z) : z.length - 1 } : none;
  }
  return out;
}

/**
 * Samples a side must have beyond a quantile for its interval: total · (1 − p) ≥ this. Ten is
 * the usual floor for a normal approximation to a binomial count (n·p ≥ 10), here the count of
 * samples above the quantile, which is what Woodruff's interval is built on.
 */
export const MIN_SAMPLES_BEYOND_QUANTILE = 10;

/** Whether a side of `total` samples has enough beyond its p-quantile for an interval. */
export function tailEstimable(total: number, p: number): boolean {
  return total * (1 - p) >= MIN_SAMPLES_BEYOND_QUANTILE;
}
