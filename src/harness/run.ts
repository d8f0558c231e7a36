/**
 * The experiment: interleaved, repeated trials of every selected strategy on one machine per
 * sweep point, measured with HDR histograms and counters, returned as RunResults.
 *
 * Once per run, before the first machine boots: the host calibration (calibrate.ts, stored as
 * meta.calibration; its load average at the end is taken when the run finishes).
 *
 * Order per point: boot the machine; a warm-up pass that runs every strategy with the fast
 * pool's trigger lowered to WARMUP_TRIGGER (so every hand-off and mix path is compiled by V8
 * before anything is measured; discarded); then rounds, each measuring every strategy once
 * (round.ts): in slices (`--slice`), each slice cycle in a seeded, balanced order (schedule.ts:
 * C A B, B C A, ...; recorded as `points[].schedule`), or as whole trials with `--slice 0`.
 * `--trials N` runs N rounds; `--until PCT` then keeps adding rounds until every Δ-mean interval
 * is within ±PCT% of the baseline mean or `--max-time` runs out (until.ts). Each slice: warm up
 * with the strategy in force (its share of `--warmup`, discarded), measure, drain (no new work;
 * ticks reach every CPU) until all deferred work has run, collect; the entropy pools are reset
 * at a trial's first slice.
 *
 * Faults (a strategy that throws, a thread that dies, a CPU that stops passing preemption
 * points for watchdogMs) end the run at once: finished trials are kept, status 'failed'.
 * An abort (SIGINT/SIGTERM) ends it the same way with status 'interrupted'.
 */
