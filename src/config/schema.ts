/**
 * The resolved configuration of a run, and `resolveConfig`, the one place it is made.
 *
 * Layers, lowest first: frozen defaults (defaults.ts) < a scenario's preset < the JSON config
 * file < the flags. Each layer is validated on its own (input.ts), merged field by field, then
 * checked as a whole (checks.ts). The result is plain JSON, deeply frozen: it is written into
 * results.json and posted to worker threads as it is.
 */

import { resolve as resolvePath } from 'node:path';
import type { IrqTraceConfig } from '../irq/replay.js';
import { kernelProfile } from '../kernel/profiles.js';
import { DEFAULT_KTHREAD_CHARGE, type KthreadCharge } from '../kernel/sched/rq.js';
import type { HostHelperMode } from '../machine/host-threads.js';
import type { NicOptions } from '../net/profiles.js';
import { DEFAULT_THRESHOLD_PCT } from '../report/statistics/family.js';
import type { StageName } from '../report/types.js';
import {
  checkCommandSettings,
  checkIrqCpus,
  checkMinCpus,
  checkMinNodeCpus,
  checkSweep,
  checkTcpLat,
  checkWorkloadFields,
  resolveBaseline,
  resolveNic,
  resolveStrategies,
} from './checks.js';
import {
  DEFAULTS,
  deepFreeze,
  defaultWatchdogMs,
  type FastMixVariant,
  type HogHostingName,
  type HostStallMode,
  type Hz,
  type IdlePolicy,
  type IrqPattern,
  type KernelProfileName,
  type KthreadHostingName,
  machineDefaults,
  type NotifyPolicy,
  RESULTS_PARENT_DIR,
} from './defaults.js';
import { conflict } from './errors.js';
import { type ParsedPartial, type PartialConfig, validateLayer } from './input.js';
import { resolveIrqTrace } from './irq-trace.js';
import { type Layer, Origins, type Source } from './origins.js';
import { checkAppCpus, checkNicIrqCpus, resolveNodes } from './placement.js';
import type { CommandRulesFor } from './rules.js';
import type { StrategySpec } from './strategy-spec.js';
import type { Sweep } from './sweep.js';
import { checkTopology, describedCpuCount, type Topology } from './topology.js';

export type { FastMixVariant, Hz, IrqPattern, NotifyPolicy, WorkloadKind } from './defaults.js';
export {
  DEFAULTS,
  HZ_VALUES,
  IRQ_PATTERNS,
  LIMITS,
  NOTIFY_POLICIES,
  UNTIL_MIN_ROUNDS,
  WORKLOAD_KINDS,
} from './defaults.js';
export type { PartialConfig } from './input.js';
export type { CommandRules, CommandRulesFor, FixedSetting } from './rules.js';
export { BUILTIN_STRATEGY_NAMES, DEFAULT_STRATEGY_SPECS, type StrategySpec } from './strategy-spec.js';
export type { Sweep, SweepParam } from './sweep.js';
export { type CpuGroups, TOPOLOGY_LEVELS, type Topology } from './topology.js';

/** qperf's tcp_lat: a client and a server task ping-pong `msgSize`-byte messages through rings. */
export interface TcpLatWorkload {
  readonly kind: 'tcp_lat';
  readonly msgSize: number;
  readonly clientCpu: number;
  readonly serverCpu: number;
  /** Bytes per direction; a power of two. */
  readonly ringBytes: number;
  /** The NIC both ends use: a profile with the user's overrides (src/net/profiles.ts). */
  readonly nic: NicOptions;
  /** Client/server pairs. */
  readonly instances: number;
  /** `--app-cpus`: the CPUs the application's tasks may run on (sorted); absent: pinned pairs. */
  readonly appCpus?: readonly number[];
  /** `--nic-irq-cpus`: the CPUs the NIC's vectors interrupt (sorted); absent: each receiver's CPU. */
  readonly nicIrqCpus?: readonly number[];
}

/** No application: only the background interrupts (and their deferred work) run. */
export interface IrqOnlyWorkload {
  readonly kind: 'irq_only';
}

export type Workload = TcpLatWorkload | IrqOnlyWorkload;

