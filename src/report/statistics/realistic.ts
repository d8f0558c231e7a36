/**
 * Calibration on data modelled on real runs: simulated runs of a baseline against a candidate
 * whose every sample is the baseline model's plus a known shift (0: A/A), sliced as `--slice`
 * measures them, compared exactly as a real run is: the Δ mean by slice cycle (compareSlices),
 * the tails' merged binned quantiles with Woodruff's standard error over cycles (tails.ts). Counts, per
 * statistic, how often the 95% interval calls a difference and how often it covers the shift.
 *
 * The model, and where each part comes from (a default `deferlab run --control` on this 2-core
 * host under load 3–15, 2026-12-02: inline against its A/A copy, one_way, 50 slice cycles):
 *
 * - Samples: the real run's merged one_way distribution, as its quantile function relative to
 *   p50 ({@link REAL_QUANTILES}: log-linear between the points; p99 = 7.2 × p50, p99.9 = 80 ×,
 *   p99.999 = 1200 ×): heavy-tailed and skewed, not a log-normal.
 * - The host: a speed level shared by both sides of a cycle that flips between 1 and 1.16 (the
 *   two p50 levels 16% apart in docs/architecture.md) with probability 0.1 per cycle (the real
 *   cycle means' lag-1 autocorrelation 0.19), and half the flips fall between the two sides'
 *   slices: the host changes speed mid-cycle and only the second side sees it. On top, a shared
 *   log-normal factor (sd 0.25) and each side's own (sd 0.2): together the real within-cycle
 *   correlation of log slice means (0.53).
 * - Stalls: a slice stalls with probability 7% (the real fraction of slices with under 30% of the
 *   median count), twice as often for the side that runs second in its cycle as for the first
 *   (the order is random per cycle, as schedule.ts draws it): a stalled slice records 5–30% of
 *   the samples, each 3–9 × slower (the real stalled slices' means: 3.7–8.6 × the median).
 *   Checked against the real paired differences: {@link describeModel} gives the same summary
 *   statistics as fit from the real run (kurtosis of the paired Δ of slice means, the share of
 *   its variance in the 3 worst cycles) so a test can hold the model near them.
 *
 * Scaled down for a unit test: `samples` per slice (real: ~1,650 in 100 ms on a loaded host).
 * Point estimates of the tails are the binned merged quantiles (1.09% resolution). Pure and seeded.
 */
import type { ComparableMetric } from '../types.js';
import { intervalOf } from './interval.js';
import { mulberry32, normalOf } from './prng.js';
import { BINS_PER_OCTAVE } from './slice-hist.js';
import { compareSlices, type SlicePair } from './slices.js';
import {
  binRange,
  bootQuantiles,
  type CycleHists,
  TAIL_METHOD,
  TAIL_METRICS,
  type TailMethod,
  woodruffSe,
} from './tails.js';

/** The real run's one_way quantile function, relative to its p50: [probability, value / p50]. */
export const REAL_QUANTILES: ReadonlyArray<readonly [number, number]> = [
  [0, 0.3],
  [0.001, 0.366],
  [0.01, 0.446],
  [0.05, 0.57],
  [0.1, 0.658],
  [0.15, 0.69],
  [0.2, 0.712],
  [0.25, 0.735],
  [0.3, 0.761],
  [0.35, 0.799],
  [0.4, 0.87],
  [0.45, 0.946],
  [0.5, 1],
  [0.55, 1.03],
  [0.6, 1.05],
  [0.65, 1.08],
  [0.7, 1.12],
  [0.75, 1.18],
  [0.8, 1.27],
  [0.85, 1.38],
  [0.9, 1.58],
  [0.95, 2.06],
  [0.96, 2.16],
  [0.97, 2.61],
  [0.98, 3.27],
  [0.99, 7.15],
  [0.992, 11.7],
  [0.994, 20.7],
  [0.996, 32.9],
  [0.998, 50.1],
  [0.999, 80.1],
  [0.9993, 89.4],
  [0.9996, 129],
  [0.9998, 158],
  [0.9999, 224],
  [0.99995, 364],
  [0.99999, 1200],
  [1, 1500],
];

export interface RealisticOptions {
  /** Simulated runs. */
  runs: number;
  /** The candidate's shift on every sample, ns (0: A/A). */
  shiftNs: number;
  seed: number;
  /** Trials × slices per trial: the cycles (default 5 × 10, `deferlab run`'s). */
  trials?: number;
  slices?: number;
  /** Samples in an unstalled slice (default 600). */
  samples?: number;
  /** The distribution's p50, ns (default 23,500: the real run's). */
  medianNs?: number;
  /** Stall probability per slice (default 0.07). */
  stall?: number;
}

