/**
 * Tail comparisons (p50, p90, p99, p99.9) with slice cycles as the units: the merged-histogram
 * quantiles of binned slice histograms (slice-hist.ts), and their standard error by Woodruff's
 * method over the paired cycles: a paired quantile test inverted ({@link woodruffSe}).
 *
 * The estimate is the difference of the two sides' quantiles of their merged histograms (the
 * table's columns), never an average of per-slice percentiles. The standard error treats each
 * slice cycle as a unit (5 trials of 10 slices: 50), the pair of slices of one cycle together, so
 * what the host did in that cycle it did to both, as the Δ mean's delta method does (slices.ts).
 *
 * Why not a bootstrap of cycles: tried first (400 resamples, a t interval on the bootstrap se),
 * it under-covered p99 on the realistic model (9.4% A/A false calls over 1,000 runs, against
 * 6.1% with the linearised se then in use, on the same data): a few stalled slices carry a
 * quantile's variance, and resampling 50 cycles misjudges it. Coverage and false-call rates:
 * test/report/calibration-realistic.test.ts, docs/results.md ("Tested coverage on realistic data").
 *
 * Cost: one pass over each side's bins per stage (cumulative counts, cycles × bins), then per
 * quantile two bisections over the shift, each step a pass over the cycles; no resampling;
 * measured in bench/aa.ts's "comparisons ... per run" line.
 */
import type { StageName, StrategyResult } from '../types.js';
import { tCritical95 } from './interval.js';
import { BINS_PER_OCTAVE, binValue, decodeBins } from './slice-hist.js';
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
  const [lo, hi] = range;
  const width = Math.max(1, hi - lo + 1);
  const n = cycles.length;
  // cum[j * width + b]: cycle j's samples in bins lo..lo+b.
  const cum = new Float64Array(n * width);
  for (let j = 0; j < n; j++) {
    const c = cycles[j];
    const row = j * width;
    for (let i = 0; i < c.bins.length; i++) cum[row + c.bins[i] - lo] += c.counts[i];
    for (let b = 1; b < width; b++) cum[row + b] += cum[row + b - 1];
  }
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
      const t = cum[j * width + width - 1];
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

/** The merged (`j` < 0) or cycle `j`'s count at or below `x` ns, the CDF linear in log x within a bin. */
function countAt(c: Cumulative, x: number, j: number): number {
  if (!(x > 0)) return 0;
  // Bin b holds the values whose 64·log2 rounds to b: [b − 0.5, b + 0.5) on that scale.
  const y = BINS_PER_OCTAVE * Math.log2(x) + 0.5 - c.lo;
  if (y < 0) return 0;
  const k = Math.min(c.width - 1, Math.floor(y));
  const t = Math.min(1, y - k);
  const row = j < 0 ? c.merged : c.cum;
  const at = j < 0 ? 0 : j * c.width;
  const below = k > 0 ? row[at + k - 1] : 0;
  return below + t * (row[at + k] - below);
}

/** The p-quantile of the pooled sample `b` ∪ (`c` − delta), ns: bisection on log x. */
function pooledQuantile(b: Cumulative, c: Cumulative, p: number, delta: number): number {
  const target = p * (b.total + c.total);
  let lo = Math.log2(Math.max(1e-3, Math.min(binValue(b.lo - 1), binValue(c.lo - 1) - delta)));
  let hi = Math.log2(Math.max(1, binValue(b.lo + b.width), binValue(c.lo + c.width) - delta));
  for (let it = 0; it < 48; it++) {
    const mid = (lo + hi) / 2;
    const x = 2 ** mid;
    if (countAt(b, x, -1) + countAt(c, x + delta, -1) >= target) hi = mid;
    else lo = mid;
  }
  return 2 ** hi;
}

/**
 * The paired two-sample test of "the candidate's p-quantile is the baseline's + delta" (Mood's
 * test for quantiles, with the cycles as clusters): x the p-quantile of the baseline pooled with
 * the candidate moved by −delta, T = F̂_c(x + delta) − F̂_b(x), each F̂ a ratio of per-cycle counts
 * whose cluster variance over the paired cycles is the delta method's (as the Δ mean's,
 * slices.ts). Under the hypothesis both fractions estimate p at the same point, whatever the two
 * distributions' shapes. Returns T/se(T): ±∞ for T ≠ 0 with no spread, NaN for T = 0 with none.
 */
