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
 * - Stalls, drawn from a batch of real A/A runs (bench:aa's stall profile, stall-profile.ts;
 *   {@link STALLS} says which batch): each run's stall probability from the batch's per-run stalled
 *   shares (a busy host stalls most slices, a quiet one few), the same for both sides of a cycle
 *   and for every side of a cycle (stalled shares by position 18.1, 16.1, 16.4, 16.2, 16.2%), the
 *   sides of a cycle stalling together as often as the batch's did ({@link cycleStalls}); a stalled slice keeps a share
 *   of its samples and is slower by a depth, both from the batch's tables and drawn together from
 *   one uniform, the fewer samples the deeper (the batch's rank correlation of kept share and
 *   depth: {@link STALLS}); each of its samples is that many times slower. Until 2026-12-06 the
 *   stalls were 7% of slices, twice as often for the side that ran second, keeping 5–30% of their
 *   samples, 3–9× slower, from one run; the batch of 2026-12-06 stalled 16.6% of slices (2–42% a
 *   run), a tenth of them over 120× deeper, and the two sides of a cycle mostly together.
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

/**
 * The stall tables, [probability, value] read linearly between the points (depth: log-linearly),
 * from `npm run bench:aa -- --from DIR`'s stall profile of the batch of 2026-12-06 20:55–21:33
 * (105 A/A runs of inline and 4 copies, 5 trials × 10 slices of 40 ms, one_way: 4,362 of 26,250
 * slices stalled, 248 of them empty; docs/results.md, "Tested coverage on realistic data"):
 * slices under 30% of their strategy's median count in their run.
 */
export const STALLS = {
  /** A run's stalled share of slices. */
  runRate: [
    [0, 0.024],
    [0.1, 0.088],
    [0.25, 0.128],
    [0.5, 0.16],
    [0.75, 0.204],
    [0.9, 0.235],
    [1, 0.416],
  ],
  /** A stalled slice's count over the median count. */
  kept: [
    [0, 0],
    [0.1, 0.004],
    [0.25, 0.049],
    [0.5, 0.181],
    [0.75, 0.245],
    [0.9, 0.277],
    [1, 0.3],
  ],
  /** A stalled slice's mean over the median slice mean (those that recorded). */
  depth: [
    [0, 0.56],
    [0.1, 3.32],
    [0.25, 3.89],
    [0.5, 5.01],
    [0.75, 9.07],
    [0.9, 122.24],
    [1, 1230.1],
  ],
  /**
   * P(both sides of a cycle stalled) / P(a side stalled), per run over every pair of a cycle's
   * sides (the median over runs): the sides of a cycle stall together far more often than by
   * chance (a side 16.6% of the time), and in the first 35 runs as often when they ran next to each
   * other as when not (0.111 and 0.108): stalls are stretches longer than a cycle.
   */
  shared: 0.65,
  /** The correlation of two sides' log depths where both stalled and recorded (5,282 pairs). */
  depthCorrelation: 0.73,
} as const;

/** The value of a [probability, value] table at u: linear between its points, or log-linear. */
export function tableAt(table: ReadonlyArray<readonly [number, number]>, u: number, log = false): number {
  let i = 1;
  while (i < table.length - 1 && table[i][0] < u) i++;
  const [pa, va] = table[i - 1];
  const [pz, vz] = table[i];
  const f = pz > pa ? Math.min(1, Math.max(0, (u - pa) / (pz - pa))) : 0;
  return log ? va * (vz / va) ** f : va + f * (vz - va);
}

/** The standard normal CDF (Abramowitz & Stegun 7.1.26 for erf: |error| < 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * Which of a cycle's `k` sides stall at a run's `rate`, as a uniform per side for stallDraw (NaN:
 * not stalled). Stalls come in stretches longer than a cycle: with probability a, the cycle is in
 * one and every side stalls, their uniforms joined by a Gaussian copula of STALLS.depthCorrelation;
 * otherwise each side stalls alone with probability b. a and b solve P(a side stalls) = rate and
 * P(two given sides both stall) = STALLS.shared · rate: a = r(s − r)/(1 − 2r + rs), b = (r − a)/(1 − a).
 */
export function cycleStalls(rnd: () => number, normal: () => number, rate: number, k: number): number[] {
  const r = rate;
  const sh = Math.max(r, STALLS.shared);
  const a = Math.max(0, (r * (sh - r)) / (1 - 2 * r + r * sh));
  const b = a < 1 ? (r - a) / (1 - a) : 0;
  const out = new Array<number>(k).fill(Number.NaN);
  if (rnd() < a) {
    const rho = STALLS.depthCorrelation;
    const z0 = normal();
    for (let i = 0; i < k; i++) out[i] = normalCdf(rho * z0 + Math.sqrt(1 - rho * rho) * normal());
  } else for (let i = 0; i < k; i++) if (rnd() < b) out[i] = rnd();
  return out;
}

