/**
 * The Δ mean of sliced trials (`--slice`, src/harness/round.ts): paired by slice cycle.
 *
 * Slice k of trial r of every strategy ran in the same slice cycle (~1 s on the default run), so
 * whatever the host did during that cycle it did to all of them: the cycle, not the trial, is the
 * pair. The quantity compared is still each side's pooled mean over the paired slices (every
 * sample counts once, as in a trial's mean); the interval is the paired, cluster-robust one of
 * that ratio estimator (the delta method; Cochran, Sampling Techniques, §6.9): with N cycle pairs,
 * nA_j, mA_j and nB_j, mB_j the two sides' sample counts and means in cycle j, MA and MB the pooled
 * means and n̄A, n̄B the mean counts per cycle,
 *
 *   z_j = nA_j·(mA_j − MA)/n̄A − nB_j·(mB_j − MB)/n̄B,   Δ = MA − MB ± t(0.975, N−1)·sd(z)/√N.
 *
 * With equal counts in every slice z_j is d_j − mean(d) and this is the paired t on slice means.
 * Why weight by counts at all: a slice the host stalled records few messages, each late; an
 * unweighted mean of slice means gave such a slice the weight of a full one (a run on 2026-12-01:
 * one stalled slice in 50 widened a Δ-mean interval from ±6.0% paired by trial to ±11.8%).
 * Coverage on synthetic data: test/report/calibration.test.ts (docs/results.md, "Slices").
 */

import type { SliceStats, StageName, StrategyResult, TrialResult } from '../types.js';
import { type CompareOptions, type Interval, intervalOf } from './interval.js';

/** One slice cycle's pair: the baseline's and the candidate's count and mean there. */
export interface SlicePair {
  nB: number;
  mB: number;
  nA: number;
  mA: number;
}

/** Slices a trial was measured in (0: a whole trial, or results from before slices). */
function slicesOf(t: TrialResult): number {
  if (!t.slices) return 0;
  for (const s of Object.values(t.slices)) if (s) return s.count.length;
  return 0;
}

/**
 * The stage's slice pairs of `candidate` against `baseline` (trial r slice k with trial r slice k;
 * slices where either side recorded nothing are dropped). Undefined when any paired trial is whole
 * or the two disagree on the slice count: then trials pair (stats.ts).
 */
export function slicePairs(
  baseline: StrategyResult,
  candidate: StrategyResult,
  stage: StageName,
): SlicePair[] | undefined {
  return slicePairing(baseline, candidate, stage)?.pairs;
}

/** {@link slicePairs}, and how many slice cycles it dropped because a side recorded nothing (the table says so). */
export function slicePairing(
  baseline: StrategyResult,
  candidate: StrategyResult,
  stage: StageName,
): { pairs: SlicePair[]; dropped: number } | undefined {
  let dropped = 0;
  const byIndex = new Map(baseline.trials.map((t) => [t.index, t]));
  const pairs: SlicePair[] = [];
  let paired = 0;
  for (const t of candidate.trials) {
    const o = byIndex.get(t.index);
    if (!o) continue;
    const k = slicesOf(t);
    if (k < 2 || slicesOf(o) !== k) return undefined;
    paired++;
    const a: SliceStats | undefined = t.slices?.[stage];
    const b: SliceStats | undefined = o.slices?.[stage];
    if (!a || !b) continue;
    for (let j = 0; j < k; j++) {
      if (a.count[j] > 0 && b.count[j] > 0 && Number.isFinite(a.mean[j]) && Number.isFinite(b.mean[j]))
        pairs.push({ nB: b.count[j], mB: b.mean[j], nA: a.count[j], mA: a.mean[j] });
      else dropped++;
    }
  }
  return paired > 0 ? { pairs, dropped } : undefined;
}

/** The pooled means' difference over slice-cycle pairs, with its 95% interval (see the top). */
export function compareSlices(pairs: readonly SlicePair[], opts: CompareOptions = {}): Interval {
  const n = pairs.length;
  let nA = 0;
  let sA = 0;
  let nB = 0;
  let sB = 0;
  for (const p of pairs) {
    nA += p.nA;
    sA += p.nA * p.mA;
    nB += p.nB;
    sB += p.nB * p.mB;
  }
  const value = sA / nA;
  const baseline = sB / nB;
  const est = { n, baseline, value, diff: value - baseline };
  const better = opts.better ?? 'lower';
  if (n < 2) {
    return intervalOf(
      est,
      Number.NaN,
      better,
      () => `paired by slice cycle: no interval from ${n} paired slice${n === 1 ? '' : 's'} (needs at least 2)`,
    );
  }
  const perA = nA / n;
  const perB = nB / n;
  let ss = 0;
  for (const p of pairs) {
    const z = (p.nA * (p.mA - value)) / perA - (p.nB * (p.mB - baseline)) / perB;
    ss += z * z; // the z_j sum to 0 by construction: their mean is 0
  }
  return intervalOf(
    est,
    Math.sqrt(ss / (n - 1)) / Math.sqrt(n),
    better,
    (df, t) =>
      `paired by slice cycle, 95% interval of the pooled means' difference (count-weighted, delta method): n=${n} pairs, df=${df}, t=${t.toFixed(3)}`,
  );
}