function pairedQuantileT(b: Cumulative, c: Cumulative, p: number, delta: number, scratch: Float64Array): number {
  const x = pooledQuantile(b, c, p, delta);
  const N = b.n;
  let Cb = 0;
  let Cc = 0;
  for (let j = 0; j < N; j++) {
    scratch[j] = countAt(b, x, j);
    scratch[N + j] = countAt(c, x + delta, j);
    Cb += scratch[j];
    Cc += scratch[N + j];
  }
  const Fb = Cb / b.total;
  const Fc = Cc / c.total;
  const perB = b.total / N;
  const perC = c.total / N;
  let ss = 0;
  for (let j = 0; j < N; j++) {
    const z = (scratch[N + j] - Fc * c.totals[j]) / perC - (scratch[j] - Fb * b.totals[j]) / perB;
    ss += z * z; // the z_j sum to 0 by construction
  }
  const se = Math.sqrt(ss / (N - 1) / N);
  const T = Fc - Fb;
  if (se > 0) return T / se;
  return T === 0 ? Number.NaN : Math.sign(T) * Number.POSITIVE_INFINITY;
}

/**
 * The delta where the paired test's statistic reaches `target` (it rises with delta: a larger
 * delta moves the candidate down), by doubling steps from `start` then bisection; NaN when no
 * delta within `limit` of `start` reaches it (the test does not bound the difference there: the
 * statistic is a difference of two fractions, so with few cycles even a shift past every sample
 * may not be rejected).
 */
