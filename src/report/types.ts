/**
 * The results model: what one `deferlab run` produced, as plain JSON (written as results.json).
 *
 * Everything in the report (the terminal table, results.csv, the .hgrm files, report.html) is
 * derived from this model alone, so `deferlab report DIR` can re-render a run from results.json.
 * The schema is described field by field, with units, in docs/results.md; bump
 * {@link SCHEMA_VERSION} on any change a reader of the previous version would misread.
 *
 * Units: every latency is integer nanoseconds (HDR histograms record integers); `mean` may be
 * fractional. Rates are per second of measured time. NaN and ±Infinity are written to JSON as
 * `null` and read back as NaN (see `readResults`).
 */

import type { IrqTraceMeta } from '../irq/replay.js';

export const SCHEMA_VERSION = 1;

/** The stages (trace points) a run can measure, in pipeline order (the order reports use). */
export const STAGE_NAMES = [
  'one_way',
  'irq_entry',
  'hardirq',
  'handoff_call',
  'handoff_to_start',
  'request_to_start',
  'work',
  'lock_wait',
  'ctx_switch',
  'softirq',
  'idle_exit',
  'kick_wake',
  'wakeup_to_run',
  'wake_to_kick',
  'kick_to_run',
  'net_rx_ksoftirqd_wait',
  'host_stall',
  'gc',
  'one_way_host',
  'request_to_start_host',
] as const;

export type StageName = (typeof STAGE_NAMES)[number];

/** One line per stage, for report headings and docs. */
export const STAGE_DESCRIPTIONS: Readonly<Record<StageName, string>> = {
  one_way: 'application one-way latency (round trip / 2, as qperf reports)',
  irq_entry: 'irq raise → handler start',
  hardirq: 'hard-IRQ handler duration',
  handoff_call: "time spent inside the strategy's hand-off call",
  handoff_to_start:
    "the interrupt that handed off (its handler's entry) → the deferred work starts: the handler's own work before the hand-off call, the call, and the wait (a kernel's workqueue_queue_work → workqueue_execute_start starts at the call)",
  request_to_start:
    "driver payload: each interrupt's request → the run of the work that serves it starts (a request that found the work pending waits for that run)",
  work: 'deferred work duration',
  lock_wait: 'input_pool.lock wait when contended',
  ctx_switch: 'emulated context-switch hand-off',
  softirq: 'one softirq run duration',
  idle_exit: 'idle-exit latency: a halted idle CPU wakes this late for a due interrupt (host wake-up)',
  kick_wake:
    "kicked-idle wake-up: a halted idle CPU woken by another thread (a remote wake-up, an IPI) → its thread runs again (the host's futex wake-up)",
  wakeup_to_run:
    "a woken task: try_to_wake_up → it runs, the run-queue latency after a wake-up (bcc's runqlat; a kworker's, ksoftirqd's, an application task's)",
  wake_to_kick:
    'a task woken onto a halted CPU and hosted on its thread: try_to_wake_up → the ring that ends the halt (the IPI sent)',
  kick_to_run:
    "the same wake-up: the halted CPU's thread runs again → the woken task runs (the emulated idle exit, schedule() and switch)",
  net_rx_ksoftirqd_wait:
    'NET_RX left to ksoftirqd (the 5.15 rule at irq exit, or __do_softirq out of budget) → ksoftirqd runs it',
  host_stall: "host stall: a gap between two preemption points of a running CPU's thread above the threshold",
  gc: 'one V8 garbage collection on a CPU or kthread thread',
  one_way_host: '--host-stalls mark|drop: one_way of the exchanges that overlapped a host stall',
  request_to_start_host: '--host-stalls mark|drop: request_to_start of the requests that overlapped a host stall',
};

/** Percentile summary of one histogram. All ns; when `count` is 0 every other field is 0. */
export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
}

/** The summary fields a comparison can be made on. */
export const COMPARABLE_METRICS = ['mean', 'p50', 'p90', 'p99', 'p99_9'] as const;
export type ComparableMetric = (typeof COMPARABLE_METRICS)[number];

/** How a summary field is titled in text: `p99_9` as `p99.9`, the rest as named. */
export function metricTitle(metric: string): string {
  return metric === 'p99_9' ? 'p99.9' : metric;
}

