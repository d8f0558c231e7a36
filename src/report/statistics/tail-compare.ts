/**
 * The tail comparisons of a stage (p50, p90, p99, p99.9) from slice cycles (tails.ts), as
 * Comparisons: the estimate from the merged histograms, the standard error from Woodruff's
 * linearisation over the paired cycles (tails.ts, woodruffSe), a 95% t interval on the degrees of
 * freedom the cycles' kurtosis leaves (tails.ts, kurtosisDf; at most N − 1; family.ts may widen
 * it). Deterministic: no resampling.
 */
import type { Comparison, StageName, StrategyResult } from '../types.js';
import { type CompareOptions, intervalOf } from './interval.js';
import {
  binRange,
  bootQuantiles,
  type CycleHists,
  cyclesOf,
  MIN_SAMPLES_BEYOND_QUANTILE,
  TAIL_METRICS,
  woodruffSe,
} from './tails.js';

/** How a tail comparison's method begins when the quantile cannot be given an interval. */
export const NO_TAIL_INTERVAL = 'no interval';

/** The merged histogram's quantiles of all cycles (when the merged summary is absent). */
function pointQuantiles(cycles: CycleHists): Record<string, number> {
  const all = [Int32Array.from(cycles.keys())];
  const q = bootQuantiles(cycles, all, binRange([cycles]));
  return Object.fromEntries(TAIL_METRICS.map(([m]) => [m, q[m][0]]));
}

/**
 * The four tail comparisons of `candidate` against `baseline` in `stage`, from slice cycles;
 * undefined when either side lacks binned slices there (whole trials, a stage outside
 * TAIL_STAGES, older results): the caller then pairs trials. Context: main thread; pure.
 */
export function compareTails(
  baseline: StrategyResult,
  candidate: StrategyResult,
  stage: StageName,
  opts: CompareOptions = {},
): Comparison[] | undefined {
  const base = cyclesOf(baseline, baseline, stage);
  if (!base || base.length < 2) return undefined;
  const cand = cyclesOf(baseline, candidate, stage);
  if (!cand || cand.every((c) => c.bins.length === 0)) return undefined;
  const ses = woodruffSe(base, cand);
  const mb = baseline.merged[stage]?.summary;
  const mc = candidate.merged[stage]?.summary;
  const pb = mb && mb.count > 0 ? undefined : pointQuantiles(base);
  const pc = mc && mc.count > 0 ? undefined : pointQuantiles(cand);
  const n = base.length;
  return TAIL_METRICS.map(([metric]) => {
    const b = mb && mb.count > 0 ? mb[metric] : pb![metric];
    const v = mc && mc.count > 0 ? mc[metric] : pc![metric];
    const { se, df } = ses[metric];
    const { n: _n, ...rest } = intervalOf(
      { n, baseline: b, value: v, diff: v - b, df: Number.isFinite(df) ? df : undefined },
      se,
      opts.better ?? 'lower',
      (df, t) =>
        Number.isNaN(se) && n >= 2
          ? `${NO_TAIL_INTERVAL}: fewer than ${MIN_SAMPLES_BEYOND_QUANTILE} samples beyond the ${metric} on a side, or no spread between its ${n} slice cycles`
          : `merged histograms' ${metric}, se by Woodruff's linearisation over ${n} slice cycles: ` +
            `diff ± t·se, df=${Number.isInteger(df) ? df : df.toFixed(1)} (kurtosis-matched), t=${Number.isFinite(t) ? t.toFixed(3) : '-'}`,
    );
    return { stage, metric, ...rest };
  });
}
