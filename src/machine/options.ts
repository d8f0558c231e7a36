/**
 * What the machine needs to know to boot: the emulated hardware and what runs on it.
 * The harness maps the user's resolved configuration onto this; tests build it directly.
 */

import type { Topology } from '../hw/board.js';
import type { IrqTracePlan } from '../irq/trace-file.js';
import { type KernelName, kernelProfile } from '../kernel/profiles.js';
import type { FairPolicyName } from '../kernel/sched/fair.js';
import type { KthreadCharge } from '../kernel/sched/rq.js';
import type { PayloadOptions } from '../random/driver.js';
import type { FastPoolVariant } from '../random/fastpool.js';
import type { NotifyPolicy } from '../shm/doorbell.js';
import type { StrategyRef } from '../strategies/ref.js';
import type { WorkloadOptions } from '../workloads/index.js';
import { HALTPOLL_MAX_NS, type IdlePolicyName } from './cpuidle.js';
import type { HostStallOptions } from './host-stall.js';
import type { HostHelperMode } from './host-threads.js';

export { defaultTopology, type Topology } from '../hw/board.js';
// Each part's options live with their owner; re-exported here for the harness and the tests.
export type { PayloadOptions } from '../random/driver.js';
export type { StrategyRef } from '../strategies/ref.js';
export type { CrossCpuOptions } from '../workloads/cross-cpu.js';
export type { WorkloadOptions } from '../workloads/index.js';
export type { TcpLatOptions } from '../workloads/tcp-lat.js';
export type { AppTaskSpec } from '../workloads/workload.js';

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
export const KTHREAD_HOSTINGS = ['thread', 'cpu'] as const;
export type KthreadHosting = (typeof KTHREAD_HOSTINGS)[number];
export const DEFAULT_KTHREADS: KthreadHosting = 'cpu';

/**
 * Hogs and spinners (`stress --cpu`, the cpu-hog scenario's and bench:twin's) as threads of their
 * own or on their CPU's thread. `thread` makes taking the CPU from a hog or losing it to one a
 * host hand-off (a futex wake: 5-70 µs on this VM, where the kernel's switch costs ~2 µs); `cpu`,
 * the default since 2026-12-03, makes it a same-thread switch (~0.6 µs), as `--kthreads cpu` does
 * for kthreads. Why the default moved: bench:twin's waker beside one nice-0 hog, on the host's
 * kernel p50 22 µs, took the lab 200 µs with hogs on threads and 30 µs on the CPU thread (p99 64
 * µs on the host; 1.42 ms and 102 µs): the hand-off, not a scheduler rule, made the difference
 * (docs/twin.md). A conclusion that holds under both does not rest on the host's wake-up cost.
 */
export const HOG_HOSTINGS = ['thread', 'cpu'] as const;
export type HogHosting = (typeof HOG_HOSTINGS)[number];
export const DEFAULT_HOGS: HogHosting = 'cpu';

/** The default idle policy (see docs/architecture.md, "Idle", for the measurement behind it). */
export const DEFAULT_IDLE: IdleOptions = { policy: 'haltpoll', maxPollNs: HALTPOLL_MAX_NS };

export interface IrqOptions {
  /** Device interrupts per second per target CPU (0: none). */
  rate: number;
  pattern: 'constant' | 'poisson' | 'bursts';
  burstSize: number;
  cpus: number[];
}

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
  /** ksoftirqd_running() defers softirqs (src/kernel/softirq.ts); default: the kernel profile's rule. */
  softirqDefer?: boolean;
  /** Where bound kthreads (kworker/n, ksoftirqd/n) run: their own threads, or their CPU's thread. */
  kthreads?: KthreadHosting;
  /** Where hogs and spinners run: their own threads (the default) or their CPU's thread (HOG_HOSTINGS). */
  hogs?: HogHosting;
  /**
   * `--host-helpers`: `nice` lowers the process's threads that are not the machine's (V8's
   * helpers, libuv's pool) to nice 10 once the machine's threads are up (host-threads.ts,
   * niceHostHelpers); absent or `leave`: untouched (the API's and the tests' default).
   */
  hostHelpers?: HostHelperMode;
  /** How kthreads are charged (`--kthread-charge`, src/kernel/sched/rq.ts); default DEFAULT_KTHREAD_CHARGE (work). */
  kthreadCharge?: KthreadCharge;
  /** The fair class's policy (src/kernel/sched/fair.ts); default: the kernel profile's (fairPolicyOf). */
  sched?: FairPolicyName;
  fastPool: { trigger: number; variant: FastPoolVariant };
  tracing: boolean;
  /** `--timeline`: records per thread of the timeline rings (src/hw/timeline.ts); absent or 0: off. */
  timelineRecords?: number;
  /** Host stalls and GC: detection threshold, `--host-stalls` mode, steal charge (src/machine/host-stall.ts). */
  hostStalls?: HostStallOptions;
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
  /**
   * Time dilation factor (`--tdf`, src/harness/tdf.ts): every thread's clock runs at host ns /
   * tdf (src/clock.ts). Absent: 1, no dilation.
   */
  tdf?: number;
  /**
   * `--switch-cost`: the least a context switch lasts, emulated ns, from the outgoing side's
   * schedule() to the incoming task running (a model: src/harness/switch-cost.ts chooses it,
   * src/machine/switch-floor.ts charges it). Absent or 0: the lab's own switch.
   */
  switchFloorNs?: number;
}

/** The fair-class policy a machine runs: `sched` when given (tests), else its kernel profile's. */
export function fairPolicyOf(o: Pick<MachineOptions, 'sched' | 'kernel'>): FairPolicyName {
  return o.sched ?? kernelProfile(o.kernel).sched;
}
