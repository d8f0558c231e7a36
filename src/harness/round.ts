/**
 * One round of a point: every strategy measured once, in the round's order, on the booted
 * machine. Split from run.ts, which owns the rounds, the stopping rule and the results.
 *
 * Slices. A trial of `trialMs` is measured as `slices` pieces of trialMs/slices each, and the
 * round runs them interleaved: slice 1 of every strategy (a slice cycle, in its own order from
 * schedule.ts), then slice 2 of every strategy, ... A strategy's trial is the sum of its slices
 * (histograms merged, counters added, durations added, and each slice's count and mean kept per
 * stage), so trial r of a strategy is still paired with trial r of the baseline, and the Δ mean
 * pairs the slices of one cycle (src/report/statistics/slices.ts). Why: the host this lab runs on changes speed by itself (on the 2-core VMs here,
 * tcp_lat's p50 moved between two levels 16% apart, for seconds at a time, with nothing else
 * running: docs/architecture.md), and a change inside a round of whole trials lands on some
 * strategies of the round and not on others. Measured with `npm run bench:aa` and the default
 * run, before and after: docs/results.md ("Slices").
 *
 * Before each slice: the strategy in force is set and the machine warms up with it for
 * `settleMs` (discarded: what the previous strategy left running on the CPUs' caches and
 * queues); after it: drain (no new work until every deferred job has run, so nothing of one
 * strategy runs in another's slice) and collect. Round 0 starts with a warm-up pass of every
 * strategy (the trigger lowered, so that every hand-off and mix path is compiled before
 * anything is measured; the first pass longer: FIRST_WARMUP_MS in run.ts).
 *
 * A fault or an interrupt keeps what finished: whole trials as each ends; sliced, the round's
 * complete slice cycles, as trials shorter than trialMs (the cycle under way is dropped).
 */
import type { Histogram } from 'hdr-histogram-js';
import { Phase } from '../hw/layout.js';
import type { Stage } from '../hw/trace.js';
import { releaseHistograms, takeHistogram } from '../machine/histogram-pool.js';
import type { Machine } from '../machine/machine.js';
import { encodeBins, sliceDigest, TAIL_STAGES } from '../report/statistics/slice-hist.js';
import { summarize } from '../report/statistics/stats.js';
import type { SliceStats, StageName, StrategyResult, Summary, TrialResult } from '../report/types.js';

/** A strategy's accumulators over the point. */
export interface StrategyAcc {
  result: StrategyResult;
  merged: Partial<Record<Stage, Histogram>>;
}

/** What a round needs from the point it runs in. */
export interface RoundContext {
  m: Machine;
  accs: StrategyAcc[];
  trialMs: number;
  /** Per-trial warm-up with the strategy in force (split over the slices). */
  warmupMs: number;
  slices: number;
  /** The fast pool's trigger in force, and the one the warm-up pass uses. */
  trigger: number;
  warmupTrigger: number;
  /** Length of round 0's warm-up pass: the first strategy's, and every other one's. */
  firstWarmupMs: number;
  warmupPassMs: number;
  /** Sleep that throws on a fault or an abort. */
  guard(ms: number): Promise<void>;
  /** Drain and collect after a slice or a warm-up (throws if work was lost or stuck). */
  endSlice(label: string): Promise<Partial<Record<Stage, Histogram>>>;
  say(line: string): void;
  /** The strategy in force, for fault messages. */
  setActive(index: number): void;
  /**
   * After a trial's last slice, drained (the timeline reads its rings: one window per trial, the
   * end of its last slice; what earlier slices left in the rings is older than the window).
   */
  lastSliceEnd?(label: string, round: number, measureStartNs: number, measureEndNs: number): void;
  /** After each finished trial. */
  trialDone?(label: string, round: number): void;
  /** After every slice, drained (`--explain`: src/report/explain/collect.ts reads the rings). */
  sliceEnd?(label: string, measureEndNs: number): void;
}

