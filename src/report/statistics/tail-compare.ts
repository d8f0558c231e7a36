/**
 * The tail comparisons of a stage (p50, p90, p99, p99.9) from slice cycles (tails.ts), as
 * Comparisons: the estimate from the merged histograms, the standard error from the cycle
 * bootstrap, a 95% t interval on N − 1 degrees of freedom (family.ts may widen it).
 */
import type { Comparison, StageName, StrategyResult } from '../types.js';
import { STAGE_NAMES } from '../types.js';
import { type CompareOptions, intervalOf } from './interval.js';
import {
  type BootQuantiles,
  bootQuantiles,
  bootSe,
  binRange,
  type CycleHists,
  cyclesOf,
  drawCycles,
  TAIL_METRICS,
  TAIL_RESAMPLES,
} from './tails.js';

/** Seed of a stage's resamples: fixed, so the same results always give the same intervals. */
const seedOf = (stage: StageName): number => 0x7a11 + STAGE_NAMES.indexOf(stage);

interface BaselineBoot {
  draws: Int32Array[];
  q: BootQuantiles;
  cycles: number;
}

// The baseline's resamples, shared by every candidate of its point (the same draws: paired).
const cache = new WeakMap<StrategyResult, Map<StageName, BaselineBoot | null>>();

function baselineBoot(baseline: StrategyResult, stage: StageName): BaselineBoot | undefined {
  let m = cache.get(baseline);
  if (!m) {
    m = new Map();
    cache.set(baseline, m);
  }
  if (!m.has(stage)) {
    const cycles = cyclesOf(baseline, baseline, stage);
    if (!cycles || cycles.length < 2) m.set(stage, null);
    else {
      const draws = drawCycles(cycles.length, seedOf(stage));
      m.set(stage, { draws, q: bootQuantiles(cycles, draws, binRange([cycles])), cycles: cycles.length });
    }
  }
  return m.get(stage) ?? undefined;
}

/** The merged histogram's quantiles of all cycles (when the merged summary is absent). */
function pointQuantiles(cycles: CycleHists): Record<string, number> {
  const all = [Int32Array.from(cycles.keys())];
  const q = bootQuantiles(cycles, all, binRange([cycles]));
  return Object.fromEntries(TAIL_METRICS.map(([m]) => [m, q[m][0]]));
}

/**
 * The four tail comparisons of `candidate` against `baseline` in `stage`, from slice cycles;
 * undefined when either side lacks binned slices there (whole trials, a stage outside
 * TAIL_STAGES, older results): the caller then pairs trials. Context: main thread; pure but for
 * a cache of the baseline's resamples (keyed weakly on the baseline object).
 */
export function compareTails(
  baseline: StrategyResult,
  candidate: StrategyResult,
  stage: StageName,
  opts: CompareOptions = {},
): Comparison[] | undefined {
  const boot = baselineBoot(baseline, stage);
  if (!boot) return undefined;
  const cand = cyclesOf(baseline, candidate, stage);
  if (!cand || cand.every((c) => c.bins.length === 0)) return undefined;
  const q = bootQuantiles(cand, boot.draws, binRange([cand]));
  const mb = baseline.merged[stage]?.summary;
  const mc = candidate.merged[stage]?.summary;
  const pb = mb && mb.count > 0 ? undefined : pointQuantiles(cyclesOf(baseline, baseline, stage)!);
  const pc = mc && mc.count > 0 ? undefined : pointQuantiles(cand);
  const n = boot.cycles;
  return TAIL_METRICS.map(([metric]) => {
    const b = mb && mb.count > 0 ? mb[metric] : pb![metric];
    const v = mc && mc.count > 0 ? mc[metric] : pc![metric];
    const se = bootSe(boot.q[metric], q[metric]);
    const { n: _n, ...rest } = intervalOf(
      { n, baseline: b, value: v, diff: v - b },
      se,
      opts.better ?? 'lower',
      (df, t) =>
        `paired bootstrap over ${n} slice cycles (${TAIL_RESAMPLES} resamples) of the merged histograms' ${metric}: ` +
        `diff ± t·se, df=${df}, t=${Number.isFinite(t) ? t.toFixed(3) : '-'}`,
    );
    return { stage, metric, ...rest };
  });
}