export interface IrqConfig {
  /** Interrupts per second, per target CPU. */
  readonly rate: number;
  readonly pattern: IrqPattern;
  /** Interrupts per burst when `pattern` is 'bursts'. */
  readonly burstSize: number;
  readonly cpus: readonly number[] | 'all';
  /** `--irq-trace`: arrivals replayed from a recorded trace instead (src/irq/replay.ts); absent: none. */
  readonly trace?: IrqTraceConfig;
}

export interface FastPoolConfig {
  /** Interrupts a fast pool takes before it is mixed into the input pool (random.c: 1024). */
  readonly trigger: number;
  readonly variant: FastMixVariant;
}

export interface ResolvedConfig {
  readonly cpus: number;
  readonly hz: Hz;
  readonly trialMs: number;
  readonly warmupMs: number;
  /** A trial is measured in slices of about this long, interleaved over the round (0: whole trials). */
  readonly sliceMs: number;
  readonly trials: number;
  /** In run order; labels unique. */
  readonly strategies: readonly StrategySpec[];
  /** The label of one of `strategies`. */
  readonly baseline: string;
  readonly workload: Workload;
  readonly irq: IrqConfig;
  /** uint32; chosen at random when not given, and recorded so the run can be replayed. */
  readonly seed: number;
  readonly notify: NotifyPolicy;
  readonly topology: Topology;
  readonly fastPool: FastPoolConfig;
  readonly unboundWorkers: number;
  /** Bounded spins on a held lock before sleeping on it. */
  readonly lockSpins: number;
  /** How long an idle CPU polls before it sleeps, in ns. */
  readonly idle: IdlePolicy;
  readonly kthreads: KthreadHostingName;
  /** `--hogs`: hogs and spinners on threads of their own (the default) or on their CPU's thread. */
  readonly hogs: HogHostingName;
  readonly kernel: KernelProfileName;
  /** Time dilation factor, or `auto` (src/harness/tdf.ts resolves it before the run); absent: 1. */
  readonly tdf?: number | 'auto';
  /** `--switch-cost`: the context-switch floor, `host` (measured at start-up), `off`, or ns (src/harness/switch-cost.ts). */
  readonly switchCost: number | 'host' | 'off';
  /**
   * `--softirq-defer`: the ksoftirqd_running() rule on (true) or off (false) whatever the kernel
   * profile says; null: the profile's rule (on for 5.15 and 6.1, off for 6.9), so a config copied
   * with another `kernel` (a scenario's runs beside its own) follows that kernel.
   */
  readonly softirqDefer: boolean | null;
  readonly watchdogMs: number;
  readonly tracing: boolean;
  /** --host-stalls: keep, mark or drop samples that overlapped a host stall (src/machine/host-stall.ts). */
  readonly hostStalls: HostStallMode;
  /** Charge the host's run delay over a stall as steal (docs/twin.md). */
  readonly hostSteal: boolean;
  /** Absolute; null when nothing is to be written. */
  readonly outDir: string | null;
  readonly sweep: Sweep | null;
  /**
   * `--control`: the label of the A/A copy of the baseline, `<baseline> (control)`, which is
   * the last of `strategies` (the same spec as the baseline: a second instance of it); or null.
   */
  readonly control: string | null;
  /** `--until PCT --max-time T`: add rounds until every Δ-mean interval is within ±pct%; or null. */
  readonly until: UntilConfig | null;
  /** `--wide`: every column in the terminal table. */
  readonly wide: boolean;
  /** `--threshold PCT`: the practical-significance band, % of the baseline (src/report/statistics/family.ts). */
  readonly threshold: number;
  /** `--timeline [--timeline-window T]`: write timeline.json; null: off. */
  readonly timeline: TimelineConfig | null;
  /** `--explain`: each exchange's critical path by cause (src/report/explain/); absent: off. */
  readonly explain?: boolean;
  /** `--kthread-charge`: kthreads charged their work items only (the default model) or their wall time. */
  readonly kthreadCharge: KthreadCharge;
  /** `--host-helpers`: the process's threads that are not the machine's at nice 10 (`nice`) or left alone. */
  readonly hostHelpers: HostHelperMode;
}

