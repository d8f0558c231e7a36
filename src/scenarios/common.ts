/**
 * Shared pieces of the named scenarios: building sub-runs from the user's resolved config,
 * writing each sub-run's results, deciding and printing verdict lines, and the option rules
 * the scenarios share.
 *
 * A verdict line reads:
 * `VERDICT <expectation>: reproduced|not reproduced|contradicted|inconclusive — <the numbers that
 * decided>`. `reproduced`, `not reproduced` and `contradicted` are for data that decide;
 * `inconclusive` for data that cannot (an interval too wide to tell, too few trials or samples),
 * with how to get more. Verdicts over sweep points pool effect sizes (effects.ts).
 */
import { join } from 'node:path';
import { type CliIo, sayStopped } from '../cli/main.js';
import type { FixedSetting } from '../config/rules.js';
import type { ResolvedConfig } from '../config/schema.js';
import { parseStrategySpec, type StrategySpec } from '../config/strategy-spec.js';
import { bootConfig } from '../harness/boots.js';
import { subRunEstimateLine } from '../harness/estimate.js';
import { type RunHooks, runExperiment } from '../harness/run.js';
import { type KernelName, kernelProfile } from '../kernel/profiles.js';
import { renderTable } from '../report/run/table.js';
import { writeResults } from '../report/run/write.js';
import type { Calibration, PointResult, RunResults, StageName, StrategyResult } from '../report/types.js';

/**
 * `contradicted`: the data show the opposite of the seed's claim (an effect the other way, or, for
 * a negative control, an effect at least the margin's size); `not reproduced`: they rule out an
 * effect of the seed's size without showing the opposite (src/scenarios/effects.ts).
 */
export type Outcome = 'reproduced' | 'not reproduced' | 'contradicted' | 'inconclusive';

export interface Verdict {
  expectation: string;
  outcome: Outcome;
  detail: string;
}

/**
 * The size of effect the seeds argue about: random.c's regression was ~10% (seed 000: "a ~10%
 * performance regression using qperf"). An interval that stays below 10% of the baseline rules
 * such an effect out; one that reaches past it does not. The pooled verdicts (effects.ts) use it
 * as the claim's size and as the negative controls' equivalence margin (docs/scenarios.md says why).
 */
export const SEED_EFFECT = 0.1;

export { noTcpLat } from '../config/rules.js';

/** `--no-tracing` (`tracing: false`) for scenarios whose verdicts read traced stages. */
export function needsTracing(why: string): FixedSetting {
  return { kind: 'unused', why, allows: true };
}

/** `--timeline` (run only, for now): a scenario writes no timeline.json. */
export const NO_TIMELINE: Record<string, FixedSetting> = {
  timeline: { kind: 'unused', why: "a scenario writes no timeline; use 'deferlab run --timeline'", allows: false },
  timelineWindowMs: { kind: 'unused', why: 'a scenario writes no timeline' },
};

/** `--sweep` for scenarios that run at one setting (`null`, no sweep, is what they do). */
export const NO_SWEEP: FixedSetting = { kind: 'unused', why: 'it runs at one setting', allows: null };

export interface ScenarioContext {
  config: ResolvedConfig;
  io: CliIo;
  signal: AbortSignal;
  argv: string[];
  /** The host calibration measured by the scenario's first sub-run, reused by the others. */
  calibration?: Calibration;
  /** Machine boots per sweep point (default {@link SCENARIO_BOOTS}; tests run 1). */
  boots?: number;
}

/**
 * Every sweep point of a scenario's sub-runs runs on 2 machine boots, its trials split between
 * them (src/harness/boots.ts): a boot's thread placement and V8 warm-up are a level of variance
 * that one boot's trials cannot show, and the verdicts' intervals account for it (effects.ts).
 */
export const SCENARIO_BOOTS = 2;

/**
 * The inline mix the seed's "before" ran on `kernel`: the profile's `inlineBefore` where it has one
 * (5.15: `inline_trylock`, random.c at the bisected commit, which skipped the mix when
 * input_pool.lock was contended), else `inline` (the mix blocking on the lock). random-regression
 * and seed-machine compare against it (issue #26 item 4); `inline` stays a named variant beside it.
 */