export interface TrialResult {
  /** Repetition number of this strategy (0, 1, 2, ...): trial `index` of a strategy is paired with trial `index` of the baseline. */
  index: number;
  /** Position of this trial in the run's interleaved order (A0 B0 C0 A1 B1 C1 ... → 0, 1, 2, 3, ...). */
  order: number;
  /** Measured time of this trial, ns (warm-up excluded). */
  durationNs: number;
  stages: Partial<Record<StageName, Summary>>;
  counters: Record<string, number>;
  /**
   * Trials measured in slices (`--slice`): per stage, each slice's sample count and mean (ns), in
   * slice order; count 0 and mean NaN (`null` in JSON) for a slice that recorded nothing in the
   * stage, or that an interrupt dropped. Slice k of trial r ran in the same slice cycle as slice k
   * of every other strategy's trial r, so the Δ-mean comparison pairs cycles instead of trials
   * (src/report/statistics/slices.ts). Absent for whole trials and in results written before slices existed.
   */
  slices?: Partial<Record<StageName, SliceStats>>;
  /** The machine boot (0, 1, ...) this trial ran on, when its point ran on several (scenarios: src/harness/boots.ts); absent: one boot. */
  boot?: number;
}

/** One stage's slices of a trial: `count[k]` samples with mean `mean[k]` ns in slice k. */
export interface SliceStats {
  count: number[];
  mean: number[];
  /**
   * The tail stages only (TAIL_STAGES, src/report/statistics/slice-hist.ts): per slice, its
   * histogram on log bins of 2^(1/64), as `bin:count` pairs separated by spaces, each bin after
   * the first given as its distance from the previous one (`1042:3 1:17 2:40`); `` for a slice
   * that recorded nothing. The tail intervals resample slice cycles and merge these (tails.ts).
   * Absent in results written before them.
   */
  hist?: string[];
}

export interface MergedStage {
  summary: Summary;
  /** hdr-histogram-js `encodeIntoCompressedBase64` of the histogram merged over all trials (values in ns). */
  histogram: string;
}

export interface StrategyResult {
  /** Unique within a point; what reports show. User-supplied: escape it wherever it is rendered. */
  label: string;
  /** Strategy name (`workqueue`, ...) or the class name of a user's strategy. */
  name: string;
  kind: 'builtin' | 'file';
  /** Path of a user's strategy file (kind `file`). User-supplied. */
  file?: string;
  options: Record<string, unknown>;
  description: string;
  trials: TrialResult[];
  merged: Partial<Record<StageName, MergedStage>>;
  /** Summed over trials. Names are free-form (`interrupts`, `wakeups`, `entropy_bits`, ...). */
  counters: Record<string, number>;
  /** Counters per second of measured time (sum of counter / sum of trial durations). */
  rates: Record<string, number>;
  /** Against the baseline; absent for the baseline itself. */
  comparison?: Comparison[];
}

export interface Comparison {
  stage: StageName;
  metric: ComparableMetric;
  /** Mean over the paired trials of the baseline's per-trial metric, ns. */
  baseline: number;
  /** Mean over the paired trials of this strategy's per-trial metric, ns. */
  value: number;
  /** value − baseline = mean of the paired per-trial differences, ns. */
  diff: number;
  /** 95% interval of `diff`, ns; NaN when fewer than 2 pairs. */
  ciLow: number;
  ciHigh: number;
  /** value / baseline. */
  ratio: number;
  /**
   * The smallest effect this comparison could detect, ns: the minimum detectable effect at 80%
   * power, (t(0.975, n−1) + t(0.80, n−1)) · sd(d)/√n. NaN with fewer than 2 pairs. Absent in
   * results written before it existed.
   */
  detectable?: number;
  /**
   * Runs with an A/A control (`--control`): the control's 95% interval on the same stage and
   * metric, ns: the run's measured noise floor. Absent on the control itself and without one.
   */
  floor?: { low: number; high: number };
  /**
   * True when the interval excluded 0 but `diff` lay inside {@link floor}: an A/A copy moved as
   * much, so the verdict is `within-noise`.
   */
  insideFloor?: boolean;
  verdict: Verdict;
  /** How the interval was computed, in words (e.g. `paired t, n=5 pairs, df=4, t=2.776`). */
  method: string;
  /**
   * Standard error of `diff`, ns, and its degrees of freedom (the units, pairs of trials or
   * slice cycles, minus 1): the unadjusted 95% interval is diff ± t(0.975, df)·se. Absent in
   * results written before them.
   */
  se?: number;
  df?: number;
  /** Two-sided p-value of diff = 0 (t test on diff/se), before any adjustment. */
  p?: number;
  /**
   * The confidence level of [ciLow, ciHigh] when it is not 95%: the run's family adjustment
   * (src/report/statistics/family.ts) widened it, e.g. 0.99375 for Holm's first step over 8
   * candidates. `adjust` names the adjustment: `holm` (Δ mean over the candidates), `bh` (every
   * tail test of the stage, Benjamini-Hochberg's false-coverage-rate interval), `none` (the A/A
   * control: its interval is the noise floor).
   */
  level?: number;
  adjust?: 'holm' | 'bh' | 'none';
  /**
   * The practical-significance band, ns (`--threshold PCT` of the baseline's value): a
   * difference is called only when the interval lies wholly outside ±threshold.
   */
  threshold?: number;
}

