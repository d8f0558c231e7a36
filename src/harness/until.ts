/**
 * `--until PCT`: the stopping rule that keeps adding interleaved rounds until every Δ-mean
 * interval is narrower than ±PCT% of the baseline mean (or `--max-time` runs out).
 *
 * Policy, as small predicates over the trials measured so far (pure; the harness calls them
 * after each round): {@link intervalWidths} gives each strategy's current half-width, and
 * {@link widthsReached} says whether all of them are within the target.
 */
import { widestInterval } from '../report/run/comparison-notes.js';
import { FALLBACK_STAGE } from '../report/run/table.js';
import { compareStage } from '../report/statistics/stats.js';
import type { StageName, StrategyResult } from '../report/types.js';

/** The stage the Δ-mean is judged on: the table's (one_way; else request_to_start, else handoff_to_start). */
export function untilStage(baseline: StrategyResult): StageName {
  const has = (st: StageName) => baseline.trials.some((t) => (t.stages[st]?.count ?? 0) > 0);
  return has('one_way') ? 'one_way' : has('request_to_start') ? 'request_to_start' : FALLBACK_STAGE;
}

/**
 * Per strategy label (every one but the baseline): the half-width of its Δ-mean interval against
 * the baseline on `stage` (default {@link untilStage}), as % of the baseline mean; NaN without
 * an interval yet. Context: any thread; pure.
 */
export function intervalWidths(
  strategies: readonly StrategyResult[],
  baselineLabel: string,
  stage?: StageName,
): Record<string, number> {
  const base = strategies.find((s) => s.label === baselineLabel);
  const out: Record<string, number> = {};
  if (!base) return out;
  stage ??= untilStage(base);
  for (const s of strategies) {
    if (s === base) continue;
    const c = compareStage(base, s, stage, 'mean');
    out[s.label] = c ? ((c.ciHigh - c.ciLow) / 2 / Math.abs(c.baseline)) * 100 : Number.NaN;
  }
  return out;
}

/** True when every width is known and below `pct` (a run of the baseline alone: true). */
export function widthsReached(widths: Record<string, number>, pct: number): boolean {
  return Object.values(widths).every((w) => Number.isFinite(w) && w < pct);
}

/**
 * The progress line shown on a terminal between rounds:
 * `after 7 rounds, until ±3%: widest ±6.3% (timer), 4 of 9 above; 4m10s left`.
 */
export function untilProgress(round: number, widths: Record<string, number>, pct: number, leftMs: number): string {
  const entries = Object.entries(widths);
  const above = entries.filter(([, w]) => !(Number.isFinite(w) && w < pct));
  const widest = widestInterval(widths);
  const w = widest ? (Number.isFinite(widest[1]) ? `±${widest[1].toFixed(1)}%` : 'no interval yet') : '-';
  const left = Math.max(0, Math.round(leftMs / 1000));
  const time = left >= 60 ? `${Math.floor(left / 60)}m${String(left % 60).padStart(2, '0')}s` : `${left}s`;
  return `after ${round} rounds, until ±${pct}%: widest ${w}${widest ? ` (${widest[0]})` : ''}, ${above.length} of ${entries.length} above; ${time} left`;
}
