/**
 * What a workload is to the machine: the shared regions it needs, their initialisation, the
 * tasks it puts on CPUs, what it attaches to each thread's kernel (softirq actions, hosted
 * tasks), how the drain tells that none of its messages is in flight, and a one-line
 * description. The machine knows workloads only through this interface and the registry
 * (src/workloads/index.ts): a new workload is one file and one registry line.
 */

import type { IrqWork, Kernel } from '../api/types.js';
import type { MachinePlan } from '../hw/board.js';
import type { IrqChip } from '../hw/irqchip.js';
import type { MachineRegions, Phase } from '../hw/layout.js';
import type { Tracer } from '../hw/trace.js';
import type { Softirqs } from '../kernel/softirq.js';
import type { HostedTask, TaskHost } from '../kernel/task.js';
import type { Nic } from '../net/nic.js';
import type { RandomDriver } from '../random/driver.js';

/** A task the workload puts on a CPU, hosted on that CPU's thread. */
export type AppTaskSpec =
  | { kind: 'tcp_client'; cpu: number; peerCpu: number; instance: number; allowed?: number[]; rxCpu?: number }
  | { kind: 'tcp_server'; cpu: number; peerCpu: number; instance: number; allowed?: number[]; rxCpu?: number }
  | { kind: 'hog'; cpu: number; policy: 'normal' | 'fifo' | 'rr'; nice: number; rtPrio: number }
  | { kind: 'spinner'; cpu: number; nice: number }
  | { kind: 'producer'; cpu: number };

/**
 * What a workload sees of one thread's emulated CPU: the narrow host its tasks and softirq
 * actions run on (the machine's Runtime, src/machine/runtime.ts, implements it).
 */
export interface CpuHost extends TaskHost {
  readonly R: MachineRegions;
  readonly plan: MachinePlan<AppTaskSpec>;
  readonly softirqs: Softirqs;
  readonly chip: IrqChip;
  readonly driver: RandomDriver;
  /** The kernel as strategies see it (src/api/types.ts). */
  readonly facade: Kernel;
  readonly tracer: Tracer;
  /** The CPU this thread runs on now (-1: none). */
  readonly cpu: number;
  /** The phase this thread last acted on. */
  readonly phase: Phase;
  now(): number;
  /** Inside softirq processing: take hard interrupts, nothing else. */
  pollIrq(): void;
  /** Enter a generation step (true: generate, then genExit()); see C_GEN_INFLIGHT. */
  genEnter(): boolean;
  genExit(): void;
  globalCount(counter: number, n?: number): void;
  /** An irq_work owned by the workload (created in every thread in the same order). */
  createWorkloadIrqWork(name: string, fn: (k: Kernel) => void): IrqWork;
}

/** What a workload adds to one thread's kernel. */
export interface WorkloadAttachment {
  /** The NIC model the runtime takes interrupts from (src/net/nic.ts), if the workload has one. */
  nic?: Nic;
  /** The NET_RX softirq action on the runtime's current CPU. */
  netRx?(rt: CpuHost): void;
  /** The NET_TX softirq action. */
  netTx?(rt: CpuHost): void;
  /** The phase changed; called on each CPU thread when it notices. */
  onPhase?(rt: CpuHost, phase: Phase): void;
  /** The hosted task for task id `id`, if it is one of the workload's. */
  task(id: number): HostedTask | undefined;
}

export interface Workload {
  /** The registry key (WorkloadOptions['kind']). */
  readonly kind: string;
  /** One line for setup lines and reports. */
  describe(): string;
  /** Named shared regions it needs (name → Int32 words), reserved by the machine's planner. */
  regions(): Record<string, number>;
  /** Initialise its regions. Context: main thread, before any worker starts. */
  init(i32: Int32Array, regions: Record<string, number>, words: (base: number) => number | undefined): void;
  /** The tasks it puts on CPUs (hosted on their CPU's thread, hogs on their own). */
  tasks(): AppTaskSpec[];
  /** Attach to one thread's runtime. Context: thread start-up, after the strategies' setup(). */
  attach(rt: CpuHost): WorkloadAttachment;
  /**
   * What of it is still in flight ('' when nothing), read by the drain (Machine.busy) after the
   * generators have stopped and before the machine's queues: see docs/architecture.md, "drain".
   * Context: main thread; racy loads (Atomics).
   */
  busy(i32: Int32Array, regions: Record<string, number>): string;
}
