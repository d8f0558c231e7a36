/**
 * Calibration of the comparison method on synthetic data with a known answer: many simulated
 * runs of a baseline against a candidate whose latencies are the baseline's shifted by a known
 * amount (0 for an A/A comparison), compared exactly as a real run's trials are ({@link compare}
 * on per-trial summaries, paired by trial). Counts how often each metric's 95% interval calls a
 * difference, and how often it covers the true shift.
 *
 * The test suite holds the method to the bars in docs/results.md ("Tested coverage"); this
 * module is pure computation (no threads, no clock), seeded, and fast enough for a unit test.
 *
 * The latency model, per sample: a log-normal body (median `medianNs`, sigma 0.3) plus, with
 * probability 1%, a uniform tail up to 5 × the median (a kworker wake-up). Each trial has a
 * drift shared by both sides (additive, normal with sd `driftNs`: what interleaving pairs away)
 * and a factor of its own per side (normal around 1, sd `jitter`: the host state each trial
 * meets). The candidate's samples are the baseline model's plus `shiftNs`, so its true Δ is
 * exactly `shiftNs` for the mean and for every percentile. With `control`, a third side (the
 * baseline's model again) is the A/A control, and its interval is the noise floor a called
 * difference must lie outside of (the rule of `applyFloor`).
 *
 * With `slices` > 1 a trial is that many slices of `samples` each, as `--slice` measures them
 * (src/harness/round.ts), each slice holding 50–100% of them (a stalled slice records fewer):
 * drift and each side's factor are drawn per slice cycle, the mean is compared by slice cycle
 * (compareSlices, as compareStage does for sliced trials) and the tail trial by trial, over the
 * trial's pooled samples.
 */
import type { ComparableMetric } from '../types.js';
import { COMPARABLE_METRICS } from '../types.js';
import { compare } from './interval.js';
import { mulberry32, normalOf } from './prng.js';
import { compareSlices, type SlicePair } from './slices.js';
import { withinFloor } from './stats.js';

export interface CalibrationOptions {
  /** Simulated comparisons (runs). */
  comparisons: number;
  /** Trials per strategy in each run (paired). */
  trials: number;
  /** Latency samples per trial. */
  samples: number;
  /** The candidate's true shift, ns (0: A/A). */
  shiftNs: number;
  seed: number;
  medianNs?: number;
  /** Sd of the per-trial drift shared by both sides, ns. */
  driftNs?: number;
  /** Sd of each side's own per-trial factor (0.02 = 2%). */
  jitter?: number;
  /** Also simulate an A/A control (a third side, the baseline's model) and apply its noise floor. */
  control?: boolean;
  /** Slices per trial, each of `samples` samples (1: whole trials). */
  slices?: number;
}

export interface MetricCalibration {
  /** Comparisons with an interval. */
  n: number;
  /** Intervals that excluded 0: a difference was called. */
  called: number;
  /** Intervals that contained the true shift. */
  covered: number;
  /** Mean of the minimum detectable effect over the comparisons, ns. */
  meanDetectable: number;
  /** Mean interval half-width, ns. */
  meanHalfWidth: number;
  /** With `control`: differences still called once the control's noise floor is applied. */
  calledBeyondFloor: number;
}

interface Side {
  summary: Record<ComparableMetric, number>;
  /** Each slice's sample count and mean (one entry for a whole trial). */
  count: number[];
  mean: number[];
}