export interface StatCalibration {
  n: number;
  /** 95% intervals that excluded 0. */
  called: number;
  /** 95% intervals that held the true shift. */
  covered: number;
  /** Each run's unadjusted p-value (for a uniformity check). */
  p: number[];
  /** Each run's estimate (candidate − baseline, ns), its 95% interval's half-width and its se, ns. */
  diff: number[];
  half: number[];
  se: number[];
}

export interface SideSlice {
  count: number;
  mean: number;
  bins: number[];
  counts: number[];
}

/** One simulated run's slices: per cycle, the baseline's and the candidate's. */
interface RunData {
  base: SideSlice[];
  cand: SideSlice[];
}

export function sampler(rnd: () => number) {
  const normal = normalOf(rnd);
  const logQ = REAL_QUANTILES.map(([, v]) => Math.log(v));
  const quantile = (u: number): number => {
    let a = 0;
    let z = REAL_QUANTILES.length - 1;
    while (z - a > 1) {
      const mid = (a + z) >>> 1;
      if (REAL_QUANTILES[mid][0] <= u) a = mid;
      else z = mid;
    }
    const [pa] = REAL_QUANTILES[a];
    const [pz] = REAL_QUANTILES[z];
    return Math.exp(logQ[a] + ((u - pa) / (pz - pa)) * (logQ[z] - logQ[a]));
  };
  return { normal, quantile };
}

/**
 * One side's slice of the model: its sample count (a stalled slice keeps 5-30%, each sample 3-9x
 * slower), each sample drawn from the real run's quantiles × `factor` + `shift`, binned into
 * `scratch` (left zeroed). Context: a simulation; allocates the slice's bins.
 */
export function sideSlice(
  rnd: () => number,
  quantile: (u: number) => number,
  scratch: Int32Array,
  o: { samples: number; medianNs: number },
  factor: number,
  stalled: boolean,
  shift: number,
): SideSlice {
  const n = Math.max(1, Math.round(o.samples * (stalled ? 0.05 + 0.25 * rnd() : 0.7 + 0.3 * rnd())));
  const slow = stalled ? 3 * 3 ** rnd() : 1;
  let sum = 0;
  let lo = scratch.length;
  let hi = 0;
  for (let i = 0; i < n; i++) {
    const v = o.medianNs * quantile(rnd()) * factor * slow + shift;
    sum += v;
    const b = Math.min(scratch.length - 1, Math.max(0, Math.round(BINS_PER_OCTAVE * Math.log2(v))));
    scratch[b]++;
    if (b < lo) lo = b;
    if (b > hi) hi = b;
  }
  const bins: number[] = [];
  const counts: number[] = [];
  for (let b = lo; b <= hi; b++) {
    if (scratch[b] === 0) continue;
    bins.push(b);
    counts.push(scratch[b]);
    scratch[b] = 0;
  }
  return { count: n, mean: sum / n, bins, counts };
}

/** Simulate one run (see the top of the file). */
export function simulateRun(rnd: () => number, o: Required<Omit<RealisticOptions, 'runs' | 'seed'>>): RunData {
  const { normal, quantile } = sampler(rnd);
  const base: SideSlice[] = [];
  const cand: SideSlice[] = [];
  let level = rnd() < 0.5 ? 1 : 1.16;
  const scratch = new Int32Array(BINS_PER_OCTAVE * 48); // bins up to 2^48 ns
  const slice = (factor: number, stalled: boolean, shift: number): SideSlice =>
    sideSlice(rnd, quantile, scratch, o, factor, stalled, shift);
  for (let j = 0; j < o.trials * o.slices; j++) {
    const shared = Math.exp(0.25 * normal());
    const flip = rnd() < 0.1;
    const between = flip && rnd() < 0.5; // the flip falls between the two sides' slices
    if (flip && !between) level = level === 1 ? 1.16 : 1;
    const candFirst = rnd() < 0.5;
    const sides: Array<'b' | 'c'> = candFirst ? ['c', 'b'] : ['b', 'c'];
    for (let pos = 0; pos < 2; pos++) {
      if (pos === 1 && between) level = level === 1 ? 1.16 : 1;
      const stalled = rnd() < o.stall * (pos === 0 ? 2 / 3 : 4 / 3);
      const s = slice(level * shared * Math.exp(0.2 * normal()), stalled, sides[pos] === 'c' ? o.shiftNs : 0);
      (sides[pos] === 'b' ? base : cand).push(s);
    }
  }
  return { base, cand };
}