export function seedInline(kernel: KernelName): string {
  return kernelProfile(kernel).inlineBefore ?? 'inline';
}

export function specs(texts: readonly string[]): StrategySpec[] {
  return texts.map((t) => {
    const p = parseStrategySpec(t, process.cwd());
    if (!p.ok) throw new Error(`scenario strategy ${t}: ${p.problem.constraint}`);
    return p.value;
  });
}

/**
 * Run one sub-experiment; print its table; write its results under outDir/<name>. `workload`:
 * what the machine runs, in words, when `adjust` replaces the configured workload (recorded as
 * `meta.workload`, shown in the table's setup line).
 */
export async function subRun(
  ctx: ScenarioContext,
  name: string,
  config: ResolvedConfig,
  adjust?: RunHooks['adjust'],
  workload?: string,
): Promise<RunResults> {
  const { io } = ctx;
  io.stdout(`\n== ${name} ==\n`);
  const progress = io.isTTY ? (l: string) => io.stderr(`\r\x1b[2K${name}: ${l}`) : undefined;
  const boots = ctx.boots ?? SCENARIO_BOOTS;
  const estimate = subRunEstimateLine(name, config, boots);
  if (estimate) io.stderr(`${estimate}\n`);
  const results = await runExperiment(config, {
    progress,
    signal: ctx.signal,
    command: ['deferlab', ...ctx.argv],
    adjust,
    boots,
    ...(ctx.calibration ? { calibration: ctx.calibration } : {}),
  });
  ctx.calibration ??= results.meta.calibration;
  if (progress) io.stderr('\r\x1b[2K');
  if (workload) results.meta.workload = workload;
  io.stdout(`${renderTable(tableView(results, boots), { wide: ctx.config.wide })}\n`);
  const booted = bootsNote(results);
  if (booted) io.stdout(`${booted}\n`);
  if (ctx.config.outDir) await writeResults(join(ctx.config.outDir, name), results);
  if (results.status === 'failed')
    sayStopped(io, 'failed', `${name} failed: ${results.error?.message ?? 'the run failed'}`);
  return results;
}

/**
 * The results as the terminal table shows them: with several boots a point, the setup line's
 * trial count (`meta.options.trials`, the user's --trials) becomes the trials per strategy over
 * all boots that always run (each boot runs --trials split over the boots, at least 2:
 * src/harness/boots.ts), so that it agrees with {@link bootsNote} under the table: `--trials 2`
 * on 2 boots is `4 trials of 300 ms ... per strategy` (2 + 2), not `2 trials`. Under --until the
 * line says `or more`. The written results keep the user's options. Context: pure.
 */
export function tableView(r: RunResults, boots: number): RunResults {
  const o = r.meta.options as Record<string, unknown> | null | undefined;
  const trials = o?.trials;
  if (boots <= 1 || !o || typeof trials !== 'number') return r;
  const perBoot = bootConfig({ trials } as ResolvedConfig, boots).trials;
  return { ...r, meta: { ...r.meta, options: { ...o, trials: perBoot * boots } } };
}

/**
 * What the table's setup line does not say when points ran on several boots, how its trials
 * split: `each point ran on 2 machine boots: 4 trials per strategy at the first point (2 + 2), 2 on
 * each boot, all counted in the setup line; ...`; undefined for one.
 */
