/**
 * A task hosted on a thread, and what it sees of its thread's CPU. Every thread that can own a
 * CPU hosts one or more tasks (src/machine/tasks.ts, runThreadLoop); the machine's Runtime
 * (src/machine/runtime.ts) is the host. Kernel threads (kworkers, ksoftirqd) live beside their
 * mechanism; workloads extend the host with what they need (src/workloads/workload.ts, CpuHost).
 */
import type { CpuContext } from './context.js';
import type { Scheduler } from './sched/core.js';

export interface HostedTask {
  readonly id: number;
  /** Run as owner until the task sleeps, is preempted or the machine stops. */
  run(): void;
  /** Wake this task when a measuring phase starts (workload tasks that generate load). */
  readonly startsOnPhase?: boolean;
}

/** What a hosted task sees of its thread's emulated CPU. */
export interface TaskHost {
  readonly i32: Int32Array;
  readonly ctx: CpuContext;
  readonly sched: Scheduler;
  /** The task running on this thread now (-1: none). */
  readonly task: number;
  /** A preemption point: true while the caller still owns the CPU as the same task. */
  poll(): boolean;
  /** The machine is stopping: every task returns. */
  isStopping(): boolean;
  /** Add to a per-CPU counter of the current CPU. */
  count(counter: number, n?: number): void;
}
