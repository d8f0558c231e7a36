import { KERNEL_NAMES, type KernelName, kernelProfile } from '../../kernel/profiles.js';
import { plural } from '../../text.js';
import { median } from '../statistics/order.js';
import { slicePairing } from '../statistics/slices.js';
import { type PointResult, STAGE_NAMES, type StageName, type StrategyResult } from '../types.js';
import type { TableContext } from './context.js';

/** The strategy measured `stage` (at least one sample). */
export const hasStage = (s: StrategyResult, stage: StageName): boolean => (s.merged[stage]?.summary.count ?? 0) > 0;

/** A trial is flagged when it sent fewer than this fraction of the median trial's messages. */
export const SHORT_TRIAL_FRACTION = 0.25;

export const listOf = (xs: readonly string[]): string =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/**
 * `note:` lines, one per strategy whose trials differ wildly in messages sent (`app_messages`):
 * a trial under {@link SHORT_TRIAL_FRACTION} of the median trial. The pooled mean weighs such a
 * trial by its few messages, the paired Δ as a whole trial: the two can then disagree.
 */
export function shortTrialNotes(point: PointResult): string[] {
  const out: string[] = [];
  for (const s of point.strategies) {
    const counts = s.trials
      .map((t) => ({ n: t.index + 1, msgs: t.counters.app_messages }))
      .filter((t): t is { n: number; msgs: number } => typeof t.msgs === 'number' && Number.isFinite(t.msgs));
    if (counts.length < 2) continue;
    const med = median(counts.map((c) => c.msgs));
    if (!(med > 0)) continue;
    const short = counts.filter((c) => c.msgs < SHORT_TRIAL_FRACTION * med);
    if (!short.length) continue;
    const which = `${short.length === 1 ? 'trial' : 'trials'} ${listOf(short.map((c) => String(c.n)))} of ${s.trials.length}`;
    // Sliced comparisons pool the cycles by count, as the mean column does: no disagreement then.
    const sliced = point.strategies.some((x) =>
      x.comparison?.some((c) => c.metric === 'mean' && /slice cycle/.test(c.method ?? '')),
    );
    out.push(
      `note: ${s.label} ${which} sent ${listOf(short.map((c) => String(c.msgs)))} messages against a median of ` +
        `${Math.round(med)} (a host stall?); ${sliced ? 'its few samples weigh by their count in the mean and in Δ' : 'Δ is averaged per trial, mean is pooled'}`,
    );
  }
  return out;
}

/**
 * A note when a sliced Δ left cycles out: slices pair by cycle (statistics/slices.ts), and a cycle
 * where either side recorded no sample of `stage` (a host stall took the slice) has no pair, so
 * it is in neither side's Δ, while the mean column keeps the other side's samples of it. Without
 * the note the Δ and the difference of the means disagree for no reason the table gives (a new
 * user's run: tasklet's means differed by +15.98 µs, its Δ +21.67).
 */
export function droppedSliceNotes(point: PointResult, baselineLabel: string, stage: StageName): string[] {
  const base = point.strategies.find((s) => s.label === baselineLabel);
  if (!base) return [];
  const left: string[] = [];
  for (const s of point.strategies) {
    if (s === base) continue;
    const p = slicePairing(base, s, stage);
    if (p?.dropped) left.push(`${s.label} ${p.dropped} of ${p.pairs.length + p.dropped}`);
  }
  if (!left.length) return [];
  return [
    `note: Δ pairs slices by cycle, and a cycle where either side measured no ${stage} sample (a host stall?) is left out of it, though the mean column keeps the other side's samples of it: ${left.join(', ')} cycles left out`,
  ];
}

/**
 * A `warning:` line naming the strategies that ran trials but recorded no application latency
 * (one_way) sample, while others did; or, when trials ran and no strategy recorded a sample of
 * any stage (not even a hand-off: the table is all '-'), one saying that nothing was measured.
 * Undefined otherwise.
 */
export function noSamplesWarning(point: PointResult, ctx: TableContext = {}): string | undefined {
  if (ctx.tracing === false) return undefined; // nothing was traced: TRACING_OFF_NOTE says so
  const window = ctx.trialMs !== undefined ? `${ctx.trialMs} ms measured per trial` : 'measured window';
  const machine =
    ctx.cpus !== undefined
      ? ` for ${ctx.cpus} emulated CPUs${ctx.hostCores !== undefined ? ` on ${ctx.hostCores} host cores` : ''}`
      : '';
  const ran = point.strategies.filter((s) => s.trials.length > 0);
  if (ran.length && !ran.some((s) => STAGE_NAMES.some((st) => hasStage(s, st))))
    return (
      `warning: nothing was measured: no strategy recorded a sample of any stage (no message, no hand-off) ` +
      `in the ${window}${machine}; raise --duration`
    );
  if (!point.strategies.some((s) => hasStage(s, 'one_way'))) return undefined;
  const empty = ran.filter((s) => !hasStage(s, 'one_way')).map((s) => s.label);
  if (!empty.length) return undefined;
  return (
    `warning: no application latency (one_way) sample from ${listOf(empty)}: ` +
    `the ${window} may be too short${machine}; raise --duration`
  );
}