/** Slices a trial is cut into for a slice length (0: none, one slice per trial). */
export function sliceCount(trialMs: number, sliceMs: number): number {
  if (!(sliceMs > 0) || sliceMs >= trialMs) return 1;
  return Math.max(1, Math.round(trialMs / sliceMs));
}

interface Part {
  hist: Partial<Record<Stage, Histogram>>;
  /** Per stage, each slice's count and mean (0 and NaN where the slice recorded nothing). */
  slices: Partial<Record<Stage, SliceStats>>;
  counters: Record<string, number>;
  durationNs: number;
  /** Entropy ready time (ns since the trial's first warm-up began); NaN if not reached in slice 1. */
  readyNs: number;
}

/** Round 0's warm-up pass: every strategy in the round's order, the first one longer. */
async function warmUpAll(ctx: RoundContext, sequence: readonly number[]): Promise<void> {
  const { m } = ctx;
  for (const s of sequence) {
    const label = ctx.accs[s].result.label;
    ctx.say(`warm-up: ${label}`);
    ctx.setActive(s);
    m.setTrigger(ctx.warmupTrigger);
    m.setActiveStrategy(s);
    m.setPhase(Phase.Warmup);
    await ctx.guard(s === sequence[0] ? ctx.firstWarmupMs : ctx.warmupPassMs);
    releaseHistograms(Object.values(await ctx.endSlice(label)));
    m.setTrigger(ctx.trigger);
  }
}

/**
 * Run round `r`: slice cycle k in the order `cycles[k]` (strategy indices; one order per slice);
 * push one trial per strategy. `order` is the run position of the round's first trial (trials are
 * numbered in the first cycle's order); returns the next one.
 */
export async function runRound(
  ctx: RoundContext,
  r: number,
  cycles: readonly (readonly number[])[],
  order: number,
  progress: (label: string, slice: number) => string,
): Promise<number> {
  const { m, accs, slices } = ctx;
  if (r === 0) await warmUpAll(ctx, cycles[0]);
  const sliceMs = ctx.trialMs / slices;
  const settleMs = ctx.warmupMs / slices;
  const parts = new Map<number, Part>();
  // The cycle under way, folded into `parts` only once every strategy finished its slice.
  const cycle = new Map<number, Part>();
  // Each strategy's fast pool counts at the end of its last slice.
  const counts = new Map<number, number[]>();
  let pushed = false;
  try {
    for (let k = 0; k < slices; k++) {
      for (const s of cycles[k]) {
        const label = accs[s].result.label;
        ctx.say(progress(label, k));
        ctx.setActive(s);
        m.setActiveStrategy(s);
        // A trial starts from fresh pools; a later slice from where the strategy's last one left
        // the fast pools' counts (not where the previous strategy left them).
        if (k === 0) m.resetEntropy();
        else m.setFastPoolCounts(counts.get(s) ?? m.fastPoolCounts());
        const warmStart = m.nowNs();
        // Hand-offs lost in the warm-up, and mixes that ran off their CPU there (random.c's
        // mix_interrupt_randomness returns without clearing the count), strand the fast pool for
        // the whole slice (MIX_INFLIGHT stays set), so the measured window shows none of them:
        // these two are counted from here.
        const before = m.counters();
        const lostBefore = before.handoffs_lost;
        const remoteBefore = before.mixes_remote;
        m.setPhase(Phase.Warmup);
        await ctx.guard(settleMs);
        const c0 = m.countersWithHost();
        const t0 = m.nowNs();
        m.setPhase(Phase.Measure);
        await ctx.guard(sliceMs);
        const c1 = m.countersWithHost();
        const t1 = m.nowNs();
        const hist = await ctx.endSlice(label);
        if (slices > 1) counts.set(s, m.fastPoolCounts());
        if (k === slices - 1) ctx.lastSliceEnd?.(label, r, t0, t1);
        ctx.sliceEnd?.(label, t1);
        // Time to 256 bits: from the trial's first warm-up, seen only if slice 1 reached it by the
        // end of its measured window (t1). Read after the drain, which runs the work still pending
        // (a deferrable timer's mix queued in the warm-up): bits credited there are not the trial's.
        const readyAt = k === 0 ? m.inputPoolReadyAtNs() : -1;
        const ready = readyAt <= t1 ? readyAt : -1;
        const counters: Record<string, number> = {};
        for (const key of Object.keys(c1)) counters[key] = c1[key] - c0[key];
        if (lostBefore !== undefined) counters.handoffs_lost = c1.handoffs_lost - lostBefore; // its warm-up's too (above)
        if (remoteBefore !== undefined) counters.mixes_remote = c1.mixes_remote - remoteBefore;
        const slice: Part = {
          hist,
          slices: {},
          counters,
          durationNs: t1 - t0,
          readyNs: ready >= 0 ? ready - warmStart : Number.NaN,
        };
        // A whole trial is finished here; a slice waits for the rest of its cycle.
        if (slices === 1) fold(parts, s, slice, k, slices);
        else cycle.set(s, slice);
      }
      for (const [s, slice] of cycle) fold(parts, s, slice, k, slices);
      cycle.clear();
    }
    pushed = true;
    return pushTrials(ctx, r, cycles[0], order, parts);
  } catch (e) {
    // Nothing finished is lost: the trials finished in this round, or, sliced, the round's
    // complete cycles, which make (shorter) trials, paired as usual.
    if (!pushed) pushTrials(ctx, r, cycles[0], order, parts);
    throw e;
  } finally {
    for (const slice of cycle.values()) releaseHistograms(Object.values(slice.hist));
    for (const part of parts.values()) releaseHistograms(Object.values(part.hist));
  }
}