function solveDelta(
  b: Cumulative,
  c: Cumulative,
  p: number,
  target: number,
  start: number,
  step: number,
  limit: number,
  scratch: Float64Array,
): number {
  const at = (d: number) => {
    const v = pairedQuantileT(b, c, p, d, scratch);
    return Number.isNaN(v) ? 0 : v; // no spread and no difference: not rejected
  };
  let lo = start;
  let hi = start;
  let w = step;
  if (at(start) < target) {
    for (hi = start + w; at(hi) < target; hi = start + w) {
      lo = hi;
      w *= 2;
      if (w > limit) return Number.NaN;
    }
  } else {
    for (lo = start - w; at(lo) >= target; lo = start - w) {
      hi = lo;
      w *= 2;
      if (w > limit) return Number.NaN;
    }
  }
  for (let it = 0; it < 40; it++) {
    const mid = (lo + hi) / 2;
    if (at(mid) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
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
 * intervals covered 98.1% where 95% was meant (docs/results.md, "Tested coverage"). Returns
 * u_j / f per cycle (the caller differences the two sides'), or undefined when the side has no
 * samples.
 */
function linearised(c: Cumulative, p: number): Float64Array | undefined {
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
  const dq = binValue(b2 + c.lo + 0.5) - binValue(b1 + c.lo - 0.5);
  const f = dF / dq;
  if (!(f > 0)) return undefined;
  for (let j = 0; j < c.n; j++) u[j] /= f;
  return u;
}

/**
 * Standard errors of candidate − baseline for every tail metric, by Woodruff's method for a paired
 * difference: the 95% interval of the difference is the set of shifts delta that the paired
 * quantile test ({@link pairedQuantileT}, t on N − 1 df) does not reject, and se is its length
 * over 2·t(0.975, N − 1) (Woodruff 1952; the se that survey software gives for a quantile), so
 * that `diff ± t·se` (and family.ts's wider levels) stand on it. Deterministic: two bisections per
 * metric over the cumulative counts. Where the test bounds no interval (a short run's few cycles:
 * the statistic is a difference of two fractions, and 8 cycles may reject no shift at all on one
 * side) the linearisation below stands in, and `how` says which was used. NaN where a side has too
 * few samples beyond the quantile, or the cycles show no spread.
 *
 * Why not the linearisation alone: q̂ error ≈ −(F̂(q) − p)/f(q) with f the merged histogram's ΔF/Δq over
 * p ± h (Hall and Sheather's h), the only method until 2026-12-06: it needs the density at the quantile, and
 * on the realistic model (docs/results.md, "Tested coverage on realistic data") neither a better
 * density nor the true one mends it. Stalled slices make the tail between p98.5 and p99.4 rise
 * threefold, over about the range p̂'s own fraction wanders (sd 0.0017): the per-cycle variance
 * and the density, taken at each side's own q̂, move with the error itself, and p99 covered 93%
 * (with the true density, 90%). At p99.9 the window p ± 0.0005 spans half of 1 − p, overstates
 * 1/f by 15% and covered 97.3%. The test asks only for fractions at one common point, never a
 * density: 10,000 runs, seeds 51/52/61/62, cover 94.7–96.7% on every tail statistic.
 */
export function woodruffSe(
  base: CycleHists,
  cand: CycleHists,
  how?: Partial<Record<TailMetric, TailSeMethod>>,
): Record<TailMetric, number> {
  const cb = cumulative(base, binRange([base]));
  const cc = cumulative(cand, binRange([cand]));
  const out = {} as Record<TailMetric, number>;
  const N = base.length;
  const t = tCritical95(N - 1);
  const scratch = new Float64Array(2 * N);
  // A shift further than this from the estimate lies past every sample of both sides.
  const limit = 2 * Math.max(binValue(cb.lo + cb.width), binValue(cc.lo + cc.width));
  for (const [m, p] of TAIL_METRICS) {
    // Too few samples beyond the quantile on a side: it is that side's largest few samples, the
    // per-cycle fractions collapse and the interval to a point (a 16-CPU run with ~1000
    // exchanges called p99.9 "better" by [-852, -852]). Not estimable: no interval, no call.
    if (
      cand.length !== N ||
      N < 2 ||
      cb.total === 0 ||
      cc.total === 0 ||
      !tailEstimable(cb.total, p) ||
      !tailEstimable(cc.total, p)
    ) {
      out[m] = Number.NaN;
      continue;
    }
    const qb = binValue(binAt(cb, p) + cb.lo);
    const diff = binValue(binAt(cc, p) + cc.lo) - qb;
    let se = Number.NaN;
    if (Number.isFinite(pairedQuantileT(cb, cc, p, diff, scratch))) {
      const step = 0.05 * Math.max(qb, diff + qb);
      const lo = solveDelta(cb, cc, p, -t, diff, step, limit, scratch);
      const hi = solveDelta(cb, cc, p, t, diff, step, limit, scratch);
      se = (hi - lo) / (2 * t);
    }
    if (se > 0) {
      out[m] = se;
      if (how) how[m] = 'inverted';
      continue;
    }
    // The test bounds no interval (few cycles: it rejects no shift on one side) or the cycles
    // show no spread at the estimate: the linearisation, which always gives one where the
    // cycles vary, as before 2026-12-06.
    se = linearisedSe(cb, cc, p);
    out[m] = se;
    if (how && se > 0) how[m] = 'linearised';
  }
  return out;
}

/** How {@link woodruffSe} found a metric's standard error. */
export type TailSeMethod = 'inverted' | 'linearised';

/**
 * se of candidate − baseline at p by Woodruff's linearisation over the paired cycles: per cycle
 * z_j = e_B,j − e_A,j with e the sides' linearised errors ({@link linearised}), se = sd(z)/√N;
 * NaN with no spread between cycles at all.
 */
function linearisedSe(cb: Cumulative, cc: Cumulative, p: number): number {
  const eb = linearised(cb, p);
  const ec = linearised(cc, p);
  if (!eb || !ec || eb.length !== ec.length || eb.length < 2) return Number.NaN;
  let s = 0;
  for (let j = 0; j < eb.length; j++) s += eb[j] - ec[j];
  const mean = s / eb.length;
  let ss = 0;
  for (let j = 0; j < eb.length; j++) ss += (eb[j] - ec[j] - mean) ** 2;
  const se = Math.sqrt(ss / (eb.length - 1) / eb.length);
  return se > 0 ? se : Number.NaN;
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