export const MODEL_DEFAULTS = { trials: 5, slices: 10, samples: 600, medianNs: 23_500, stall: 0.07, shiftNs: 0 };

/**
 * Run the calibration: per statistic (mean, p50, p90, p99, p99_9), how often the unadjusted 95%
 * interval called a difference and how often it held the shift, with each run's p-value; the
 * tails' intervals made by `method` (the run's own by default).
 * Context: any; pure (seeded).
 */
export function calibrateRealistic(
  opts: RealisticOptions,
  method: Readonly<TailMethod> = TAIL_METHOD,
): Record<ComparableMetric, StatCalibration> {
  const o = { ...MODEL_DEFAULTS, ...opts };
  const rnd = mulberry32(opts.seed);
  const out = Object.fromEntries(
    (['mean', 'p50', 'p90', 'p99', 'p99_9'] as const).map((m) => [
      m,
      { n: 0, called: 0, covered: 0, p: [], diff: [], half: [], se: [] },
    ]),
  ) as unknown as Record<ComparableMetric, StatCalibration>;
  const tally = (
    m: ComparableMetric,
    r: { ciLow: number; ciHigh: number; diff: number; verdict: string; p?: number; se?: number },
  ) => {
    if (!Number.isFinite(r.ciLow)) return;
    const x = out[m];
    x.n++;
    if (r.verdict !== 'within-noise') x.called++;
    if (r.ciLow <= o.shiftNs && o.shiftNs <= r.ciHigh) x.covered++;
    x.p.push(r.p ?? Number.NaN);
    x.diff.push(r.diff);
    x.half.push((r.ciHigh - r.ciLow) / 2);
    x.se.push(r.se ?? Number.NaN);
  };
  for (let run = 0; run < opts.runs; run++) {
    const d = simulateRun(rnd, o);
    const pairs: SlicePair[] = d.base.map((b, j) => ({
      nB: b.count,
      mB: b.mean,
      nA: d.cand[j].count,
      mA: d.cand[j].mean,
    }));
    tally('mean', compareSlices(pairs));
    const hb: CycleHists = d.base;
    const hc: CycleHists = d.cand;
    const all = [Int32Array.from(hb.keys())];
    const pb = bootQuantiles(hb, all, binRange([hb]));
    const pc = bootQuantiles(hc, all, binRange([hc]));
    const se = woodruffSe(hb, hc, method);
    for (const [m] of TAIL_METRICS) {
      const b = pb[m][0];
      const v = pc[m][0];
      tally(
        m,
        intervalOf({ n: hb.length, baseline: b, value: v, diff: v - b, df: se[m].df }, se[m].se, 'lower', () => ''),
      );
    }
  }
  return out;
}

/** Summary statistics of a simulated run's paired slice means, to hold the model near the real run's. */
export function describeModel(seed: number, runs = 20): { kurtosis: number; worst3Share: number; sdLogDiff: number } {
  const rnd = mulberry32(seed);
  const o = { ...MODEL_DEFAULTS };
  let k = 0;
  let w = 0;
  let s = 0;
  for (let r = 0; r < runs; r++) {
    const d = simulateRun(rnd, o);
    const diff = d.base.map((b, j) => b.mean - d.cand[j].mean);
    const m = diff.reduce((a, x) => a + x, 0) / diff.length;
    const dev = diff.map((x) => (x - m) ** 2);
    const tot = dev.reduce((a, x) => a + x, 0);
    k += (diff.length * dev.reduce((a, x) => a + x * x, 0)) / tot ** 2;
    w +=
      [...dev]
        .sort((x, y) => y - x)
        .slice(0, 3)
        .reduce((a, x) => a + x, 0) / tot;
    const ld = d.base.map((b, j) => Math.log(b.mean / d.cand[j].mean));
    const lm = ld.reduce((a, x) => a + x, 0) / ld.length;
    s += Math.sqrt(ld.reduce((a, x) => a + (x - lm) ** 2, 0) / (ld.length - 1));
  }
  return { kurtosis: k / runs, worst3Share: w / runs, sdLogDiff: s / runs };
}