/** Add slice `k` of strategy `s` (its histograms are taken over) to the strategy's part. */
function fold(parts: Map<number, Part>, s: number, slice: Part, k: number, slices: number): void {
  let part = parts.get(s);
  if (!part) {
    part = { hist: {}, slices: {}, counters: {}, durationNs: 0, readyNs: slice.readyNs };
    parts.set(s, part);
  }
  for (const [key, v] of Object.entries(slice.counters)) part.counters[key] = (part.counters[key] ?? 0) + v;
  for (const [st, h] of Object.entries(slice.hist) as [Stage, Histogram][]) {
    part.hist[st] ??= takeHistogram();
    part.hist[st].add(h);
    if (slices > 1) {
      part.slices[st] ??= {
        count: new Array<number>(slices).fill(0),
        mean: new Array<number>(slices).fill(Number.NaN),
      };
      const stats = part.slices[st];
      const binned = TAIL_STAGES.includes(st as StageName);
      const digest = sliceDigest(h, binned);
      stats.count[k] = h.totalCount;
      stats.mean[k] = digest.mean;
      if (binned) {
        stats.hist ??= new Array<string>(slices).fill('');
        stats.hist[k] = encodeBins(digest.bins ?? [], digest.counts ?? []);
      }
    }
  }
  releaseHistograms(Object.values(slice.hist));
  part.durationNs += slice.durationNs;
}

/** Round r's trials from the parts, numbered from `order` in `first`'s order; returns the next. */
function pushTrials(
  ctx: RoundContext,
  r: number,
  first: readonly number[],
  order: number,
  parts: Map<number, Part>,
): number {
  for (const s of first) {
    const acc = ctx.accs[s];
    const part = parts.get(s);
    if (!part) continue;
    const stages: Partial<Record<StageName, Summary>> = {};
    for (const [st, h] of Object.entries(part.hist) as [Stage, Histogram][]) {
      stages[st as StageName] = summarize(h);
      acc.merged[st] ??= takeHistogram();
      acc.merged[st].add(h);
    }
    const counters = { ...part.counters, time_to_256_bits_ns: part.readyNs };
    const trial: TrialResult = {
      index: r,
      order: order++,
      durationNs: part.durationNs,
      stages,
      counters,
      ...(ctx.slices > 1 ? { slices: part.slices as Partial<Record<StageName, SliceStats>> } : {}),
    };
    acc.result.trials.push(trial);
    ctx.trialDone?.(acc.result.label, r);
  }
  return order;
}
