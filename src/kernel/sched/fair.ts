/**
 * The fair class's common ground (kernel/sched/fair.c and core.c): the nice-to-weight table,
 * calc_delta_fair, the tunables' CPU scaling, and the FairPolicy interface that the run queues
 * (rq.ts) call for the policy-specific parts of SCHED_NORMAL: EEVDF (eevdf.ts, 6.6+) or CFS
 * (cfs.ts, 5.15), chosen when the run queues are built (MachineOptions.sched). RqView is what a policy may read and write of a CPU's queue and its tasks.
 *
 * Context: whichever thread calls, under the CPU's rq lock unless said otherwise; never allocates.
 */
import { CPU_F64, SchedPolicy } from '../../hw/layout.js';
import {
  RQ_CURR,
  RQ_LEN,
  RQ_QUEUE,
  RQ_WORDS,
  T_POLICY,
  T_WEIGHT,
  TASK_F64,
  TASK_WORDS,
  TF_VRUNTIME,
} from './layout.js';

/** sched_prio_to_weight[], nice -20 .. 19 (kernel/sched/core.c). */
export const NICE_TO_WEIGHT = [
  88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991,
  1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];
/** NICE_0_LOAD (scale_load_down'd: the lab has no load resolution shift). */
export const NICE_0_WEIGHT = 1024;
export function niceToWeight(nice: number): number {
  return NICE_TO_WEIGHT[Math.max(-20, Math.min(19, nice)) + 20];
}

/**
 * calc_delta_fair(delta, se) (fair.c): `delta` ns of wall time in the virtual time of an entity of
 * weight `w`, delta · NICE_0_LOAD / w. The kernel's __calc_delta uses a 32-bit inverse weight and
 * truncates; here it is a double.
 */
export function calcDeltaFair(delta: number, w: number): number {
  return w === NICE_0_WEIGHT ? delta : (delta * NICE_0_WEIGHT) / w;
}

/**
 * get_update_sysctl_factor() (fair.c), SCHED_TUNABLESCALING_LOG (the default):
 * 1 + ilog2(min(num_online_cpus(), 8)); update_sysctl() multiplies the normalized tunables by it
 * (5.15: sched_latency, sched_min_granularity, sched_wakeup_granularity; 6.6+: sched_base_slice).
 */
export function sysctlFactor(cpus: number): number {
  return 1 + Math.floor(Math.log2(Math.max(1, Math.min(cpus, 8))));
}

/** TICK_NSEC (include/linux/jiffies.h): (NSEC_PER_SEC + HZ/2) / HZ, in integer arithmetic. */
export function tickNsec(hz: number): number {
  return Math.floor((1_000_000_000 + Math.floor(hz / 2)) / hz);
}

/**
 * The fair-class policies a machine can run (MachineOptions.sched): EEVDF as in 6.6–6.11
 * (`eevdf`), EEVDF as in 6.18 with delayed dequeue and slice protection (`eevdf-6.18`), CFS as in
 * 5.15 (`cfs`).
 */
export type FairPolicyName = 'eevdf' | 'eevdf-6.18' | 'cfs';
export const FAIR_POLICIES: readonly FairPolicyName[] = ['eevdf', 'eevdf-6.18', 'cfs'];

/** What a policy's constants depend on: the emulated machine's CPUs and HZ. */
export interface FairParams {
  cpus: number;
  hz: number;
}

/**
 * The policy-specific parts of the fair class. The run queues own queue membership, the RT
 * classes, RT throttling and the wall-clock accounting (exec_start, sum_exec_runtime); they call
 * these for normal (SCHED_NORMAL) tasks only, under `cpu`'s rq lock.
 */