export type Verdict = 'regression' | 'improvement' | 'within-noise';

export interface PointResult {
  /** The swept parameter(s) at this point, e.g. `{ msg_size: 4096 }`; `{}` without a sweep. */
  params: Record<string, number | string>;
  strategies: StrategyResult[];
  /**
   * The order trials ran in: `rounds[r]` lists the strategy labels of round r in run order
   * (trial r of each). Drawn from the run's seed (see src/harness/schedule.ts). Absent in
   * results written before the order was randomised (every round then ran in list order).
   */
  schedule?: {
    method: string;
    /**
     * Without slices, `rounds[r]` is round r's order. With `slices` > 1 every entry is one slice
     * cycle, and round r is entries r·slices .. r·slices + slices − 1.
     */
    rounds: string[][];
    /** Slices per trial (absent: 1, whole trials). */
    slices?: number;
  };
  /** Runs with `--until`: whether the target width was reached at this point. */
  until?: UntilOutcome;
}

/** What `--until PCT --max-time T` achieved at one point. */
export interface UntilOutcome {
  /** The target: every Δ-mean interval narrower than ±pct% of the baseline mean. */
  pct: number;
  maxTimeMs: number;
  reached: boolean;
  /** Rounds run (each strategy ran this many trials). */
  rounds: number;
  /** Why it stopped: the target was reached, the time ran out, the trial limit (1000) was hit, or the run ended early (interrupted or failed). */
  stop: 'reached' | 'time' | 'trials' | 'ended';
  /** Per strategy label (not the baseline): the Δ-mean interval's half-width, % of the baseline mean, when it stopped. */
  widthPct: Record<string, number>;
  /** The stage judged, when not the table's (a scenario's choice: cpu-hog's request_to_start); absent in older results. */
  stage?: StageName;
}

export interface RunError {
  message: string;
  thread?: string;
  strategy?: string;
  cpu?: number;
  context?: string;
}

export interface RunMeta {
  /** deferlab version. */
  deferlab: string;
  node: string;
  v8: string;
  platform: string;
  arch: string;
  cpuModel: string;
  hostCores: number;
  /** Threads the run started (CPUs + kthreads + irq). */
  threads: number;
  /** ISO 8601. */
  startedAt: string;
  finishedAt: string;
  seed: number;
  command: string[];
  topology: unknown;
  /** The resolved config. */
  options: unknown;
  /**
   * What ran instead of `options.workload`, in words, when a scenario replaced the machine's
   * workload (cpu-hog: a CPU hog and a driver); the table's setup line shows it.
   */
  workload?: string;
  /** The host's costs, measured before the first machine booted; absent in older results. */
  calibration?: Calibration;
  /**
   * `--host-helpers nice`: how many of the process's threads that are not the machine's (V8's
   * helpers, libuv's pool) were reniced (-1: /proc could not be read). Absent: left alone, or
   * results from before the option.
   */
  hostHelpersNiced?: number;
  /** The nice they were given (src/machine/host-threads.ts HOST_HELPER_NICE); absent in results before 2026-12-07, whose helpers went to 19. */
  hostHelpersNice?: number;
  /** What they were lowered to: `nice 10` or `SCHED_IDLE` (--host-helpers idle); absent before 2026-12-07 (a nice: hostHelpersNice). */
  hostHelpersPolicy?: string;
  /**
   * Under `SCHED_IDLE`: ms after boot at which a helper starved and all were raised to the nice
   * (src/machine/host-threads.ts watchIdleHelpers); absent when none starved, and before 2026-12-07.
   */
  hostHelpersRaisedMs?: number;
  /** When `options.idle` was `auto`: the policy the CPUs ran and why, e.g. `poll (auto: 1.9 of 2 cores free)`. */
  idlePolicy?: string;
  /**
   * When `options.idle` was `auto`: the host cores other processes left free just before the run
   * (src/config/defaults.ts sampleIdleCores, over IDLE_SAMPLE_MS); absent otherwise and before 2026-12-07.
   */
  hostFreeCores?: number;
  /**
   * glibc's mmap threshold the run's process had: the value of MALLOC_MMAP_THRESHOLD_ (bytes;
   * the CLI sets 131072, src/harness/malloc.ts), or null when it was glibc's dynamic threshold.
   * Absent in older results and off Linux.
   */
  mmapThreshold?: number | null;
  /** With `--irq-trace`: the trace replayed instead of the generator (src/irq/replay.ts). */
  irqTrace?: IrqTraceMeta;
  /**
   * Time dilation (`--tdf`, src/harness/tdf.ts): the factor the emulated clock ran at (every
   * time in these results is emulated: host time / tdf) and how it was chosen. Absent: 1.
   */
  /**
   * The context-switch model (`--switch-cost`, src/harness/switch-cost.ts): the least a switch
   * lasted (emulated ns; 0: not charged) and how it was chosen; with `host`, the probe's two
   * figures. Absent: results from before the model (no charge).
   */
  switchCost?: { ns: number; mode: 'host' | 'given' | 'off'; how: string; pingpongNs?: number; syscallsNs?: number };
  tdf?: {
    tdf: number;
    mode: 'given' | 'default' | 'auto';
    how: string;
    ops?: { name: string; unit: string; labNs: number; refNs: number; refSource: string }[];
  };
}

