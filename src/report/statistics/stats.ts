/**
 * Summaries of histograms, and the baseline comparison of a run's strategies that decides what
 * counts as a regression: per stage and metric, trials paired by index (interval.ts) or, for
 * sliced trials, slice cycles (the mean: slices.ts; the tail stages' quantiles: tail-compare.ts);
 * the run's family adjustment and --threshold (family.ts); the A/A noise floor.
 */

import type { Histogram } from 'hdr-histogram-js';
import type {
  ComparableMetric,
  Comparison,
  PointResult,
  RunResults,
  StageName,
  StrategyResult,
  Summary,
} from '../types.js';
import { COMPARABLE_METRICS, STAGE_NAMES } from '../types.js';
import { adjustPoint, controlComparisons, DEFAULT_THRESHOLD_PCT } from './family.js';
import { type CompareOptions, compare } from './interval.js';
import { compareSlices, slicePairs } from './slices.js';
import { compareTails } from './tail-compare.js';

/**
 * Summary of a histogram (values in ns). Percentiles are HdrHistogram's `getValueAtPercentile`
 * (the highest value equivalent to the recorded one, within the histogram's precision), capped at
 * `max` so that no percentile exceeds the maximum; `min` is `getValueAtPercentile(0)`, `max` the
 * histogram's `maxValue` (exact on a recording histogram, rounded up on a decoded one). An empty
 * histogram gives all zeros.
 */
export function summarize(h: Histogram): Summary {
  const count = h.totalCount;
  if (count === 0) return { count: 0, min: 0, mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0, max: 0 };
  const max = h.maxValue;
  const at = (p: number): number => Math.min(h.getValueAtPercentile(p), max);
  return { count, min: at(0), mean: histogramMean(h), p50: at(50), p90: at(90), p99: at(99), p99_9: at(99.9), max };
}

interface CountsAccess {
  countsArrayLength: number;
  countsArrayIndex(value: number): number;
  getCountAtIndex(index: number): number;
  valueFromIndex(index: number): number;
  medianEquivalentValue(value: number): number;
}

/**
 * `h.mean`, the same sum (each bucket's median-equivalent value times its count) taken straight
 * over the counts up to the maximum's bucket: the library's own getter walks an iterator object
 * per recorded value, ~14 ms for a trial's histogram here against ~2 ms, and the main thread
 * summarises every stage of every trial. A histogram without that access (the WASM build) uses
 * the getter.
 */
export function histogramMean(h: Histogram): number {
  const total = h.totalCount;
  if (total === 0) return 0;
  const c = h as unknown as Partial<CountsAccess>;
  if (typeof c.getCountAtIndex !== 'function' || typeof c.countsArrayIndex !== 'function') return h.mean;
  const a = c as CountsAccess;
  const top = Math.min(a.countsArrayLength - 1, a.countsArrayIndex(h.maxValue));
  let sum = 0;
  for (let i = 0; i <= top; i++) {
    const n = a.getCountAtIndex(i);
    if (n !== 0) sum += n * a.medianEquivalentValue(a.valueFromIndex(i));
  }
  return sum / total;
}

/**
 * The per-trial values of `stage.metric`, keyed by trial index; NaN where the trial lacks the
 * stage or recorded nothing.
 */
function perTrial(s: StrategyResult, stage: StageName, metric: ComparableMetric): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of s.trials) {
    const sum = t.stages[stage];
    out.set(t.index, sum && sum.count > 0 ? sum[metric] : Number.NaN);
  }
  return out;
}

/**
 * Compare one stage's metric of `candidate` with `baseline`, pairing trials by `index` (the mean
 * of sliced trials: slice cycles, slices.ts). Returns undefined when either strategy has
 * no trial with that stage.
 */
export function compareStage(
  baseline: StrategyResult,
  candidate: StrategyResult,
  stage: StageName,
  metric: ComparableMetric,
  opts: CompareOptions = {},
): Comparison | undefined {
  if (metric !== 'mean') {
    const tails = compareTails(baseline, candidate, stage, opts);
    if (tails) return tails.find((c) => c.metric === metric);
  }
  const sliced = metric === 'mean' ? slicePairs(baseline, candidate, stage) : undefined;
  if (sliced) {
    if (sliced.length === 0) return undefined;
    const { n: _n, ...rest } = compareSlices(sliced, opts);
    return { stage, metric, ...rest };
  }
  const b = perTrial(baseline, stage, metric);
  const c = perTrial(candidate, stage, metric);
  const bs: number[] = [];
  const cs: number[] = [];
  for (const [index, value] of c) {
    if (!b.has(index)) continue;
    bs.push(b.get(index)!);
    cs.push(value);
  }
  if (!bs.some(Number.isFinite) || !cs.some(Number.isFinite)) return undefined;
  const { n: _n, ...rest } = compare(bs, cs, opts);
  return { stage, metric, ...rest };
}