export function bootsNote(r: RunResults): string | undefined {
  const trials = r.points[0]?.strategies[0]?.trials ?? [];
  const perBoot = new Map<number, number>();
  for (const t of trials) perBoot.set(t.boot ?? 0, (perBoot.get(t.boot ?? 0) ?? 0) + 1);
  if (perBoot.size < 2) return undefined;
  const counts = [...perBoot.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
  const even = counts.every((n) => n === counts[0]) ? `, ${counts[0]} on each boot` : '';
  return `each point ran on ${perBoot.size} machine boots: ${trials.length} trials per strategy at the first point (${counts.join(' + ')})${even}, all counted in the setup line; the table pools them, the verdicts weigh boots and trials apart`;
}

/**
 * The line that says where a scenario wrote its sub-runs (nothing without an output directory):
 * `results: DIR (sub-runs: a/, b/; 'deferlab report DIR/<sub-run>' re-renders one)`.
 */
export function resultsLine(outDir: string | null, subRuns: readonly string[]): string | undefined {
  if (!outDir || subRuns.length === 0) return undefined;
  if (subRuns.length === 1)
    return `results: ${outDir} (sub-run: ${subRuns[0]}/; 'deferlab report ${join(outDir, subRuns[0])}' re-renders it)`;
  return `results: ${outDir} (sub-runs: ${subRuns.map((r) => `${r}/`).join(', ')}; 'deferlab report ${join(outDir, '<sub-run>')}' re-renders one)`;
}

/** Print {@link resultsLine}, if there is one. */
export function printResults(ctx: ScenarioContext, subRuns: readonly string[]): void {
  const line = resultsLine(ctx.config.outDir, subRuns);
  if (line) ctx.io.stdout(`\n${line}\n`);
}

export function strategy(point: PointResult | undefined, label: string): StrategyResult | undefined {
  return point?.strategies.find((s) => s.label === label);
}

/** A merged stage summary value of a strategy (ns), NaN when absent. */
export function stageValue(
  s: StrategyResult | undefined,
  stage: StageName,
  key: 'mean' | 'p50' | 'p90' | 'p99' | 'p99_9' | 'max',
): number {
  const v = s?.merged[stage]?.summary[key];
  return typeof v === 'number' ? v : Number.NaN;
}

export function comparison(
  s: StrategyResult | undefined,
  stage: StageName,
  metric: 'mean' | 'p50' | 'p90' | 'p99' | 'p99_9',
) {
  return s?.comparison?.find((c) => c.stage === stage && c.metric === metric);
}

export const us = (ns: number) => (Number.isFinite(ns) ? `${(ns / 1000).toFixed(1)} µs` : 'n/a');
export const ms = (ns: number): string => {
  if (!Number.isFinite(ns)) return 'n/a';
  const t = (ns / 1e6).toFixed(2);
  // Never round a wait under 1 ms up to "1.00 ms": the scenarios count waits over 1 ms.
  return ns < 1e6 && t === '1.00' ? `${(Math.floor(ns / 1e3) / 1e3).toFixed(3)} ms` : `${t} ms`;
};
/** A duration in the unit that reads best: µs below a millisecond, ms from one on. */
export const dur = (ns: number) => (Number.isFinite(ns) && Math.abs(ns) >= 1e6 ? ms(ns) : us(ns));
/** A count in thousands where exact: `20000` → `20k`, `200` → `200` (as --irq-rate takes it). */
export const countText = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');

/**
 * Whether a paired interval (value − baseline, `ciLow`..`ciHigh`) shows an effect in
 * `direction`: `shown` when it excludes 0 on that side; `ruled out` when it excludes an effect
 * of `margin` × the baseline (it stays below it); `open` otherwise, or with no interval.
 *
 * The noise-floor rule, with an A/A control (the comparison's `floor`: the control's own interval
 * on the same stage and metric): no difference inside the floor is a result, so `shown` also
 * needs `diff` beyond the floor on that side; and what an identical copy of the baseline moved
 * cannot be ruled out, so `ruled out` also needs the floor to stay below the margin.
 */
export function effect(
  c:
    | { ciLow: number; ciHigh: number; baseline: number; diff?: number; floor?: { low: number; high: number } }
    | undefined,
  direction: 'up' | 'down',
  margin = SEED_EFFECT,
): 'shown' | 'ruled out' | 'open' {
  if (!c || !Number.isFinite(c.ciLow) || !Number.isFinite(c.ciHigh) || !Number.isFinite(c.baseline)) return 'open';
  const up = direction === 'up';
  const [low, high] = up ? [c.ciLow, c.ciHigh] : [-c.ciHigh, -c.ciLow];
  // The floor in the same orientation: its far side in `direction`.
  const floorFar = c.floor ? (up ? c.floor.high : -c.floor.low) : Number.NEGATIVE_INFINITY;
  const diff = c.diff === undefined ? (low + high) / 2 : up ? c.diff : -c.diff;
  if (low > 0) return diff > floorFar ? 'shown' : 'open';
  const limit = margin * Math.abs(c.baseline);
  if (high < limit && floorFar < limit) return 'ruled out';
  return 'open';
}

/**
 * The noise-floor rule for a metric that has no interval (a share of requests, a rate, a
 * maximum): the A/A control's distance from its baseline on that metric, |control − baseline|,
 * is the floor. NaN without a control (or when either side is unmeasured).
 */
export function pointFloor(baseline: number, control: number | undefined): number {
  return control === undefined ? Number.NaN : Math.abs(control - baseline);
}

/**
 * A difference from the baseline is a result only beyond the noise floor: |diff| > floor. Without
 * a floor (NaN: no control) any difference other than 0 counts.
 */
export function beyondFloor(diff: number, floor: number): boolean {
  if (!Number.isFinite(diff)) return false;
  return Number.isFinite(floor) ? Math.abs(diff) > floor : diff !== 0;
}

/**
 * How a scenario makes its verdicts decide by default: the A/A control (`--control`: the run's
 * measured noise floor, which every verdict respects) and `--until PCT` capped by `--max-time`
 * (per sub-run and sweep point; the first `--trials` rounds always run). `until: null` for a
 * scenario whose verdicts do not read Δ-mean intervals (then rounds would be added for nothing).
 * The user's `--no-control`, `--until off` or other values override them like any preset setting.
 */
export interface Resolution {
  readonly control: boolean;
  readonly until: { readonly pct: number; readonly maxTime: string } | null;
}

/** The preset fields of a {@link Resolution}: spread into a scenario preset's `config`. */
export function resolutionConfig(r: Resolution): { control: boolean; until?: number; maxTimeMs?: string } {
  return { control: r.control, ...(r.until ? { until: r.until.pct, maxTimeMs: r.until.maxTime } : {}) };
}

/**
 * The resolved config a sub-run executes with `until` judged on `stage` (a scenario whose verdicts
 * read a stage other than the table's: cpu-hog's request_to_start); unchanged without --until.
 */
export function untilOn(config: ResolvedConfig, stage: StageName): ResolvedConfig {
  return config.until ? { ...config, until: { ...config.until, stage } } : config;
}

/** The A/A control of a sub-run's point, if it ran one: `<baseline> (control)`. */
export function controlOf(r: RunResults, point: PointResult | undefined): StrategyResult | undefined {
  return r.control ? strategy(point, r.control) : undefined;
}

/** Why an interval-based verdict is inconclusive, and how to get one that decides. */
export function tooFewTrials(trials: number): string {
  return trials < 10
    ? `too few trials: ${trials}; try --trials 10`
    : `the intervals are too wide at ${trials} trials; try --trials ${trials * 2} or a longer --duration`;
}

/**
 * Print the verdicts, or, when the scenario did not complete (`status` 130: interrupted; 1:
 * failed), one line saying they are skipped: partial data decide nothing.
 */
export function printVerdicts(io: CliIo, verdicts: Verdict[], status = 0): void {
  io.stdout('\n');
  if (status === 130) {
    io.stdout('VERDICTS skipped: the run was interrupted, and verdicts from partial data would mislead\n');
    return;
  }
  if (status !== 0) {
    io.stdout('VERDICTS skipped: the run failed, and verdicts from partial data would mislead\n');
    return;
  }
  for (const v of verdicts) io.stdout(`VERDICT ${v.expectation}: ${v.outcome} — ${v.detail}\n`);
}

/** Exit status of a scenario: its sub-runs' worst status (verdicts never fail a run). */
export function scenarioStatus(runs: RunResults[]): number {
  if (runs.some((r) => r.status === 'interrupted')) return 130;
  if (runs.some((r) => r.status === 'failed')) return 1;
  return 0;
}