/**
 * What the emulation's own mechanisms cost on this host, measured with real threads and clocks
 * at the start of the run, before any machine boots (src/harness/calibrate.ts); docs/results.md
 * says how each bears on the results. Timings are ns: the futex and hand-off percentiles are
 * medians over `repetitions`, the single-thread figures the median of `batches` short batches.
 */
export interface Calibration {
  /** One-way host futex wake: half an Atomics.wait/notify ping-pong round trip, p50 and p99. */
  futexWakeP50Ns: number;
  futexWakeP99Ns: number;
  /** One-way cross-thread hand-off as the machine makes it (owner word + Doorbell), p50 and p99. */
  handoffP50Ns: number;
  handoffP99Ns: number;
  /** One switch between two tasks hosted on one thread, through the real scheduler path. */
  sameThreadSwitchNs: number;
  /** The same switch with the run's --switch-cost floor charged (the model), ns; absent without one. */
  sameThreadSwitchChargedNs?: number;
  /** One src/clock.ts nowNs() call. */
  clockReadNs: number;
  /** One HDR histogram recordValue (the WASM build unless `histWasm` is false). */
  histRecordNs: number;
  histWasm: boolean;
  /** Round trips measured per repetition (futex and hand-off each), and the repetitions. */
  roundTrips: number;
  repetitions: number;
  /** Short batches the single-thread figures (switch, clock, histogram) are the median of. */
  batches: number;
  /** Wall time the calibration took, thread start-up included, ms. */
  durationMs: number;
  /** os.availableParallelism() and the first core's model string. */
  hostCores: number;
  cpuModel: string;
  /** os.loadavg() (1, 5, 15 minutes) just before calibrating and when the run finished. */
  loadAvgStart: number[];
  loadAvgEnd: number[];
}

export interface RunResults {
  schemaVersion: typeof SCHEMA_VERSION;
  status: 'completed' | 'interrupted' | 'failed';
  error?: RunError;
  meta: RunMeta;
  /** Label of the baseline strategy (present in every point). */
  baseline: string;
  /**
   * Runs with `--control`: the label of the A/A copy of the baseline (a second instance of the
   * same strategy spec). Its Δ is the run's noise floor; no verdict calls a difference inside it.
   */
  control?: string;
  sweep: { param: string; values: number[] } | null;
  points: PointResult[];
  /** `--explain`: per point and strategy, latency by cause along the critical path (src/report/explain/). */
  explain?: ExplainResults;
}

/** One bucket of explained latencies: [index, count, latency sum ns, ...cause sums ns] (src/report/explain/buckets.ts). */
export type ExplainBucketRow = number[];

/** The explain data of one strategy at one point (`--explain`). */
export interface ExplainSeries {
  label: string;
  /** 'exchange': tcp_lat's (one-way, as its histogram); 'handoff': hand-off to work start. */
  kind: 'exchange' | 'handoff';
  /** Explained. */
  count: number;
  /** Seen but not explained (a ring overwrote their records before they were read). */
  unexplained: number;
  causes: string[];
  /** Log-latency buckets 1% wide (bucket i holds latencies in [1.01^i, 1.01^(i+1)) ns). */
  buckets: ExplainBucketRow[];
}

/** What results.json carries with `--explain` (RunResults.explain). */
export interface ExplainResults {
  /** How the numbers were made, in a sentence (docs/results.md has the rest). */
  method: string;
  /** Per sweep point (its index), per strategy and kind. */
  points: { point: number; series: ExplainSeries[] }[];
}