/** Every stage both strategies measured × every comparable metric, in pipeline order. */
export function compareStrategies(baseline: StrategyResult, candidate: StrategyResult): Comparison[] {
  const out: Comparison[] = [];
  for (const stage of STAGE_NAMES) {
    // Sliced tail stages: the four quantiles from one cycle bootstrap (tail-compare.ts).
    const tails = compareTails(baseline, candidate, stage);
    for (const metric of COMPARABLE_METRICS) {
      const c =
        metric !== 'mean' && tails
          ? tails.find((t) => t.metric === metric)
          : compareStage(baseline, candidate, stage, metric);
      if (c) out.push(c);
    }
  }
  return out;
}

/** The baseline strategy of a point, by label; undefined if the point lacks it (a failed run). */
export function baselineOf(point: PointResult, baselineLabel: string): StrategyResult | undefined {
  return point.strategies.find((s) => s.label === baselineLabel);
}

/**
 * The comparison of `s` on `stage.metric`: the stored one when results.json has it, otherwise
 * computed now (results written before comparisons were filled in still render).
 */
export function comparisonFor(
  point: PointResult,
  baselineLabel: string,
  s: StrategyResult,
  stage: StageName,
  metric: ComparableMetric,
): Comparison | undefined {
  if (s.label === baselineLabel) return undefined;
  const stored = s.comparison?.find((c) => c.stage === stage && c.metric === metric);
  if (stored) return stored;
  const base = baselineOf(point, baselineLabel);
  return base ? compareStage(base, s, stage, metric) : undefined;
}

/** The noise floor's test: `diff` lies inside the control's interval (`ciLow`..`ciHigh`). */
export function withinFloor(diff: number, control: { ciLow: number; ciHigh: number }): boolean {
  return diff >= control.ciLow && diff <= control.ciHigh;
}

/**
 * The noise-floor rule of a run with an A/A control: `c` (a candidate's comparison) gets the
 * control's interval on the same stage and metric as its `floor`, and a verdict whose `diff`
 * lies inside that interval becomes `within-noise` (`insideFloor` says so): an identical copy of
 * the baseline moved as much. A control without an interval (fewer than 2 pairs) sets no floor.
 */
export function applyFloor(c: Comparison, control: Comparison | undefined): Comparison {
  if (!control || !Number.isFinite(control.ciLow) || !Number.isFinite(control.ciHigh)) return c;
  const floor = { low: control.ciLow, high: control.ciHigh };
  const inside = c.verdict !== 'within-noise' && withinFloor(c.diff, control);
  return inside ? { ...c, floor, insideFloor: true, verdict: 'within-noise' } : { ...c, floor };
}

/** The run's --threshold: `opts`, else the resolved config in `meta.options`, else the default. */
export function thresholdOf(results: Pick<RunResults, 'meta'>, opts: { thresholdPct?: number } = {}): number {
  if (opts.thresholdPct !== undefined) return opts.thresholdPct;
  const t = (results.meta.options as { threshold?: unknown } | null | undefined)?.threshold;
  return typeof t === 'number' && Number.isFinite(t) ? t : DEFAULT_THRESHOLD_PCT;
}

/**
 * A copy of `results` in which every non-baseline strategy carries its `comparison` list,
 * adjusted as one family per point and stage with the run's --threshold band (family.ts); with
 * an A/A control (`results.control`), the control's comparisons are the unadjusted 95% noise
 * floor, and every other strategy's verdicts respect it ({@link applyFloor}).
 * Context: main thread, after the last trial. Returns: a new object; the input is not modified.
 */
export function withComparisons(results: RunResults, opts: { thresholdPct?: number } = {}): RunResults {
  const thresholdPct = thresholdOf(results, opts);
  return {
    ...results,
    points: results.points.map((p) => {
      const base = baselineOf(p, results.baseline);
      const control = results.control ? p.strategies.find((s) => s.label === results.control) : undefined;
      const floors = base && control ? controlComparisons(compareStrategies(base, control), thresholdPct) : [];
      const candidates = base
        ? p.strategies
            .filter((s) => s.label !== results.baseline && s !== control)
            .map((s) => ({ label: s.label, comparison: compareStrategies(base, s) }))
        : [];
      const family = new Map(adjustPoint(candidates, thresholdPct).map((c) => [c.label, c.comparison]));
      return {
        ...p,
        strategies: p.strategies.map((s) => {
          if (s.label === results.baseline || !base) {
            const { comparison: _c, ...rest } = s;
            return rest;
          }
          if (s === control) return { ...s, comparison: floors };
          const comparison = (family.get(s.label) ?? []).map((c) =>
            applyFloor(
              c,
              floors.find((f) => f.stage === c.stage && f.metric === c.metric),
            ),
          );
          return { ...s, comparison };
        }),
      };
    }),
  };
}