import { arch, platform } from 'node:os';
import type { Histogram } from 'hdr-histogram-js';
import { encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import { autoIdle, autoIdleFreeCores, LIMITS, primeAutoIdle, UNTIL_MIN_ROUNDS } from '../config/defaults.js';
import type { ResolvedConfig } from '../config/schema.js';
import { Interrupted, MachineFaultError } from '../errors.js';
import { Phase } from '../hw/layout.js';
import type { Stage } from '../hw/trace.js';
import { irqTraceMeta, loadIrqTrace } from '../irq/replay.js';
import type { IrqTracePlan } from '../irq/trace-file.js';
import { releaseHistograms } from '../machine/histogram-pool.js';
import { HOST_HELPER_NICE } from '../machine/host-threads.js';
import { Machine, type MachineFault } from '../machine/machine.js';
import type { MachineOptions } from '../machine/options.js';
import type { ThreadHeap } from '../machine/protocol.js';
import { bootRssKey } from '../net/vectors.js';
import { ExplainCollector } from '../report/explain/collect.js';
import { summarize, withComparisons } from '../report/statistics/stats.js';
import type { TrialWindow } from '../report/timeline/timeline.js';
import type { Calibration, PointResult, RunResults, StageName, UntilOutcome } from '../report/types.js';
import { describe } from '../strategies/load.js';
import { VERSION } from '../version.js';
import { bootConfig, mergeBoots } from './boots.js';
import { calibrate, finishCalibration } from './calibrate.js';
import { collectGarbage } from './gc.js';
import { HeapGrowth, suspectText } from './heap-growth.js';
import { mmapThresholdInEffect } from './malloc.js';
import { machineOptions, type PointParams, strategyRefs, sweepPoints, withControl } from './options.js';
import { type RoundContext, runRound, type StrategyAcc, sliceCount } from './round.js';
import { roundOrder, SCHEDULE_METHOD } from './schedule.js';
import { resolveSwitchCost } from './switch-cost.js';
import { resolveTdf } from './tdf.js';
import { intervalWidths, untilProgress, widthsReached } from './until.js';
import { startWatchdog } from './watchdog.js';

/** Trigger during the warm-up pass: 128 times more hand-offs than random.c's 1024. */
export const WARMUP_TRIGGER = 8;
/** The warm-up pass (before a strategy's first trial) runs at least this long. */
export const WARMUP_PASS_MIN_MS = 150;
/**
 * The first warm-up pass of a machine runs three trials' length, up to this. A machine settles
 * over its first seconds: rarer paths (a mix every 1024 interrupts, timers, the NIC's
 * moderation) reach V8's optimising tiers only after enough calls, and until then each costs
 * more, in the tail. Measured here (tcp_lat 64 B inline, poll, 20k/s background, with the
 * trace points recording during warm-ups): after a 1.5 s warm-up, the next second's 250 ms
 * slices had one-way means 0.5–1.7 µs above the later ones' (p50 equal: a tail), decaying over
 * ~1 s; after a 4 s warm-up the first slice was within the later ones' spread. Earlier, with
 * 450 ms: a first 500 ms trial sent 1/20 of the messages of the others.
 */
export const FIRST_WARMUP_MS = 3000;

/** The first warm-up pass of a machine (see {@link FIRST_WARMUP_MS}). */
export function firstWarmupMs(trialMs: number, warmupMs: number): number {
  return Math.max(WARMUP_PASS_MIN_MS, warmupMs, Math.min(FIRST_WARMUP_MS, 3 * trialMs));
}
/** How long deferred work may take to finish after a trial before the run fails (at least: see
 *  drainTimeoutMs). */
export const DRAIN_TIMEOUT_MS = 5_000;

/**
 * The drain's limit for a watchdog limit: work still running when the trial ends is either
 * making progress or stuck, and the watchdog is the judge of stuck (its message says where), so
 * the drain waits until the watchdog would have spoken, and a second more.
 */
export function drainTimeoutMs(watchdogMs: number): number {
  return Math.max(DRAIN_TIMEOUT_MS, watchdogMs + 1000);
}

export interface RunHooks {
  /** A calibration block measured earlier in this process (a scenario's first sub-run): reused
   *  instead of measured again (its end load average is the end of this run's). */
  calibration?: Calibration;
  /** Progress lines (the CLI shows them on a terminal). */
  progress?(line: string): void;
  /** Abort: stop at once, keep what was measured, status 'interrupted'. */
  signal?: AbortSignal;
  command?: string[];
  /** After each measured trial: the machine threads' V8 heaps (the soak watches them). */
  trialDone?(info: { label: string; round: number; threadHeaps: { thread: string; heap: ThreadHeap }[] }): void;
  /** After each measured trial, drained (`--timeline`: src/report/timeline/timeline.ts reads the rings). */
  timeline?: { trialEnd(m: Machine, w: TrialWindow): void };
  /** `--explain`: reads the rings after every slice (made here when the config asks and none is given). */
  explain?: ExplainCollector;
  /** Change the machine a point boots (scenarios: a hog, a driver payload, cross-CPU queues). */
  adjust?: (opts: MachineOptions, params: PointParams) => MachineOptions;
  /** `config.irq.trace`, already read (the CLI reads it before anything runs); else read here. */
  irqTrace?: IrqTracePlan;
  /** Machine boots per sweep point (default 1): the trials split over them (src/harness/boots.ts). */
  boots?: number;
  /** The watchdog's memory limit (bytes; default 75% of the host's memory: src/harness/watchdog.ts). */
  rssLimitBytes?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Run the experiment. Never throws for a fault in the machine: the result's status says it. */
export async function runExperiment(given: ResolvedConfig, hooks: RunHooks = {}): Promise<RunResults> {
  const config = withControl(given); // a scenario's own baseline gets its own control
  const startedAt = new Date();
  const refs = strategyRefs(config);
  const descriptions = await Promise.all(refs.map((r) => describe(r)));
  const host = Machine.hostInfo();
  const trace = config.irq.trace;
  const irqTrace = trace ? (hooks.irqTrace ?? (await loadIrqTrace(trace, config.cpus))) : undefined;
  // --idle auto: look at how idle the host is now, before anything of this run loads it.
  if (config.idle === 'auto') await primeAutoIdle(config.cpus);
  const freeCores = autoIdleFreeCores(); // the sample behind that choice (meta.hostFreeCores)
  // --tdf auto: measured now, before any machine loads the host (src/harness/tdf.ts).
  const tdf = resolveTdf(config.tdf);
  // --switch-cost host: this host's kernel switch, measured now too (src/harness/switch-cost.ts).
  const switchCost = resolveSwitchCost(config.switchCost ?? 'off');
  const results: RunResults = {
    schemaVersion: 1,
    status: 'completed',
    meta: {
      deferlab: VERSION,
      node: process.version,
      v8: process.versions.v8,
      platform: platform(),
      arch: arch(),
      cpuModel: host.cpuModel,
      hostCores: host.hostCores,
      ...(tdf.tdf !== 1 || tdf.mode === 'auto' ? { tdf: { ...tdf } } : {}),
      switchCost: { ...switchCost },
      ...(config.idle === 'auto'
        ? {
            idlePolicy: `${autoIdle(config.cpus)} (auto: ${(freeCores ?? 0).toFixed(1)} of ${host.hostCores} cores free)`,
            ...(freeCores !== undefined ? { hostFreeCores: freeCores } : {}),
          }
        : {}),
      ...(process.platform === 'linux' ? { mmapThreshold: mmapThresholdInEffect() } : {}),
      threads: 0,
      startedAt: startedAt.toISOString(),
      finishedAt: startedAt.toISOString(),
      seed: config.seed,
      command: hooks.command ?? [],
      topology: config.topology,
      options: config,
      ...(trace && irqTrace ? { irqTrace: irqTraceMeta(irqTrace, trace) } : {}),
    },
    baseline: config.baseline,
    ...(config.control ? { control: config.control } : {}),
    sweep: config.sweep ? { param: config.sweep.param, values: [...config.sweep.values] } : null,
    points: [],
  };
  const say = hooks.progress ?? (() => {});
  const explain = hooks.explain ?? (config.explain ? new ExplainCollector() : undefined);
  if (hooks.calibration) results.meta.calibration = { ...hooks.calibration };
  else say('calibrating the host...');
  try {
    results.meta.calibration ??= await calibrate(hooks.signal, switchCost.ns);
  } catch (e) {
    // The run goes on without the block (an abort ends it at the first boot, just below).
    if (!hooks.signal?.aborted) say(`calibration skipped: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    let boot = 0; // machine boots of this run, in order: each draws its own RSS key (runPoint)
    for (const params of sweepPoints(config)) {
      // One machine per boot (hooks.boots, default 1), joined into one point (boots.ts).
      const boots = Math.max(1, hooks.boots ?? 1);
      const parts: PointResult[] = [];
      try {
        for (let b = 0; b < boots && (b === 0 || results.status === 'completed'); b++) {
          if (b > 0) collectGarbage();
          const cb = bootConfig(config, boots);
          parts.push(await runPoint(cb, params, descriptions, results, { ...hooks, irqTrace, explain }, say, boot++));
        }
      } finally {
        // A later boot interrupted while booting keeps the earlier boots' trials.
        if (parts.length) results.points.push(mergeBoots(parts));
      }
      if (results.status !== 'completed') break;
      collectGarbage(); // between points: see gc.ts
    }
  } catch (e) {
    if (e instanceof Interrupted)
      results.status = 'interrupted'; // also BootInterrupted
    else throw e;
  }
  results.meta.finishedAt = new Date().toISOString();
  if (explain) results.explain = explain.results();
  finishCalibration(results.meta.calibration);
  return withComparisons(results);
}

async function runPoint(
  config: ResolvedConfig,
  params: PointParams,
  descriptions: string[],
  results: RunResults,
  hooks: RunHooks,
  say: (l: string) => void,
  boot: number,
): Promise<PointResult> {
  const mo = machineOptions(config, params);
  const base: MachineOptions = {
    ...mo,
    // Every boot draws its RSS key (ixgbe_init_rss_key → netdev_rss_key_fill: random per boot).
    ...(mo.workload.kind === 'tcp_lat' ? { workload: { ...mo.workload, rssKey: bootRssKey(config.seed, boot) } } : {}),
    ...(hooks.irqTrace ? { irqTrace: hooks.irqTrace } : {}),
  };
  const opts = hooks.adjust ? hooks.adjust(base, params) : base;
  const point: PointResult = { params: { ...params } as Record<string, number>, strategies: [] };
  const accs: StrategyAcc[] = opts.strategies.map((r, i) => ({
    result: {
      label: r.label,
      name: r.name,
      kind: r.kind,
      ...(config.strategies[i].file ? { file: config.strategies[i].file } : {}),
      options: { ...r.options },
      description: descriptions[i],
      trials: [],
      merged: {},
      counters: {},
      rates: {},
    },
    merged: {},
  }));
  const pname = Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  say(`booting ${opts.cpus} CPUs${pname ? ` (${pname})` : ''}...`);
  const m = await Machine.boot(opts, hooks.signal); // Ctrl-C during boot: BootInterrupted
  results.meta.threads = m.plan.threads.length;
  if (m.hostHelpers) {
    results.meta.hostHelpersNiced = m.hostHelpers.count;
    results.meta.hostHelpersNice = HOST_HELPER_NICE;
    results.meta.hostHelpersPolicy = m.hostHelpers.policy;
    if (m.hostHelpers.fallback) say(`--host-helpers ${config.hostHelpers}: ${m.hostHelpers.fallback}`);
  }
  const watchdog = startWatchdog(m, config.watchdogMs, () => accs[activeIndex]?.result.label, hooks.rssLimitBytes);
  let activeIndex = 0;
  const abortWatch = aborted(hooks.signal); // one listener for the whole point
  const abort = abortWatch.promise;
  const fault = m.onFault().then(() => 'fault' as const);
  // Trial, slice and warm-up lengths are emulated time (docs/cli.md, --duration): the host waits
  // TDF times as long. --max-time and the watchdog stay host time.
  const dilation = opts.tdf ?? 1;
  const guard = async (ms: number): Promise<void> => {
    const r = await Promise.race([sleep(ms * dilation).then(() => 'ok' as const), fault, abort]);
    if (r === 'fault') throw new MachineFaultError(m.fault!);
    if (r === 'abort') throw new Interrupted();
  };
  const rounds: string[][] = [];
  const until = config.until;
  const minRounds = until ? Math.max(config.trials, UNTIL_MIN_ROUNDS) : config.trials;
  // --max-time caps the rounds --until adds: it counts from the end of the compulsory ones
  // (docs/cli.md). Set when round minRounds is about to start.
  let deadline = Number.POSITIVE_INFINITY;
  let outcome: UntilOutcome | undefined;
  const stopAt = (stop: UntilOutcome['stop'], done: number): void => {
    if (!until) return;
    const widthPct = intervalWidths(
      accs.map((a) => a.result),
      config.baseline,
      until.stage,
    );
    outcome = {
      pct: until.pct,
      maxTimeMs: until.maxTimeMs,
      reached: stop === 'reached',
      rounds: done,
      stop,
      widthPct,
      ...(until.stage ? { stage: until.stage } : {}),
    };
  };
  // Whose slices each thread's heap grew in: a thread that runs out of memory names a suspect.
  const heaps = new HeapGrowth();
  const round: RoundContext = {
    m,
    accs,
    trialMs: config.trialMs,
    warmupMs: config.warmupMs,
    slices: sliceCount(config.trialMs, config.sliceMs),
    trigger: opts.fastPool.trigger,
    warmupTrigger: Math.min(WARMUP_TRIGGER, opts.fastPool.trigger),
    firstWarmupMs: firstWarmupMs(config.trialMs, config.warmupMs),
    warmupPassMs: Math.max(WARMUP_PASS_MIN_MS, config.warmupMs),
    guard,
    endSlice: async (label) => {
      const h = await endTrial(m, label, drainTimeoutMs(config.watchdogMs));
      heaps.note(label, m.threadHeaps());
      return h;
    },
    say,
    setActive: (i) => {
      activeIndex = i;
    },
    lastSliceEnd: hooks.timeline
      ? (label, r, measureStartNs, measureEndNs) =>
          hooks.timeline?.trialEnd(m, { point: results.points.length, label, round: r, measureStartNs, measureEndNs })
      : undefined,
    sliceEnd: hooks.explain
      ? (label, measureEndNs) => hooks.explain?.sliceEnd(m, { point: results.points.length, label, measureEndNs })
      : undefined,
    trialDone: hooks.trialDone
      ? (label, r) => hooks.trialDone?.({ label, round: r, threadHeaps: m.threadHeaps() })
      : undefined,
  };
  point.schedule = { method: SCHEDULE_METHOD, rounds, ...(round.slices > 1 ? { slices: round.slices } : {}) };
  // With --until, every progress line after the minimum rounds carries the current widths.
  let widthsNote = '';
  try {
    // Interleaved trials, round by round.
    let order = 0;
    let roundMs = 0;
    for (let r = 0; ; r++) {
      if (r >= minRounds) {
        if (!until) break;
        if (r === minRounds) deadline = Date.now() + until.maxTimeMs;
        const widths = intervalWidths(
          accs.map((a) => a.result),
          config.baseline,
          until.stage,
        );
        if (widthsReached(widths, until.pct)) {
          stopAt('reached', r);
          break;
        }
        if (r >= LIMITS.trials.max) {
          stopAt('trials', r);
          break;
        }
        if (Date.now() + roundMs > deadline) {
          stopAt('time', r);
          break;
        }
        widthsNote = ` | ${untilProgress(r, widths, until.pct, deadline - Date.now())}`;
      }
      const roundStart = Date.now();
      // One balanced order per slice cycle (schedule.ts): the design's unit is the cycle.
      const cycles = Array.from({ length: round.slices }, (_, k) =>
        roundOrder(config.seed, accs.length, r * round.slices + k),
      );
      for (const c of cycles) rounds.push(c.map((s) => accs[s].result.label));
      const total = until ? `${minRounds}+` : String(config.trials);
      const slicesNote = (k: number) => (round.slices > 1 ? ` (slice ${k + 1}/${round.slices})` : '');
      order = await runRound(
        round,
        r,
        cycles,
        order,
        (label, k) => `trial ${r + 1}/${total}: ${label}${slicesNote(k)}${widthsNote}`,
      );
      roundMs = Date.now() - roundStart;
    }
  } catch (e) {
    if (e instanceof MachineFaultError) {
      results.status = 'failed';
      // A thread that died cannot say whose code it ran: name the strategy in force then.
      results.error = faultError(e.fault, accs[activeIndex]?.result.label, heaps);
    } else if (e instanceof Interrupted) {
      results.status = 'interrupted';
    } else {
      results.status = 'failed';
      results.error = { message: e instanceof Error ? e.message : String(e) };
    }
  } finally {
    abortWatch.release();
    watchdog.stop();
    await m.stop();
  }
  const raised = m.hostHelpers?.raised;
  if (raised) {
    results.meta.hostHelpersRaisedMs = Math.round(raised.afterMs);
    say(
      `--host-helpers idle: raised to nice ${HOST_HELPER_NICE} after ${(raised.afterMs / 1000).toFixed(1)} s: helper thread ${raised.tid} was runnable for ${raised.waitedMs.toFixed(0)} ms with ${raised.ranMs.toFixed(1)} ms on a core (the host's cores were full)${raised.stuck ? `; ${raised.stuck} could not be raised` : ''}`,
    );
  }
  for (const acc of accs) finishStrategy(acc);
  point.strategies = accs.map((a) => a.result);
  if (until && !outcome) stopAt('ended', Math.min(...accs.map((a) => a.result.trials.length)));
  if (outcome) point.until = outcome;
  return point;
}

/** Drain after a trial or warm-up, then collect (and reset) every thread's histograms. */
async function endTrial(m: Machine, label: string, limitMs: number): Promise<Partial<Record<Stage, Histogram>>> {
  m.setPhase(Phase.Drain);
  const busy = await m.drain(limitMs);
  if (busy) {
    throw new MachineFaultError({
      thread: 'main',
      message: `strategy ${label}: deferred work did not finish within ${limitMs / 1000} s after the trial (${busy})`,
      cpu: -1,
      task: '-',
      context: 'drain',
      strategy: label,
      kind: 'fault',
    });
  }
  const h = await m.collect();
  m.setPhase(Phase.Pause);
  // Conservation: every accepted hand-off ran once, every queued work item ran (nothing is
  // cancelled in a run). Counters are cumulative since boot, so this holds at every drain.
  const c = m.counters();
  const lost: string[] = [];
  if (c.mixes !== c.handoffs) lost.push(`${c.handoffs} hand-offs accepted but ${c.mixes} deferred jobs ran`);
  if (c.works_run !== c.works_queued) lost.push(`${c.works_queued} work items queued but ${c.works_run} ran`);
  if (c.mixes_duplicate > 0) lost.push(`${c.mixes_duplicate} deferred jobs ran without a hand-off (run twice)`);
  if (lost.length) {
    throw new MachineFaultError({
      thread: 'main',
      message: `strategy ${label}: work was lost or run twice: ${lost.join('; ')}`,
      cpu: -1,
      task: '-',
      context: 'drain',
      strategy: label,
      kind: 'fault',
    });
  }
  return h;
}

function finishStrategy(acc: StrategyAcc): void {
  const r = acc.result;
  const totalNs = r.trials.reduce((a, t) => a + t.durationNs, 0);
  for (const t of r.trials) {
    for (const [k, v] of Object.entries(t.counters)) {
      if (k === 'time_to_256_bits_ns') continue;
      r.counters[k] = (r.counters[k] ?? 0) + v;
    }
  }
  const ttr = r.trials
    .map((t) => t.counters.time_to_256_bits_ns)
    .filter((x) => Number.isFinite(x))
    .sort((a, b) => a - b);
  r.counters.time_to_256_bits_ns = ttr.length ? ttr[Math.floor(ttr.length / 2)] : Number.NaN;
  if (totalNs > 0) {
    for (const [k, v] of Object.entries(r.counters)) if (k !== 'time_to_256_bits_ns') r.rates[k] = v / (totalNs / 1e9);
  }
  for (const [st, h] of Object.entries(acc.merged) as [Stage, Histogram][]) {
    r.merged[st as StageName] = { summary: summarize(h), histogram: encodeIntoCompressedBase64(h) };
  }
  releaseHistograms(Object.values(acc.merged));
  acc.merged = {};
}

function faultError(f: MachineFault, inForce: string | undefined, heaps: HeapGrowth): RunResults['error'] {
  // A thread that ran out of memory: the strategy whose slices filled its heap, where one stands
  // out, rather than the one in force when it died (heap-growth.ts).
  const suspect = !f.strategy && OUT_OF_MEMORY.test(f.message) ? heaps.suspect(f.thread, inForce) : undefined;
  const strategy = f.strategy ?? suspect?.label ?? inForce;
  const guessed = !f.strategy && inForce !== undefined;
  return {
    message: guessed || suspect ? `${f.message}${suspectText(inForce, suspect)}` : f.message,
    thread: f.thread,
    ...(strategy ? { strategy } : {}),
    ...(f.cpu >= 0 ? { cpu: f.cpu } : {}),
    context: f.context,
  };
}

/** Machine.ts's message for a thread whose heap ran out (ERR_WORKER_OUT_OF_MEMORY). */
const OUT_OF_MEMORY = /^thread \S+ ran out of memory/;

/** A promise that resolves on abort, and a way to drop its listener (one per machine boot). */
function aborted(signal: AbortSignal | undefined): { promise: Promise<'abort'>; release(): void } {
  if (!signal) return { promise: new Promise(() => {}), release: () => {} };
  if (signal.aborted) return { promise: Promise.resolve('abort'), release: () => {} };
  let onAbort = () => {};
  const promise = new Promise<'abort'>((res) => {
    onAbort = () => res('abort');
  });
  signal.addEventListener('abort', onAbort, { once: true });
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}
