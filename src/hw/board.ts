/**
 * The board: who runs where in a machine, as plain JSON computed once by the main thread
 * (src/machine/plan.ts) and posted to every worker. Task, thread and pool ids are described
 * there; the pool numbering is the workqueue's (src/kernel/workqueue.ts).
 */
import type { SchedPolicy } from './layout.js';

/** The levels of a machine's CPU topology, innermost first. */
export const TOPOLOGY_LEVELS = ['smt', 'cache', 'numa'] as const;
export type TopologyLevel = (typeof TOPOLOGY_LEVELS)[number];
/** Groups of CPU ids. */
export type CpuGroups = readonly (readonly number[])[];
/**
 * Which CPUs share a core (SMT siblings), a last-level cache, a NUMA node: read by the unbound
 * workqueue's affinity scopes (src/kernel/workqueue.ts) and set by `--topology`.
 */
export type Topology = { readonly [L in TopologyLevel]: CpuGroups };

/** One core per CPU, one cache and one node for all. */
export function defaultTopology(cpus: number): Topology {
  const all = Array.from({ length: cpus }, (_, i) => i);
  return { smt: all.map((c) => [c]), cache: [all], numa: [all] };
}

/** What the board needs of a workload's task description (the workload's AppTaskSpec has more). */
export interface TaskApp {
  readonly kind: string;
  readonly cpu: number;
  /** The CPUs the task may run on when the scheduler places it at wakeup (`--app-cpus`); absent: bound. */
  readonly allowed?: readonly number[];
}

export type TaskKind = 'idle' | 'app' | 'kworker' | 'ksoftirqd' | 'unbound';

export interface TaskPlan<A extends TaskApp = TaskApp> {
  id: number;
  name: string;
  kind: TaskKind;
  /** Home CPU (bound tasks); the first CPU for unbound workers. */
  cpu: number;
  bound: boolean;
  thread: number;
  policy: SchedPolicy;
  nice: number;
  rtPrio: number;
  /** Pool served (workers), else -1. */
  pool: number;
  /** Index of the worker in its pool (bit in the pool's idle mask). */
  poolSlot: number;
  /** The workload's description of an application task (src/workloads/workload.ts, AppTaskSpec). */
  app?: A;
  /** Woken by its CPU's thread when a measuring phase starts (load generators). */
  startsOnPhase: boolean;
  /** Placed at each wakeup within these CPUs (src/kernel/sched/select.ts); `cpu` is where it starts. */
  allowed?: number[];
}

export interface ThreadPlan {
  id: number;
  name: string;
  kind: 'cpu' | 'kthread' | 'irq';
  cpu: number;
  tasks: number[];
}

export interface PoolPlan {
  id: number;
  kind: 'bound' | 'unbound' | 'bh';
  cpu: number;
  highpri: boolean;
  workers: number[];
}

export interface MachinePlan<A extends TaskApp = TaskApp> {
  cpus: number;
  tasks: TaskPlan<A>[];
  threads: ThreadPlan[];
  pools: PoolPlan[];
  irqThread: number;
  /** Per CPU: task ids of kworker/c:0, kworker/c:0H, ksoftirqd/c. */
  kworker: number[];
  kworkerHi: number[];
  ksoftirqd: number[];
  unboundPool: number;
}
