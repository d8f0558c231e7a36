/**
 * What a workload is to the machine: the shared regions it needs, their initialisation, the
 * tasks it puts on CPUs, what it attaches to each thread's kernel (softirq actions, hosted
 * tasks), how the drain tells that none of its messages is in flight, and a one-line
 * description. The machine knows workloads only through this interface and the registry
 * (src/workloads/index.ts): a new workload is one file and one registry line.
 */
import type { Phase } from '../machine/layout.js';
import type { AppTaskSpec } from '../machine/options.js';
import type { Runtime } from '../machine/runtime.js';
import type { HostedTask } from '../machine/tasks.js';
import type { Nic } from '../net/nic.js';

/** What a workload adds to one thread's kernel. */
export interface WorkloadAttachment {
  /** The NIC model the runtime takes interrupts from (src/net/nic.ts), if the workload has one. */
  nic?: Nic;
  /** The NET_RX softirq action on the runtime's current CPU. */
  netRx?(rt: Runtime): void;
  /** The NET_TX softirq action. */
  netTx?(rt: Runtime): void;
  /** The phase changed; called on each CPU thread when it notices. */
  onPhase?(rt: Runtime, phase: Phase): void;
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
  attach(rt: Runtime): WorkloadAttachment;
  /**
   * What of it is still in flight ('' when nothing), read by the drain (Machine.busy) after the
   * generators have stopped and before the machine's queues: see docs/architecture.md, "drain".
   * Context: main thread; racy loads (Atomics).
   */
  busy(i32: Int32Array, regions: Record<string, number>): string;
}