export interface TimelineConfig {
  /** The last part of each trial's measured phase kept (and the drain after it), ms. */
  readonly windowMs: number;
}

export interface UntilConfig {
  /** Target half-width of every Δ-mean interval, % of the baseline mean. */
  readonly pct: number;
  /** The longest a sweep point keeps adding rounds, ms. */
  readonly maxTimeMs: number;
  /**
   * The stage whose Δ-mean intervals are judged; absent: the table's (one_way, else
   * handoff_to_start). Not a flag: a scenario whose verdicts read another stage sets it
   * (cpu-hog: request_to_start).
   */
  readonly stage?: StageName;
}

/** The label of the A/A copy of `baseline`. */
export function controlLabel(baseline: string): string {
  return `${baseline} (control)`;
}

export interface ResolveInput {
  /** The flags, as the CLI turned them into a layer (values may be the strings typed). */
  flags?: PartialConfig;
  /** The parsed JSON of the config file (see load.ts), not yet validated. */
  file?: unknown;
  /** How messages name the config file, e.g. the path given to --config. */
  fileName?: string;
  /** A scenario's settings: above the defaults, below the file and the flags. */
  preset?: { name: string; config: PartialConfig };
  /** What the command (a scenario, the demo) does not take from the file and the flags. */
  rules?: CommandRulesFor;
  /** Relative paths (strategy files, outDir) resolve against this. */
  cwd: string;
  /** For the default outDir's timestamp. */
  now?: Date;
  /** For the default seed; returns [0, 1). */
  random?: () => number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYYMMDD-HHMMSS` in local time. */
export function runStamp(now: Date): string {
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`;
  return `${date}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
}

/** Fields whose value is an object merged key by key across layers (the rest are replaced whole). */
const NESTED_FIELDS = new Set(['workload', 'irq', 'fastPool', 'topology']);

function mergeLayers(layers: readonly Layer<ParsedPartial>[]): ParsedPartial {
  const merged: Record<string, unknown> = {};
  for (const { data } of layers) {
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue;
      merged[key] = NESTED_FIELDS.has(key) ? { ...(merged[key] as object | undefined), ...(value as object) } : value;
    }
  }
  return merged as ParsedPartial;
}

/**
 * Resolve a run's config: defaults < preset < file < flags. Context: main thread; reads the
 * disk only to check that strategy files exist. Returns a deeply frozen, JSON-plain config;
 * throws a DeferlabError (exit status 2) naming the first problem.
 */
export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const layers: Layer<ParsedPartial>[] = [];
  const addLayer = (source: Source, raw: unknown) => layers.push({ source, raw, data: validateLayer(source, raw) });
  if (input.preset) addLayer({ kind: 'preset', name: input.preset.name }, input.preset.config);
  if (input.file !== undefined) addLayer({ kind: 'file', name: input.fileName ?? 'the config file' }, input.file);
  if (input.flags) addLayer({ kind: 'flags' }, input.flags);
  const origins = new Origins(layers);
  if (input.rules) checkCommandSettings(layers, input.rules);
  const m = mergeLayers(layers);

  // The CPU count first: most other rules are about CPU ids.
  const described = m.topology ?? {};
  const cpusFromTopology = m.cpus === undefined ? describedCpuCount(described) : undefined;
  const cpus = m.cpus ?? cpusFromTopology ?? DEFAULTS.cpus;
  if (input.rules) checkMinCpus(origins, input.rules, cpus, cpusFromTopology !== undefined);
  const cpusText =
    cpusFromTopology !== undefined
      ? `${cpus} CPUs, as the topology describes`
      : origins.describe(['cpus'], String(cpus));

  // The defaults that depend on the CPU count: the machine's own for `cpus`.
  const machine = machineDefaults(cpus);
  const nodes = resolveNodes(origins, m.nodes, described, cpus, cpusText);
  const topology: Topology = {
    smt: described.smt ?? machine.topology.smt,
    cache: described.cache ?? nodes?.cache ?? machine.topology.cache,
    numa: described.numa ?? nodes?.numa ?? machine.topology.numa,
  };
  checkTopology(topology, described, cpus, {
    level: (level) => origins.name(['topology', level]),
    got: (level) => origins.got(['topology', level], undefined) ?? origins.got(['topology'], undefined),
    cpus: cpusText,
    usage: [['cpus'], ['topology']].some((path) => origins.layerOf(path)?.source.kind === 'flags'),
  });
  if (input.rules) checkMinNodeCpus(origins, input.rules, topology.numa[0]?.length ?? cpus, cpus, topology.numa.length);

  const kind = m.workload?.kind ?? DEFAULTS.workload.kind;
  checkWorkloadFields(layers, origins, kind);
  let workload: Workload;
  if (kind === 'tcp_lat') {
    const tcp = { ...DEFAULTS.tcpLat, ...m.workload };
    checkTcpLat(origins, tcp, cpus, cpusText);
    workload = {
      kind,
      msgSize: tcp.msgSize,
      clientCpu: tcp.clientCpu,
      serverCpu: tcp.serverCpu,
      ringBytes: tcp.ringBytes,
      nic: resolveNic(origins, tcp),
      instances: tcp.instances,
      ...(tcp.appCpus !== undefined
        ? { appCpus: checkAppCpus(origins, tcp.appCpus, tcp.instances, cpus, cpusText) }
        : {}),
      ...(tcp.nicIrqCpus !== undefined ? { nicIrqCpus: checkNicIrqCpus(origins, tcp.nicIrqCpus, cpus, cpusText) } : {}),
    };
  } else {
    workload = { kind };
  }

  const irq: IrqConfig = {
    rate: m.irq?.rate ?? DEFAULTS.irq.rate,
    pattern: m.irq?.pattern ?? DEFAULTS.irq.pattern,
    burstSize: m.irq?.burstSize ?? DEFAULTS.irq.burstSize,
    cpus: m.irq?.cpus ?? DEFAULTS.irq.cpus,
  };
  checkIrqCpus(origins, irq.cpus, cpus, cpusText);

  const kernel = m.kernel ?? DEFAULTS.kernel;
  // WQ_BH exists from 6.9 on: the default comparison leaves bh_workqueue out on older kernels,
  // and asking for it there is refused in one line.
  const wqBh = kernelProfile(kernel).wqBh;
  const specTexts = m.strategies ?? DEFAULTS.strategies.filter((t) => wqBh || !t.startsWith('bh_workqueue'));
  if (!wqBh) {
    const bh = specTexts.find((t) => t === 'bh_workqueue' || t.startsWith('bh_workqueue:'));
    if (bh !== undefined)
      throw conflict(
        `${origins.name(['strategies'])} names bh_workqueue, but WQ_BH workqueues exist from Linux 6.9 on and ${origins.name(['kernel'])} is ${kernel}`,
        'use --kernel 6.9, or leave bh_workqueue out',
        origins.layerOf(['strategies'])?.source.kind === 'flags' ||
          origins.layerOf(['kernel'])?.source.kind === 'flags',
      );
  }
  const strategies = resolveStrategies(origins, specTexts, input.cwd);
  const baseline = resolveBaseline(origins, m.baseline ?? DEFAULTS.baseline, strategies, input.cwd, specTexts);

  const sweep = m.sweep ?? null;
  if (sweep) checkSweep(origins, sweep, workload, input.rules?.rules.sweepIsPartial);
  const trace = resolveIrqTrace(origins, m.irq, { cpus, cpusText, cwd: input.cwd, sweep, rules: input.rules });

  const control = m.control ? controlLabel(baseline) : null;
  if (control) {
    // A second instance of the baseline's own spec: the same code path, another label.
    const spec = strategies.find((s) => s.label === baseline)!;
    strategies.push({ ...spec, options: { ...spec.options }, label: control });
  }
  const untilPct = m.until ?? null;
  // A scenario's preset may cap --until that the user turned off (--until off): only a cap the
  // user gave without --until is a contradiction.
  const maxTimeFrom = origins.layerOf(['maxTimeMs'])?.source.kind;
  if (untilPct === null && m.maxTimeMs !== undefined && maxTimeFrom !== 'preset') {
    throw conflict(
      `${origins.name(['maxTimeMs'])} limits how long --until keeps adding rounds, but --until is ${origins.isDefault(['until']) ? 'not given' : 'off'}`,
      `${origins.isDefault(['until']) ? 'add' : 'give'} --until PCT (e.g. --until 3), or drop it`,
      origins.layerOf(['maxTimeMs'])?.source.kind === 'flags',
    );
  }

  if (!m.timeline && m.timelineWindowMs !== undefined) {
    throw conflict(
      `${origins.name(['timelineWindowMs'])} sets how much of each trial the timeline keeps, but --timeline is not given`,
      'add --timeline, or drop it',
      origins.layerOf(['timelineWindowMs'])?.source.kind === 'flags',
    );
  }
  if (m.timeline && m.outDir === null) {
    const noOut = origins.layerOf(['outDir'])?.source.kind === 'flags' ? '--no-output' : origins.name(['outDir']);
    throw conflict(
      `${origins.name(['timeline'])} writes timeline.json into the results directory, but ${noOut} writes no files`,
      'drop one of them',
      origins.layerOf(['timeline'])?.source.kind === 'flags',
    );
  }

  const unboundWorkers = m.unboundWorkers ?? machine.unboundWorkers;
  const random = input.random ?? Math.random;
  const outDir =
    m.outDir === null
      ? null
      : resolvePath(input.cwd, m.outDir ?? `${RESULTS_PARENT_DIR}/${runStamp(input.now ?? new Date())}`);

  return deepFreeze({
    cpus,
    hz: m.hz ?? (kernelProfile(kernel).hz as Hz | undefined) ?? DEFAULTS.hz, // the profile's distro HZ (profiles.ts)
    trialMs: m.trialMs ?? DEFAULTS.trialMs,
    warmupMs: m.warmupMs ?? DEFAULTS.warmupMs,
    sliceMs: m.sliceMs ?? DEFAULTS.sliceMs,
    trials: m.trials ?? DEFAULTS.trials,
    strategies,
    baseline,
    workload,
    irq: { ...irq, cpus: irq.cpus === 'all' ? 'all' : [...irq.cpus], ...(trace ? { trace: { ...trace } } : {}) },
    seed: m.seed ?? Math.floor(random() * 2 ** 32) >>> 0,
    notify: m.notify ?? DEFAULTS.notify,
    topology: {
      smt: topology.smt.map((g) => [...g]),
      cache: topology.cache.map((g) => [...g]),
      numa: topology.numa.map((g) => [...g]),
    },
    fastPool: {
      trigger: m.fastPool?.trigger ?? DEFAULTS.fastPool.trigger,
      variant: m.fastPool?.variant ?? DEFAULTS.fastPool.variant,
    },
    unboundWorkers,
    lockSpins: m.lockSpins ?? DEFAULTS.lockSpins,
    idle: m.idle ?? DEFAULTS.idle,
    kthreads: m.kthreads ?? DEFAULTS.kthreads,
    hogs: m.hogs ?? DEFAULTS.hogs,
    softirqDefer: m.softirqDefer ? m.softirqDefer === 'on' : null,
    kernel,
    watchdogMs: m.watchdogMs ?? defaultWatchdogMs(cpus),
    tracing: m.tracing ?? DEFAULTS.tracing,
    hostStalls: m.hostStalls ?? DEFAULTS.hostStalls,
    hostSteal: m.hostSteal ?? DEFAULTS.hostSteal,
    outDir,
    sweep: sweep ? { param: sweep.param, values: [...sweep.values] } : null,
    control,
    until: untilPct === null ? null : { pct: untilPct, maxTimeMs: m.maxTimeMs ?? DEFAULTS.maxTimeMs },
    wide: m.wide ?? DEFAULTS.wide,
    threshold: m.threshold ?? DEFAULT_THRESHOLD_PCT,
    timeline: m.timeline ? { windowMs: m.timelineWindowMs ?? DEFAULTS.timelineWindowMs } : null,
    tdf: m.tdf ?? DEFAULTS.tdf,
    switchCost: m.switchCost ?? DEFAULTS.switchCost,
    ...(m.explain ? { explain: true } : {}),
    kthreadCharge: m.kthreadCharge ?? DEFAULT_KTHREAD_CHARGE,
    hostHelpers: m.hostHelpers ?? DEFAULTS.hostHelpers,
  } satisfies ResolvedConfig);
}