/** A stalled slice's kept share and depth, from one uniform: the fewer samples, the deeper. */
export function stallDraw(u: number): { kept: number; depth: number } {
  return { kept: tableAt(STALLS.kept, u), depth: tableAt(STALLS.depth, 1 - u, true) };
}

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
  /** Stall probability per slice; 0 or more: that, fixed; −1 (the default): each run's drawn from STALLS.runRate. */
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
 * One side's slice of the model: its sample count (`stall` NaN: not stalled; else a stalled
 * slice, keeping a share and slower by a depth, both {@link stallDraw} at `stall`), each sample drawn from the real run's quantiles × `factor` + `shift`, binned into
 * `scratch` (left zeroed). Context: a simulation; allocates the slice's bins.
 */
export function sideSlice(
  rnd: () => number,
  quantile: (u: number) => number,
  scratch: Int32Array,
  o: { samples: number; medianNs: number },
  factor: number,
  stall: number,
  shift: number,
): SideSlice {
  const s = Number.isNaN(stall) ? { kept: 0.7 + 0.3 * rnd(), depth: 1 } : stallDraw(stall);
  const n = Math.round(o.samples * s.kept); // 0: an empty slice (mean NaN), as real stalls leave them
  const slow = s.depth;
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
  const stall = runStall(rnd, o.stall);
  const scratch = new Int32Array(BINS_PER_OCTAVE * 48); // bins up to 2^48 ns
  const slice = (factor: number, stall: number, shift: number): SideSlice =>
    sideSlice(rnd, quantile, scratch, o, factor, stall, shift);
  for (let j = 0; j < o.trials * o.slices; j++) {
    const shared = Math.exp(0.25 * normal());
    const flip = rnd() < 0.1;
    const between = flip && rnd() < 0.5; // the flip falls between the two sides' slices
    if (flip && !between) level = level === 1 ? 1.16 : 1;
    const candFirst = rnd() < 0.5;
    const sides: Array<'b' | 'c'> = candFirst ? ['c', 'b'] : ['b', 'c'];
    const stalls = cycleStalls(rnd, normal, stall, 2);
    for (let pos = 0; pos < 2; pos++) {
      if (pos === 1 && between) level = level === 1 ? 1.16 : 1;
      const s = slice(level * shared * Math.exp(0.2 * normal()), stalls[pos], sides[pos] === 'c' ? o.shiftNs : 0);
      (sides[pos] === 'b' ? base : cand).push(s);
    }
  }
  return { base, cand };
}

/** The Δ mean's slice pairs of a simulated run: cycles where both sides recorded, as slicePairs keeps them. */
export function modelPairs(base: readonly SideSlice[], cand: readonly SideSlice[]): SlicePair[] {
  return base.flatMap((b, j) =>
    b.count > 0 && cand[j].count > 0 ? [{ nB: b.count, mB: b.mean, nA: cand[j].count, mA: cand[j].mean }] : [],
  );
}

export const MODEL_DEFAULTS = { trials: 5, slices: 10, samples: 600, medianNs: 23_500, stall: -1, shiftNs: 0 };

/** A run's stall probability: `fixed` when 0 or more, else drawn from STALLS.runRate. */
export function runStall(rnd: () => number, fixed: number): number {
  return fixed >= 0 ? fixed : tableAt(STALLS.runRate, rnd());
}

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
    tally('mean', compareSlices(modelPairs(d.base, d.cand)));
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
    const both = d.base.flatMap((b, j) => (b.count > 0 && d.cand[j].count > 0 ? [[b.mean, d.cand[j].mean]] : []));
    const diff = both.map(([b, c]) => b - c);
    const m = diff.reduce((a, x) => a + x, 0) / diff.length;
    const dev = diff.map((x) => (x - m) ** 2);
    const tot = dev.reduce((a, x) => a + x, 0);
    k += (diff.length * dev.reduce((a, x) => a + x * x, 0)) / tot ** 2;
    w +=
      [...dev]
        .sort((x, y) => y - x)
        .slice(0, 3)
        .reduce((a, x) => a + x, 0) / tot;
    const ld = both.map(([b, c]) => Math.log(b / c));
    const lm = ld.reduce((a, x) => a + x, 0) / ld.length;
    s += Math.sqrt(ld.reduce((a, x) => a + (x - lm) ** 2, 0) / (ld.length - 1));
  }
  return { kurtosis: k / runs, worst3Share: w / runs, sdLogDiff: s / runs };
}
