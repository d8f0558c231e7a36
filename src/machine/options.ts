/**
 * What the machine needs to know to boot: the emulated hardware and what runs on it.
 * The harness maps the user's resolved configuration onto this; tests build it directly.
 */
import type { NotifyPolicy } from '../shm/doorbell.js';

export interface StrategyRef {
  label: string;
  name: string;
  kind: 'builtin' | 'file';
  /** file:// URL of a user's strategy module (kind 'file'). */
  url?: string;
  /** Named export to use; default: the default export, else the only exported class. */
  exportName?: string;
  options: Record<string, string | number | boolean>;
}

export interface Topology {
  smt: number[][];
  cache: number[][];
  numa: number[][];
}

export interface IrqOptions {
  /** Device interrupts per second per target CPU (0: none). */
  rate: number;
  pattern: 'constant' | 'poisson' | 'bursts';
  burstSize: number;
  cpus: number[];
}

/** A task the workload puts on a CPU, hosted on that CPU's thread. */
export type AppTaskSpec =
  | { kind: 'tcp_client'; cpu: number; peerCpu: number }
  | { kind: 'tcp_server'; cpu: number; peerCpu: number }
  | { kind: 'hog'; cpu: number; policy: 'normal' | 'fifo' | 'rr'; nice: number; rtPrio: number }
  | { kind: 'spinner'; cpu: number; nice: number };

export type WorkloadOptions =
  | { kind: 'tcp_lat'; msgSize: number; clientCpu: number; serverCpu: number; ringBytes: number }
  | { kind: 'irq_only' }
  | { kind: 'custom'; tasks: AppTaskSpec[] };

export interface MachineOptions {
  cpus: number;
  hz: number;
  notify: NotifyPolicy;
  topology: Topology;
  unboundWorkers: number;
  lockSpins: number;
  /** Spin this long (ns) re-checking before an idle CPU sleeps (0: sleep at once). */
  idleSpinNs: number;
  fastPool: { trigger: number; variant: '64' | '32' };
  tracing: boolean;
  watchdogMs: number;
  seed: number;
  irq: IrqOptions;
  workload: WorkloadOptions;
  strategies: StrategyRef[];
}

export function defaultTopology(cpus: number): Topology {
  const all = Array.from({ length: cpus }, (_, i) => i);
  return { smt: all.map((c) => [c]), cache: [all], numa: [all] };
}
