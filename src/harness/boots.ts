/**
 * A sweep point measured on several machine boots (issue #27 item 5): each boot is a fresh
 * Machine (new threads, new placement on the host's cores, V8's tiers compiled anew), and what
 * differs between boots is a level of variance that trials of one boot cannot show. run.ts runs
 * the point once per boot with {@link bootConfig}; {@link mergeBoots} joins the parts into one
 * PointResult: every strategy's trials in boot order, tagged with `boot`, renumbered so trial i
 * of every strategy is still from the same round (pairs stay within a boot), merged histograms
 * and counters over all boots. The run-level comparisons are then computed over the joined
 * trials as before; the scenario verdicts (src/scenarios/effects.ts) read `boot` and treat the
 * two levels apart (src/report/statistics/meta.ts).
 */
import { decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import type { ResolvedConfig } from '../config/schema.js';
import { summarize } from '../report/statistics/stats.js';
import type { PointResult, StageName, StrategyResult } from '../report/types.js';

/** Fewest trials a boot runs: a boot's own variance needs two. */
export const MIN_TRIALS_PER_BOOT = 2;

/**
 * One boot's share of a point: the trials split over the boots (at least
 * {@link MIN_TRIALS_PER_BOOT} each), and `--max-time` split too, so --until's cap holds per point.
 */
export function bootConfig(config: ResolvedConfig, boots: number): ResolvedConfig {
  if (boots <= 1) return config;
  return {
    ...config,
    trials: Math.max(MIN_TRIALS_PER_BOOT, Math.ceil(config.trials / boots)),
    ...(config.until ? { until: { ...config.until, maxTimeMs: Math.ceil(config.until.maxTimeMs / boots) } } : {}),
  };
}

/** Join one point's boots (in boot order) into one PointResult. A single part is returned as is. */
export function mergeBoots(parts: readonly PointResult[]): PointResult {
  if (parts.length === 1) return parts[0];
  const first = parts[0];
  const strategies = first.strategies.map((s0, i) => mergeStrategy(parts.map((p) => p.strategies[i] ?? s0)));
  // Offsets: a boot's trial indexes and orders continue after the previous boots' largest.
  const point: PointResult = { params: { ...first.params }, strategies };
  let index = 0;
  let order = 0;
  for (const [b, p] of parts.entries()) {
    let maxIndex = -1;
    let maxOrder = -1;
    for (const [i, s] of p.strategies.entries()) {
      for (const t of s.trials) {
        strategies[i].trials.push({ ...t, index: t.index + index, order: t.order + order, boot: b });
        maxIndex = Math.max(maxIndex, t.index);
        maxOrder = Math.max(maxOrder, t.order);
      }
    }
    index += maxIndex + 1;
    order += maxOrder + 1;
  }
  const schedules = parts.map((p) => p.schedule).filter((s) => s !== undefined);
  if (schedules.length)
    point.schedule = { ...schedules[0], rounds: schedules.flatMap((s) => s.rounds) } as PointResult['schedule'];
  const untils = parts.map((p) => p.until).filter((u) => u !== undefined);
  if (untils.length) {
    const last = untils[untils.length - 1];
    point.until = {
      ...last,
      maxTimeMs: untils.reduce((a, u) => a + u.maxTimeMs, 0),
      rounds: untils.reduce((a, u) => a + u.rounds, 0),
      reached: untils.every((u) => u.reached),
    };
  }
  return point;
}

/** One strategy over the boots: counters summed, rates over the total time, histograms added. */
function mergeStrategy(parts: readonly StrategyResult[]): StrategyResult {
  const s0 = parts[0];
  const r: StrategyResult = { ...s0, trials: [], merged: {}, counters: {}, rates: {} };
  delete r.comparison;
  const totalNs = parts.reduce((a, s) => a + s.trials.reduce((b, t) => b + t.durationNs, 0), 0);
  for (const s of parts)
    for (const [k, v] of Object.entries(s.counters)) {
      if (k === 'time_to_256_bits_ns') continue;
      r.counters[k] = (r.counters[k] ?? 0) + v;
    }
  // As run.ts's finishStrategy: the median over trials.
  const ttr = parts
    .flatMap((s) => s.trials.map((t) => t.counters.time_to_256_bits_ns))
    .filter((x) => Number.isFinite(x))
    .sort((a, b) => a - b);
  r.counters.time_to_256_bits_ns = ttr.length ? ttr[Math.floor(ttr.length / 2)] : Number.NaN;
  if (totalNs > 0)
    for (const [k, v] of Object.entries(r.counters)) if (k !== 'time_to_256_bits_ns') r.rates[k] = v / (totalNs / 1e9);
  const stages = new Set(parts.flatMap((s) => Object.keys(s.merged))) as Set<StageName>;
  for (const st of stages) {
    const encoded = parts.map((s) => s.merged[st]?.histogram).filter((h): h is string => typeof h === 'string');
    const into = decodeFromCompressedBase64(encoded[0], 64, false);
    for (const e of encoded.slice(1)) {
      const h = decodeFromCompressedBase64(e, 64, false);
      into.add(h);
      h.destroy();
    }
    r.merged[st] = { summary: summarize(into), histogram: encodeIntoCompressedBase64(into) };
    into.destroy();
  }
  return r;
}
