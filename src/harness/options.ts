/** From the user's resolved configuration to what the machine boots with. */
import { autoIdle } from '../config/defaults.js';
import { controlLabel, type ResolvedConfig } from '../config/schema.js';
import { strategyRef } from '../config/strategy-spec.js';
import { timelineRecordsFor } from '../hw/timeline.js';
import { DEFAULT_IDLE, type MachineOptions, type StrategyRef } from '../machine/options.js';
import { sliceCount } from './round.js';
import { resolveSwitchCost } from './switch-cost.js';
import { resolveTdf } from './tdf.js';

export interface PointParams {
  msg_size?: number;
  irq_rate?: number;
  trigger?: number;
}

/** The run's strategies, in order, as the machine threads load them. */
export function strategyRefs(config: Pick<ResolvedConfig, 'strategies'>): StrategyRef[] {
  return config.strategies.map((s) => strategyRef(s));
}

/** The machine options for one sweep point (`params` overrides the swept setting). */
export function machineOptions(config: ResolvedConfig, params: PointParams = {}): MachineOptions {
  const w = config.workload;
  const cpus = config.cpus;
  const irqCpus = config.irq.cpus === 'all' ? Array.from({ length: cpus }, (_, i) => i) : [...config.irq.cpus];
  return {
    cpus,
    hz: config.hz,
    notify: config.notify,
    topology: {
      smt: config.topology.smt.map((g) => [...g]),
      cache: config.topology.cache.map((g) => [...g]),
      numa: config.topology.numa.map((g) => [...g]),
    },
    unboundWorkers: config.unboundWorkers,
    lockSpins: config.lockSpins,
    idle: {
      ...DEFAULT_IDLE,
      policy: config.idle === 'auto' ? autoIdle(cpus) : config.idle,
    },
    kthreads: config.kthreads,
    hogs: config.hogs,
    kernel: config.kernel,
    // --softirq-defer only when given (absent: the kernel profile's rule, src/machine/runtime.ts).
    ...(config.softirqDefer !== null ? { softirqDefer: config.softirqDefer } : {}),
    fastPool: { trigger: params.trigger ?? config.fastPool.trigger, variant: config.fastPool.variant },
    tracing: config.tracing,
    hostStalls: { mode: config.hostStalls, steal: config.hostSteal },
    kthreadCharge: config.kthreadCharge,
    hostHelpers: config.hostHelpers,
    // Rings for --timeline's window and --explain's slice (emulated ms: N host ms each at TDF N).
    ...(config.timeline || config.explain ? { timelineRecords: ringRecords(config) } : {}),
    watchdogMs: config.watchdogMs,
    seed: config.seed,
    irq: {
      rate: params.irq_rate ?? config.irq.rate,
      pattern: config.irq.pattern,
      burstSize: config.irq.burstSize,
      cpus: irqCpus,
    },
    workload:
      w.kind === 'tcp_lat'
        ? {
            kind: 'tcp_lat',
            msgSize: params.msg_size ?? w.msgSize,
            clientCpu: w.clientCpu,
            serverCpu: w.serverCpu,
            ringBytes: w.ringBytes,
            nic: w.nic,
            instances: w.instances,
            ...(w.appCpus ? { appCpus: [...w.appCpus] } : {}),
            ...(w.nicIrqCpus ? { nicIrqCpus: [...w.nicIrqCpus] } : {}),
          }
        : { kind: 'irq_only' },
    strategies: strategyRefs(config),
    // Time dilation: `auto` was measured once before the run (resolveTdf remembers it).
    ...(config.tdf !== undefined && config.tdf !== 1 ? { tdf: resolveTdf(config.tdf).tdf } : {}),
    // The switch model: `host` was measured once before the run (resolveSwitchCost remembers it).
    ...switchFloor(config),
  };
}

/** The sweep points of a run: one with no parameters when there is no sweep. */
export function sweepPoints(config: ResolvedConfig): PointParams[] {
  if (!config.sweep) return [{}];
  return config.sweep.values.map((v) => ({ [config.sweep!.param]: v }));
}

/**
 * The config a run executes, as to the A/A control: with `control` set, exactly one copy of the
 * baseline's spec, labelled {@link controlLabel} of the baseline, last among the strategies.
 * resolveConfig already makes it so; a scenario that replaces the strategies and the baseline of
 * the user's config (`{ ...config, strategies, baseline }`) gets the control of its own baseline
 * here. Without the baseline among the strategies there is no control. Context: main thread; pure.
 */
export function withControl(config: ResolvedConfig): ResolvedConfig {
  if (!config.control) return config;
  const label = controlLabel(config.baseline);
  const others = config.strategies.filter((s) => s.label !== config.control && s.label !== label);
  const base = others.find((s) => s.label === config.baseline);
  if (!base) return { ...config, strategies: others, control: null };
  return { ...config, strategies: [...others, { ...base, options: { ...base.options }, label }], control: label };
}

/**
 * Records per timeline ring: --timeline's window, and with `--explain` at least one slice (the
 * collector reads the rings after every slice, src/report/explain/collect.ts); both are emulated
 * ms, so a ring holds TDF times as many host ms of records.
 */
export function ringRecords(config: ResolvedConfig): number {
  const tdf = config.tdf === undefined ? 1 : resolveTdf(config.tdf).tdf;
  const sliceMs = config.explain ? config.trialMs / sliceCount(config.trialMs, config.sliceMs) : 0;
  return timelineRecordsFor(Math.max(sliceMs, config.timeline?.windowMs ?? 0) * tdf);
}

/** MachineOptions' switchFloorNs from the config's `switchCost` (absent when there is no charge). */
function switchFloor(config: ResolvedConfig): { switchFloorNs?: number } {
  const ns = resolveSwitchCost(config.switchCost ?? 'off').ns;
  return ns > 0 ? { switchFloorNs: ns } : {};
}
