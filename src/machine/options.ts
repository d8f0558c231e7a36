/**
 * What the machine needs to know to boot: the emulated hardware and what runs on it.
 * The harness maps the user's resolved configuration onto this; tests build it directly.
 */

import type { IrqTracePlan } from '../irq/trace-file.js';
import { type KernelName, kernelProfile } from '../kernel/profiles.js';
import type { FairPolicyName } from '../kernel/sched/fair.js';
import type { NicOptions } from '../net/profiles.js';
import type { NotifyPolicy } from '../shm/doorbell.js';
import { HALTPOLL_MAX_NS, type IdlePolicyName } from './idle.js';

/** cpuidle for the emulated CPUs: the policy, and haltpoll's guest_halt_poll_ns. */
export interface IdleOptions {
  policy: IdlePolicyName;
  maxPollNs: number;
}

/**
 * Bound kthreads as threads of their own (a futex wake per switch into one) or on their CPU's
 * thread. The default is `cpu`: a switch into a kworker or ksoftirqd then costs a same-thread
 * switch (below a kernel's context switch) rather than a host futex wake (several times one),
 * and a woken kthread needs no host core of its own, which under `--idle poll` on a host with a
 * core per emulated CPU it would wait milliseconds for (docs/architecture.md, "Idle").
 */
export type KthreadHosting = 'thread' | 'cpu';
export const KTHREAD_HOSTINGS: readonly KthreadHosting[] = ['thread', 'cpu'];
export const DEFAULT_KTHREADS: KthreadHosting = 'cpu';

/** The default idle policy (see docs/architecture.md, "Idle", for the measurement behind it). */
export const DEFAULT_IDLE: IdleOptions = { policy: 'haltpoll', maxPollNs: HALTPOLL_MAX_NS };

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
  | { kind: 'tcp_client'; cpu: number; peerCpu: number; instance: number }
  | { kind: 'tcp_server'; cpu: number; peerCpu: number; instance: number }
  | { kind: 'hog'; cpu: number; policy: 'normal' | 'fifo' | 'rr'; nice: number; rtPrio: number }
  | { kind: 'spinner'; cpu: number; nice: number }
  | { kind: 'producer'; cpu: number };

export type WorkloadOptions =
  | TcpLatOptions
  | { kind: 'irq_only' }
  | { kind: 'custom'; tasks: AppTaskSpec[] }
  | CrossCpuOptions;

/**
 * qperf's tcp_lat over the network path (src/net/): `instances` client/server pairs, pair i's
 * client on CPU (clientCpu + i) mod cpus and its server on (serverCpu + i) mod cpus.
 */
export interface TcpLatOptions {
  kind: 'tcp_lat';
  msgSize: number;
  clientCpu: number;
  serverCpu: number;
  /** Each direction's packet ring (the NIC's RX ring and the socket's receive queue), bytes; at least one message's packets. */
  ringBytes: number;
  nic: NicOptions;
  instances: number;
}

/**
 * Seed 002: producers on some CPUs queue items for consumers on others through cross-CPU rings;
 * a consumer drains its ring in NET_TX softirq with a budget. `policy` decides when a producer
 * raises an IPI (irq_work_queue_on): 'always' after every item, or 'if-idle' (Tempesta's fix)
 * only while the consumer has announced it is not draining.
 */
export interface CrossCpuOptions {
  kind: 'cross_cpu';
  producers: number[];
  consumers: number[];
  policy: 'always' | 'if-idle';
  /** Busy work a producer does per item (ns): sets the offered load. */
  produceNs: number;
  /** Busy work a consumer does per item (ns). */
  consumeNs: number;
  /** Items a consumer drains per NET_TX run before it re-raises (the budget). */
  budget: number;
}

/** The deferred job a hand-off carries: random.c's mix (default), or a driver's work item (seed 004). */
export type PayloadOptions =
  | { kind: 'random_mix' }
  /**
   * Each device interrupt hands off one work item (unless one is pending) that busies the CPU for
   * `workNs`. Every request's wait until its work starts is timed (`request_to_start`); those
   * longer than `slowNs` (default 1 ms) are counted as `requests_slow`.
   */
  | { kind: 'driver_work'; workNs: number; slowNs?: number };

export interface MachineOptions {
  cpus: number;
  hz: number;
  notify: NotifyPolicy;
  topology: Topology;
  unboundWorkers: number;
  lockSpins: number;
  /** How an idle CPU waits (src/machine/idle.ts); default DEFAULT_IDLE. */
  idle?: IdleOptions;
  /** The kernel profile (src/kernel/profiles.ts): scheduler, softirq rules, what exists. Default 6.9. */
  kernel?: KernelName;
  /** Where bound kthreads (kworker/n, ksoftirqd/n) run: their own threads, or their CPU's thread. */
  kthreads?: KthreadHosting;
  /** The fair class's policy (src/kernel/sched/fair.ts); default: the kernel profile's (fairPolicyOf). */
  sched?: FairPolicyName;
  fastPool: { trigger: number; variant: '64' | '32' };
  tracing: boolean;
  /** `--timeline`: records per thread of the timeline rings (src/machine/timeline.ts); absent or 0: off. */
  timelineRecords?: number;
  watchdogMs: number;
  seed: number;
  irq: IrqOptions;
  workload: WorkloadOptions;
  /** What a hand-off defers; default random.c's mix. */
  payload?: PayloadOptions;
  strategies: StrategyRef[];
  /**
   * Device-interrupt arrivals replayed from a recorded trace (`--irq-trace`, src/irq/replay.ts)
   * instead of generated at `irq.rate`; its arrays on a SharedArrayBuffer (shareIrqTrace), so
   * every thread shares one copy. Offset 0 is the start of each trial's warm-up.
   */
  irqTrace?: IrqTracePlan;
}

export function defaultTopology(cpus: number): Topology {
  const all = Array.from({ length: cpus }, (_, i) => i);
  return { smt: all.map((c) => [c]), cache: [all], numa: [all] };
}

/** The fair-class policy a machine runs: `sched` when given (tests), else its kernel profile's. */
export function fairPolicyOf(o: Pick<MachineOptions, 'sched' | 'kernel'>): FairPolicyName {
  return o.sched ?? kernelProfile(o.kernel).sched;
}
