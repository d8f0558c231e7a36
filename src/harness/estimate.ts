/**
 * How long a run will take, said before it starts: a rough guide from the resolved config, not
 * a promise (a busy host takes longer).
 */
import { DEFAULTS } from '../config/defaults.js';
import type { ResolvedConfig } from '../config/schema.js';
import { plural } from '../text.js';
import { bootConfig } from './boots.js';
import { withControl } from './options.js';
import { sliceCount } from './round.js';
import { firstWarmupMs, WARMUP_PASS_MIN_MS } from './run.js';
import { resolveTdf } from './tdf.js';

/**
 * Seconds to boot a machine and stop it again: each emulated CPU brings about five threads (the
 * CPU, its kworkers, ksoftirqd), ~0.1 s each to start (measured on 2 busy cores: 1.6 s for 2
 * CPUs, 12 s for 16).
 */
const bootSeconds = (cpus: number) => 0.5 + 0.5 * cpus;
/** Per trial: drain, collect and reset (measured: tens of ms). */
const PER_TRIAL_S = 0.05;
/**
 * Per slice after the first of a trial: its settle, drain and collect. With the fixed part below,
 * fitted to two runs on this 2-core VM (2026-12-06, quiet host): the defaults (9 strategies × 5
 * trials of 10 slices) took 76.9 s from the command to its exit against 67.7 s estimated without
 * them, and 9 × 2 trials of 5 slices 25.5 s against 20.7 s.
 */
const PER_SLICE_S = 0.011;
/** Once per run: Node's start, the strategies' validation, the host calibration, writing the results. */
const FIXED_S = 3.5;
/** The estimate is printed only above this. */
export const ESTIMATE_SHOWN_ABOVE_S = 10;

/**
 * How long `run` will take, in seconds, from the resolved config: per sweep point, a boot (longer
 * with more CPUs), one warm-up pass per strategy, then strategies × trials × (warm-up + duration
 * + drain). A rough guide for the user, not a promise: a busy host takes longer.
 */
export function estimateSeconds(config: ResolvedConfig): number {
  const points = config.sweep ? config.sweep.values.length : 1;
  const n = config.strategies.length;
  const pass = Math.max(WARMUP_PASS_MIN_MS, config.warmupMs);
  const warmupPass = ((n - 1) * pass + firstWarmupMs(config.trialMs, config.warmupMs)) / 1000;
  const trials = n * config.trials * ((config.warmupMs + config.trialMs) / 1000 + PER_TRIAL_S);
  // Warm-ups and trials are emulated time: TDF times as long on the host (--tdf auto measures here).
  const dilation = config.tdf === undefined ? 1 : resolveTdf(config.tdf).tdf;
  const slices = n * config.trials * (sliceCount(config.trialMs, config.sliceMs) - 1) * PER_SLICE_S;
  return FIXED_S + points * (bootSeconds(config.cpus) + (warmupPass + trials) * dilation + slices);
}

/**
 * A scenario's sub-run on `boots` machine boots per point (src/harness/boots.ts): each boot runs
 * its share of the trials (at least 2) after a boot and a warm-up pass of its own; the fixed part
 * (Node's start, the calibration, the writing) once.
 */
export function estimateBootsSeconds(config: ResolvedConfig, boots: number): number {
  return bootsSeconds(withControl(config), boots); // a scenario's control joins its strategies as the run adds it
}

/** estimateBootsSeconds of a config whose control is already among its strategies (withControl). */
function bootsSeconds(config: ResolvedConfig, boots: number): number {
  if (boots <= 1) return estimateSeconds(config);
  return estimateSeconds(bootConfig(config, boots)) * boots - (boots - 1) * FIXED_S;
}

/**
 * The line announcing a scenario's sub-run (stderr), or undefined when it should take at most
 * {@link ESTIMATE_SHOWN_ABOVE_S}: `deferlab: cpu-hog-fifo: about 25 s, then up to 60 s more while ...`.
 * A scenario may replace the duration or add --until (its preset): this says what this sub-run will do.
 */
export function subRunEstimateLine(name: string, given: ResolvedConfig, boots: number): string | undefined {
  const config = withControl(given); // counted as the run will run it, its A/A control included
  const s = bootsSeconds(config, boots);
  if (s <= ESTIMATE_SHOWN_ABOVE_S && !config.until) return undefined;
  const until = untilText(config);
  // Each boot runs its share of the trials, at least 2 (boots.ts): the trials that always run.
  const trials = boots > 1 ? bootConfig(config, boots).trials * boots : config.trials;
  return `deferlab: ${name}: ${plural(config.strategies.length, 'strategy', 'strategies')} × ${plural(trials, 'trial')} of ${config.trialMs < 1000 ? `${config.trialMs} ms` : capText(config.trialMs)} on ${plural(boots, 'boot')}, ${aboutDuration(s)}${until}`;
}

/** `, then up to 1 min more [per point] while a Δ-mean interval is wider than ±3% (--until)`, or '' without --until. */
function untilText(config: ResolvedConfig): string {
  if (!config.until) return '';
  const perPoint = config.sweep && config.sweep.values.length > 1 ? ' per point' : '';
  return `, then up to ${capText(config.until.maxTimeMs)} more${perPoint} while a Δ-mean interval is wider than ±${config.until.pct}% (--until)`;
}

/** `about 65 s`, `about 4 min`, `about 1.5 h`. */
export function aboutDuration(seconds: number): string {
  if (seconds < 100) return `about ${Math.max(5, Math.round(seconds / 5) * 5)} s`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** A cap as given, not rounded (`3 s`, `90 s`, `2 min`, `1.5 h`): it is a bound, not an estimate. */
export function capText(ms: number): string {
  const s = ms / 1000;
  if (s >= 3600 && s % 360 === 0) return `${s / 3600} h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${+s.toFixed(3)} s`;
}

/**
 * The line announcing a long run (stderr), or undefined when the run should take at most
 * {@link ESTIMATE_SHOWN_ABOVE_S}: `deferlab: 9 strategies × 5 trials × 1 sweep point, about 65 s ...`.
 */
export function estimateLine(config: ResolvedConfig): string | undefined {
  const s = estimateSeconds(config);
  if (s <= ESTIMATE_SHOWN_ABOVE_S && !config.until) return undefined;
  const points = config.sweep ? config.sweep.values.length : 1;
  const until = untilText(config);
  return (
    `deferlab: ${plural(config.strategies.length, 'strategy', 'strategies')} × ${plural(config.trials, 'trial')} × ` +
    `${plural(points, 'sweep point')}, ${aboutDuration(s)}${until} (Ctrl-C stops early and keeps the finished trials)`
  );
}

/**
 * The line saying that a `--slice` the user chose is not shorter than a trial (stderr), so the
 * trials are measured whole, as with `--slice 0` (round.ts sliceCount); undefined otherwise, and
 * for the default slice (a short `--duration` alone is not worth a word).
 */
export function wholeTrialsLine(config: ResolvedConfig): string | undefined {
  const { sliceMs, trialMs } = config;
  if (!(sliceMs > 0) || sliceMs < trialMs || sliceMs === DEFAULTS.sliceMs) return undefined;
  return `deferlab: --slice ${sliceMs} ms is not shorter than a trial (--duration ${trialMs} ms): each trial is measured whole, as with --slice 0 (give a slice below the duration to interleave slices)`;
}
