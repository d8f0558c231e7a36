/** From the user's resolved configuration to what the machine boots with. */
import type { ResolvedConfig } from '../config/schema.js';
import type { MachineOptions, StrategyRef } from '../machine/options.js';
import { strategyRef } from '../strategies/ref.js';

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
    idleSpinNs: config.idleSpinNs,
    fastPool: { trigger: params.trigger ?? config.fastPool.trigger, variant: config.fastPool.variant },
    tracing: config.tracing,
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
          }
        : { kind: 'irq_only' },
    strategies: strategyRefs(config),
  };
}

/** The sweep points of a run: one with no parameters when there is no sweep. */
export function sweepPoints(config: ResolvedConfig): PointParams[] {
  if (!config.sweep) return [{}];
  return config.sweep.values.map((v) => ({ [config.sweep!.param]: v }));
}