/** Under the table of a run with tracing off: why every latency cell is '-'. */
export const TRACING_OFF_NOTE = '(tracing off (--no-tracing): no latencies were recorded; the counters are complete)';

/** A word for a shell command line: quoted when it holds anything a shell would read. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/["$`\\]/g, '\\$&')}"`;
}

/**
 * `deferlab check-strategy` for a strategy of the results or of a run's config: its file (or
 * name) and its options, quoted for a shell where it must be.
 */
export function checkCommand(s: Pick<StrategyResult, 'kind' | 'file' | 'name' | 'options'>): string {
  const keys = Object.keys(s.options ?? {}).sort();
  const options = keys.length ? `:${keys.map((k) => `${k}=${String(s.options[k])}`).join(',')}` : '';
  return `deferlab check-strategy ${shellWord(`${s.kind === 'file' && s.file ? s.file : s.name}${options}`)}`;
}

/**
 * `warning:` lines, one per strategy that made no hand-off in its measured windows because its
 * mixes ran on another CPU (counter `mixes_remote`, counted from each trial's warm-up): random.c's
 * mix_interrupt_randomness refuses such a mix and leaves that CPU's fast pool in flight, so the
 * CPU stops handing off. Its latency is then that of deferring nothing, and the table would show
 * it as cheap as inline (a new user's irq_work to the next CPU read "~" beside inline, with
 * entropy 0). Only where no hand-off at all was made in the windows and another strategy made some.
 */
export function strandedWarnings(point: PointResult): string[] {
  if (!point.strategies.some((s) => (s.counters?.handoffs ?? 0) > 0)) return [];
  const out: string[] = [];
  for (const s of point.strategies) {
    const remote = s.counters?.mixes_remote;
    if (s.trials.length === 0 || s.counters?.handoffs !== 0 || typeof remote !== 'number' || !(remote > 0)) continue;
    out.push(
      `warning: ${s.label} made no hand-off in its measured windows: ${remote === 1 ? 'its 1 mix' : `its ${remote} mixes`} ran on another CPU, which random.c refuses, leaving that CPU's fast pool in flight (MIX_INFLIGHT), so it deferred nothing and its latency is not a deferral's; run '${checkCommand(s)}'`,
    );
  }
  return out;
}

/**
 * `warning:` lines, one per strategy that refused hand-offs while nothing was pending for that
 * CPU (counter `handoffs_lost`): each such job is lost, and random.c's fast pool stays in flight,
 * so that CPU gives no more entropy. Results without the counter (older files) give none.
 */
export function handoffsLostWarnings(point: PointResult): string[] {
  const out: string[] = [];
  for (const s of point.strategies) {
    const n = s.counters?.handoffs_lost;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) continue;
    const jobs =
      n === 1
        ? 'hand-off while nothing was pending: that job was lost'
        : 'hand-offs while nothing was pending: those jobs were lost';
    out.push(`warning: ${s.label} refused ${n} ${jobs} (its CPU stops giving entropy); run '${checkCommand(s)}'`);
  }
  return out;
}

/**
 * A note when other processes held the host's cores as the run began (the `--idle auto` sample):
 * they shared the cores with the machine's threads, so every latency and interval is wider than
 * the host alone would give, which a reader of a busy host's table should know before comparing it
 * with another run. Fewer free cores than the machine has CPUs (up to the host's cores), by a
 * quarter core or more: a sample of 0.2 s moves by a few hundredths on a quiet host.
 */
export function busyHostNote(ctx: TableContext): string[] {
  const free = ctx.hostFreeCores;
  const cores = ctx.hostCores;
  if (free === undefined || cores === undefined) return [];
  const wanted = Math.min(ctx.cpus ?? cores, cores);
  if (free > wanted - BUSY_MARGIN_CORES) return [];
  return [
    `the host was busy as the run began: other processes left ${free.toFixed(1)} of its ${plural(cores, 'core')} free, where this machine's CPU threads want ${wanted}; they shared the cores, which lengthens the latencies and widens every interval here (a quieter host narrows them)`,
  ];
}

/** How many cores short of what the machine wants the host's free cores must be for busyHostNote. */
const BUSY_MARGIN_CORES = 0.25;

/**
 * A note when the run's kernel has no WQ_BH and so no bh_workqueue was compared beside a tasklet
 * (which WQ_BH was made to replace): the default strategy list leaves it out there
 * (src/config/schema.ts), which a reader of the table would otherwise take for an omission.
 */
export function noWqBhNote(point: PointResult, kernel: string | undefined): string[] {
  // Results name one of the profiles (kernel/profiles.ts says which have WQ_BH); anything else, nothing.
  if (kernel === undefined || !(KERNEL_NAMES as readonly string[]).includes(kernel)) return [];
  if (kernelProfile(kernel as KernelName).wqBh) return [];
  const labels = point.strategies.map((s) => s.label);
  if (!labels.some((l) => l.startsWith('tasklet')) || labels.some((l) => l.startsWith('bh_workqueue'))) return [];
  return [
    `bh_workqueue is not compared: WQ_BH workqueues exist from Linux 6.9 on, and this run's kernel is ${kernel} (--kernel 6.9 or later to compare it)`,
  ];
}