export interface FairPolicy {
  readonly name: FairPolicyName;
  /** A CPU's run queue was just (re)initialised (its words are 0). Context: main thread. */
  initCpu(cpu: number): void;
  /** place_entity(): `task` is about to join `cpu`'s queue (not yet in it); `initial` on its
   *  first enqueue (wake_up_new_task: the lab's tasks are all born at boot). */
  place(cpu: number, task: number, initial: boolean): void;
  /** dequeue_entity()'s bookkeeping: `task` goes to sleep and leaves `cpu`'s queue (still in it). */
  dequeue(cpu: number, task: number): void;
  /** A sleeping task on no queue moves from CPU `from` to another (under `from`'s rq lock;
   *  migrate_task_rq_fair). */
  migrate(task: number, from: number): void;
  /** update_curr()'s per-policy part: the running `task` ran `delta` ns more. True when the
   *  policy wants the CPU rescheduled (EEVDF: the task passed its deadline). */
  charge(cpu: number, task: number, delta: number): boolean;
  /** set_next_entity(): `task` was picked and is about to run (a switch: it was not running). */
  setNext(cpu: number, task: number): void;
  /** pick_next_entity(): the normal task to run next among those queued on `cpu`, or -1. */
  pick(cpu: number): number;
  /** check_preempt_wakeup(): should `woken`, just enqueued, preempt the running `curr`? (both normal) */
  wakeupPreempt(cpu: number, curr: number, woken: number): boolean;
  /**
   * The wake-up's update_curr() in enqueue_entity() (the one that can act: check_preempt_wakeup_fair's
   * finds delta_exec 0): does it reschedule the running normal `curr`, whoever the pick then
   * chooses? `expired` is what charge() returned for the wake-up's charge, `queuedBefore` the
   * CPU's tasks before the woken one was queued. CFS: never (its update_curr() has no resched).
   */
  wakeResched(cpu: number, curr: number, expired: boolean, queuedBefore: number): boolean;
  /** The tick's check on the running normal `curr`, after it was charged (CFS check_preempt_tick). */
  tickPreempt(cpu: number, curr: number): boolean;
  /**
   * dequeue_entity()'s DELAY_DEQUEUE test (6.12+): keep the normal `task`, going to sleep on
   * `cpu`, on the queue as delayed instead of dequeuing it. False for policies without it.
   */
  delaySleep(cpu: number, task: number): boolean;
  /** The delayed `task` was picked and is reaped: its lag saved as dequeue_entity() does, then
   *  finish_delayed_dequeue_entity() (DELAY_ZERO: positive lag dropped). Still in the queue. */
  finishDelayed(cpu: number, task: number): void;
  /** requeue_delayed_entity(): the delayed `task` was woken where it is queued (DELAY_ZERO). */
  requeueDelayed(cpu: number, task: number): void;
}

export interface SchedViews {
  i32: Int32Array;
  f64: Float64Array;
  rqBase: number;
  taskBase: number;
  /** f64 index of task 0's doubles. */
  taskF64: number;
  /** f64 index of CPU 0's doubles. */
  cpuF64: number;
  /** CPUs (CPU n's idle task is task n). */
  nrCpus: number;
  lockSpins: number;
}

/** Indexing into the run queues' and tasks' words, shared by the run queues and the policies. */
export class RqView {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  constructor(readonly v: SchedViews) {
    this.i32 = v.i32;
    this.f64 = v.f64;
  }
  /** Int32 index of `cpu`'s run queue. */
  rq(cpu: number): number {
    return this.v.rqBase + cpu * RQ_WORDS;
  }
  /** Int32 index of a task's word. */
  tw(task: number, word: number): number {
    return this.v.taskBase + task * TASK_WORDS + word;
  }
  /** f64 index of a task's double. */
  tf(task: number, word: number): number {
    return this.v.taskF64 + task * TASK_F64 + word;
  }
  /** f64 index of a CPU's double. */
  cf(cpu: number, word: number): number {
    return this.v.cpuF64 + cpu * CPU_F64 + word;
  }
  curr(cpu: number): number {
    return this.i32[this.rq(cpu) + RQ_CURR];
  }
  /** Entries in `cpu`'s queue; `queuedAt(cpu, i)` for i below it. */
  queueLen(cpu: number): number {
    return this.i32[this.rq(cpu) + RQ_LEN];
  }
  queuedAt(cpu: number, i: number): number {
    return this.i32[this.rq(cpu) + RQ_QUEUE + i];
  }
  /** Position of `task` in `cpu`'s queue, or -1. */
  indexOf(cpu: number, task: number): number {
    const n = this.queueLen(cpu);
    for (let i = 0; i < n; i++) if (this.queuedAt(cpu, i) === task) return i;
    return -1;
  }
  queued(cpu: number, task: number): boolean {
    return this.indexOf(cpu, task) >= 0;
  }
  isNormal(task: number): boolean {
    return this.i32[this.tw(task, T_POLICY)] === SchedPolicy.Normal;
  }
  weight(task: number): number {
    return this.i32[this.tw(task, T_WEIGHT)];
  }
  vruntime(task: number): number {
    return this.f64[this.tf(task, TF_VRUNTIME)];
  }
}