/** Summary values of one trial: mean and the percentiles, as `summarize` names them. */
function trialSummary(xs: Float64Array): Record<ComparableMetric, number> {
  xs.sort();
  const n = xs.length;
  // HdrHistogram's getValueAtPercentile: the value at rank ceil(p/100 · n).
  const at = (p: number) => xs[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  let sum = 0;
  for (let i = 0; i < n; i++) sum += xs[i];
  return { mean: sum / n, p50: at(50), p90: at(90), p99: at(99), p99_9: at(99.9) };
}

/**
 * Run the simulation. Context: any thread; pure (seeded). Returns, per metric, how often the
 * interval called a difference and how often it covered the true shift.
 */
export function calibrate(opts: CalibrationOptions): Record<ComparableMetric, MetricCalibration> {
  const rnd = mulberry32(opts.seed);
  const normal = normalOf(rnd);
  const median = opts.medianNs ?? 6_000;
  const driftNs = opts.driftNs ?? 0.2 * median;
  const jitter = opts.jitter ?? 0.02;
  const sample = (): number => median * Math.exp(0.3 * normal()) + (rnd() < 0.03 ? rnd() * 5 * median : 0);
  const slices = Math.max(1, opts.slices ?? 1);
  /** One side's trial: its summary, and each slice's mean (drifts: one per slice cycle). */
  const side = (drifts: number[], shift: number): Side => {
    const xs: number[] = [];
    const count: number[] = [];
    const mean: number[] = [];
    for (let k = 0; k < slices; k++) {
      const factor = 1 + jitter * normal();
      // Sliced, a slice holds 50–100% of `samples` (a host stall costs a slice its messages).
      const n = slices > 1 ? Math.max(2, Math.round(opts.samples * (0.5 + 0.5 * rnd()))) : opts.samples;
      let sum = 0;
      for (let i = 0; i < n; i++) {
        const x = (sample() + drifts[k]) * factor + shift;
        xs.push(x);
        sum += x;
      }
      count.push(n);
      mean.push(sum / n);
    }
    return { summary: trialSummary(Float64Array.from(xs)), count, mean };
  };
  // A sliced mean pairs slice cycles (compareSlices); everything else pairs trials (compare).
  const pairsOf = (b: Side[], a: Side[]): SlicePair[] =>
    b.flatMap((t, i) => t.count.map((nB, k) => ({ nB, mB: t.mean[k], nA: a[i].count[k], mA: a[i].mean[k] })));
  const comparison = (b: Side[], a: Side[], m: ComparableMetric) =>
    slices > 1 && m === 'mean'
      ? compareSlices(pairsOf(b, a))
      : compare(
          b.map((t) => t.summary[m]),
          a.map((t) => t.summary[m]),
        );
  const out = Object.fromEntries(
    COMPARABLE_METRICS.map((m) => [
      m,
      { n: 0, called: 0, covered: 0, meanDetectable: 0, meanHalfWidth: 0, calledBeyondFloor: 0 },
    ]),
  ) as Record<ComparableMetric, MetricCalibration>;
  for (let c = 0; c < opts.comparisons; c++) {
    const base: Side[] = [];
    const cand: Side[] = [];
    const ctrl: Side[] = [];
    for (let t = 0; t < opts.trials; t++) {
      const drifts = Array.from({ length: slices }, () => driftNs * normal());
      base.push(side(drifts, 0));
      cand.push(side(drifts, opts.shiftNs));
      if (opts.control) ctrl.push(side(drifts, 0));
    }
    for (const m of COMPARABLE_METRICS) {
      const r = comparison(base, cand, m);
      if (!Number.isFinite(r.ciLow)) continue;
      const o = out[m];
      o.n++;
      if (r.verdict !== 'within-noise') {
        o.called++;
        const floor = opts.control ? comparison(base, ctrl, m) : undefined;
        if (!floor || !Number.isFinite(floor.ciLow) || !withinFloor(r.diff, floor)) o.calledBeyondFloor++;
      }
      if (r.ciLow <= opts.shiftNs && opts.shiftNs <= r.ciHigh) o.covered++;
      o.meanDetectable += r.detectable ?? Number.NaN;
      o.meanHalfWidth += (r.ciHigh - r.ciLow) / 2;
    }
  }
  for (const m of COMPARABLE_METRICS) {
    const o = out[m];
    o.meanDetectable /= o.n || 1;
    o.meanHalfWidth /= o.n || 1;
  }
  return out;
}
