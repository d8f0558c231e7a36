/**
 * Per-CPU run queues and the scheduling class logic: real-time (FIFO/RR) above normal, and
 * for normal tasks an EEVDF-style weighted fair share (kernel/sched/fair.c since 6.6).
 *
 * Emulates, in simplified form:
 *   - the nice-to-weight table (sched_prio_to_weight) and vruntime = Σ delta · 1024 / weight;
 *   - EEVDF: avg_vruntime V; a task is eligible when its vruntime ≤ V; the eligible task with
 *     the earliest virtual deadline (vruntime + base_slice · 1024 / weight) runs; at a tick, a
 *     task past its deadline gets a new one and the CPU is rescheduled;
 *   - lag kept across sleep (vlag = V − vruntime at dequeue, clamped), restored at wakeup;
 *   - wakeup preemption when the woken task is the one EEVDF would pick now, or when its class
 *     is higher (RT over normal, anything over idle);
 *   - RT throttling (sched_rt_runtime_us = 950000 of sched_rt_period_us = 1000000);
 *   - SCHED_RR rotation every RR_TIMESLICE.
 * Differences: no load balancing or migration (tasks stay on their CPU, unbound workers are
 * placed at wakeup); no cgroups; lag is not scaled by the queue weight at placement; slices
 * end only at ticks and wakeups, as in a kernel without HRTICK.
 *
 * Every function here runs under the CPU's rq lock unless it says otherwise.
 * Context: whichever thread calls (the CPU's owner, or a remote waker); never allocates.
 */

import {
  CPU_F64,
  CPUF_RT_PERIOD,
  CPUF_RT_TIME,
  CPUF_V_HINT,
  RQ_CURR,
  RQ_LEN,
  RQ_NR_RUNNING,
  RQ_QUEUE,
  RQ_RT_THROTTLED,
  RQ_WORDS,
  SchedPolicy,
  T_CPU,
  T_NICE,
  T_POLICY,
  T_RT_PRIO,
  T_SLICES,
  T_STATE,
  T_TICKS,
  T_WAKEUPS,
  T_WEIGHT,
  TASK_F64,
  TASK_WORDS,
  TaskState,
  TF_DEADLINE,
  TF_EXEC_START,
  TF_RR_LEFT,
  TF_SUM_EXEC,
  TF_VLAG,
  TF_VRUNTIME,
} from '../../machine/layout.js';
import { ShmLock } from '../../shm/lock.js';

/** sched_prio_to_weight[], nice -20 .. 19 (kernel/sched/core.c). */
export const NICE_TO_WEIGHT = [
  88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991,
  1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];
export const NICE_0_WEIGHT = 1024;
export function niceToWeight(nice: number): number {
  return NICE_TO_WEIGHT[Math.max(-20, Math.min(19, nice)) + 20];
}

/** sysctl_sched_base_slice: 0.75 ms (EEVDF's request size). */
export const BASE_SLICE_NS = 750_000;
/** RR_TIMESLICE: 100 ms. */
export const RR_TIMESLICE_NS = 100_000_000;
/** sched_rt_period_us / sched_rt_runtime_us: RT tasks get at most 95% of each second. */
export const RT_PERIOD_NS = 1_000_000_000;
export const RT_RUNTIME_NS = 950_000_000;

export interface SchedViews {
  i32: Int32Array;
  f64: Float64Array;
  rqBase: number;
  taskBase: number;
  /** f64 index of task 0's doubles. */
  taskF64: number;
  /** f64 index of CPU 0's doubles. */
  cpuF64: number;
  /** Task id of each CPU's idle task (== cpu). */
  nrCpus: number;
  lockSpins: number;
}

export class RunQueues {
  /** The run queues of a machine laid out by planMachine (any thread). */
  static of(
    i32: Int32Array,
    f64: Float64Array,
    R: { rq: number; task: number; taskF64: number; cpuF64: number },
    cpus: number,
    lockSpins: number,
  ): RunQueues {
    return new RunQueues({
      i32,
      f64,
      rqBase: R.rq,
      taskBase: R.task,
      taskF64: R.taskF64 / 2,
      cpuF64: R.cpuF64 / 2,
      nrCpus: cpus,
      lockSpins,
    });
  }

  private readonly locks: ShmLock[] = [];
  constructor(private readonly v: SchedViews) {
    for (let c = 0; c < v.nrCpus; c++) this.locks.push(new ShmLock(v.i32, v.rqBase + c * RQ_WORDS, v.lockSpins));
  }

  lock(cpu: number): void {
    this.locks[cpu].lock();
  }
  unlock(cpu: number): void {
    this.locks[cpu].unlock();
  }

  // --- words -----------------------------------------------------------------------------
  private rq(cpu: number): number {
    return this.v.rqBase + cpu * RQ_WORDS;
  }
  tw(task: number, word: number): number {
    return this.v.taskBase + task * TASK_WORDS + word;
  }
  tf(task: number, word: number): number {
    return this.v.taskF64 + task * TASK_F64 + word;
  }
  nrRunning(cpu: number): number {
    return Atomics.load(this.v.i32, this.rq(cpu) + RQ_NR_RUNNING);
  }
  curr(cpu: number): number {
    return this.v.i32[this.rq(cpu) + RQ_CURR];
  }
  state(task: number): number {
    return Atomics.load(this.v.i32, this.tw(task, T_STATE));
  }
  taskCpu(task: number): number {
    return Atomics.load(this.v.i32, this.tw(task, T_CPU));
  }
  policy(task: number): number {
    return this.v.i32[this.tw(task, T_POLICY)];
  }

  /** Initialise a task's words. Context: main thread, before workers start. */
  initTask(task: number, cpu: number, policy: SchedPolicy, nice: number, rtPrio: number): void {
    const i32 = this.v.i32;
    i32.fill(0, this.tw(task, 0), this.tw(task, TASK_WORDS));
    this.v.f64.fill(0, this.tf(task, 0), this.tf(task, TASK_F64));
    i32[this.tw(task, T_STATE)] = policy === SchedPolicy.Idle ? TaskState.Runnable : TaskState.Sleeping;
    i32[this.tw(task, T_CPU)] = cpu;
    i32[this.tw(task, T_POLICY)] = policy;
    i32[this.tw(task, T_NICE)] = nice;
    i32[this.tw(task, T_RT_PRIO)] = rtPrio;
    i32[this.tw(task, T_WEIGHT)] = niceToWeight(nice);
  }

  /** Initialise CPU `cpu`'s run queue with its idle task current. Context: main thread. */
  initCpu(cpu: number): void {
    const b = this.rq(cpu);
    this.v.i32.fill(0, b, b + RQ_WORDS);
    this.v.i32[b + RQ_CURR] = cpu;
  }

  // --- queue membership ----------------------------------------------------------------------
  private indexOf(cpu: number, task: number): number {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    const n = i32[b + RQ_LEN];
    for (let i = 0; i < n; i++) if (i32[b + RQ_QUEUE + i] === task) return i;
    return -1;
  }
  queued(cpu: number, task: number): boolean {
    return this.indexOf(cpu, task) >= 0;
  }

  /** Average vruntime V of the normal tasks queued on `cpu` (weights as in avg_vruntime()). */
  avgVruntime(cpu: number): number {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const b = this.rq(cpu);
    const n = i32[b + RQ_LEN];
    let wsum = 0;
    let vsum = 0;
    for (let i = 0; i < n; i++) {
      const t = i32[b + RQ_QUEUE + i];
      if (i32[this.tw(t, T_POLICY)] !== SchedPolicy.Normal) continue;
      const w = i32[this.tw(t, T_WEIGHT)];
      wsum += w;
      vsum += w * f64[this.tf(t, TF_VRUNTIME)];
    }
    return wsum > 0 ? vsum / wsum : this.minVruntimeHint(cpu);
  }

  /** With nothing queued, V stays where the last task left it (kept in the CPU's doubles). */
  private minVruntimeHint(cpu: number): number {
    return this.v.f64[this.v.cpuF64 + cpu * CPU_F64 + CPUF_V_HINT];
  }
  private setVruntimeHint(cpu: number, v: number): void {
    this.v.f64[this.v.cpuF64 + cpu * CPU_F64 + CPUF_V_HINT] = v;
  }

  /** Add a runnable task to `cpu`'s queue, placing a normal task by its saved lag. */
  enqueue(cpu: number, task: number): void {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const b = this.rq(cpu);
    if (i32[this.tw(task, T_POLICY)] === SchedPolicy.Normal) {
      const V = this.avgVruntime(cpu);
      const w = i32[this.tw(task, T_WEIGHT)];
      const v = V - f64[this.tf(task, TF_VLAG)];
      f64[this.tf(task, TF_VRUNTIME)] = v;
      f64[this.tf(task, TF_DEADLINE)] = v + (BASE_SLICE_NS * NICE_0_WEIGHT) / w;
    }
    const n = i32[b + RQ_LEN];
    if (n >= RQ_QUEUE_CAP) throw new Error(`run queue of CPU ${cpu} is full (${n} tasks)`);
    i32[b + RQ_QUEUE + n] = task;
    i32[b + RQ_LEN] = n + 1;
    Atomics.store(i32, b + RQ_NR_RUNNING, n + 1);
  }

  /** Remove a task from `cpu`'s queue, saving a normal task's lag (clamped as in update_entity_lag). */
  dequeue(cpu: number, task: number): void {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const b = this.rq(cpu);
    const idx = this.indexOf(cpu, task);
    if (idx < 0) return;
    if (i32[this.tw(task, T_POLICY)] === SchedPolicy.Normal) {
      const V = this.avgVruntime(cpu);
      const w = i32[this.tw(task, T_WEIGHT)];
      const limit = (2 * BASE_SLICE_NS * NICE_0_WEIGHT) / w + 4_000_000;
      const lag = V - f64[this.tf(task, TF_VRUNTIME)];
      f64[this.tf(task, TF_VLAG)] = Math.max(-limit, Math.min(limit, lag));
      this.setVruntimeHint(cpu, V);
    }
    const n = i32[b + RQ_LEN];
    for (let i = idx; i < n - 1; i++) i32[b + RQ_QUEUE + i] = i32[b + RQ_QUEUE + i + 1];
    i32[b + RQ_LEN] = n - 1;
    Atomics.store(i32, b + RQ_NR_RUNNING, n - 1);
  }

  /** Move `task` to the back of the queue (RR rotation, FIFO order among equals). */
  private requeueTail(cpu: number, task: number): void {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    const idx = this.indexOf(cpu, task);
    const n = i32[b + RQ_LEN];
    if (idx < 0) return;
    for (let i = idx; i < n - 1; i++) i32[b + RQ_QUEUE + i] = i32[b + RQ_QUEUE + i + 1];
    i32[b + RQ_QUEUE + n - 1] = task;
  }

  /**
   * update_curr(): charge the running task for the time since it was last charged.
   * Returns true when a normal task passed its deadline or an RR task its slice (resched).
   */
  updateCurr(cpu: number, now: number): boolean {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const t = i32[this.rq(cpu) + RQ_CURR];
    const pol = i32[this.tw(t, T_POLICY)];
    if (pol === SchedPolicy.Idle) return false;
    const delta = now - f64[this.tf(t, TF_EXEC_START)];
    if (delta <= 0) return false;
    f64[this.tf(t, TF_EXEC_START)] = now;
    f64[this.tf(t, TF_SUM_EXEC)] += delta;
    if (pol === SchedPolicy.Normal) {
      const w = i32[this.tw(t, T_WEIGHT)];
      f64[this.tf(t, TF_VRUNTIME)] += (delta * NICE_0_WEIGHT) / w;
      const v = f64[this.tf(t, TF_VRUNTIME)];
      if (v >= f64[this.tf(t, TF_DEADLINE)]) {
        f64[this.tf(t, TF_DEADLINE)] = v + (BASE_SLICE_NS * NICE_0_WEIGHT) / w;
        return true;
      }
      return false;
    }
    const cf = this.v.cpuF64 + cpu * CPU_F64;
    f64[cf + CPUF_RT_TIME] += delta;
    if (pol === SchedPolicy.RoundRobin) {
      f64[this.tf(t, TF_RR_LEFT)] -= delta;
      const left = f64[this.tf(t, TF_RR_LEFT)];
      if (left <= 0) {
        f64[this.tf(t, TF_RR_LEFT)] = RR_TIMESLICE_NS;
        this.requeueTail(cpu, t);
        return true;
      }
    }
    return false;
  }

  /** RT throttling bookkeeping at a tick: true when the throttle state changed. */
  private rtPeriod(cpu: number, now: number): boolean {
    const f64 = this.v.f64;
    const i32 = this.v.i32;
    const cf = this.v.cpuF64 + cpu * CPU_F64;
    const b = this.rq(cpu);
    let changed = false;
    if (now - f64[cf + CPUF_RT_PERIOD] >= RT_PERIOD_NS) {
      f64[cf + CPUF_RT_PERIOD] = now;
      f64[cf + CPUF_RT_TIME] = 0;
      if (i32[b + RQ_RT_THROTTLED]) changed = true;
      i32[b + RQ_RT_THROTTLED] = 0;
    } else if (!i32[b + RQ_RT_THROTTLED] && f64[cf + CPUF_RT_TIME] > RT_RUNTIME_NS) {
      i32[b + RQ_RT_THROTTLED] = 1;
      changed = true;
    }
    return changed;
  }

  /** The EEVDF pick among queued normal tasks: eligible (vruntime ≤ V), earliest deadline. */
  private pickFair(cpu: number): number {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const b = this.rq(cpu);
    const n = i32[b + RQ_LEN];
    const V = this.avgVruntime(cpu);
    let best = -1;
    let bestDl = Number.POSITIVE_INFINITY;
    let fallback = -1;
    let fallbackV = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const t = i32[b + RQ_QUEUE + i];
      if (i32[this.tw(t, T_POLICY)] !== SchedPolicy.Normal) continue;
      const v = f64[this.tf(t, TF_VRUNTIME)];
      if (v < fallbackV) {
        fallbackV = v;
        fallback = t;
      }
      if (v <= V + 1e-6) {
        const dl = f64[this.tf(t, TF_DEADLINE)];
        if (dl < bestDl) {
          bestDl = dl;
          best = t;
        }
      }
    }
    return best >= 0 ? best : fallback;
  }

  /** Highest-priority runnable RT task (first in queue order among equals), or -1. */
  private pickRt(cpu: number): number {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    if (i32[b + RQ_RT_THROTTLED]) return -1;
    const n = i32[b + RQ_LEN];
    let best = -1;
    let bestPrio = 0;
    for (let i = 0; i < n; i++) {
      const t = i32[b + RQ_QUEUE + i];
      const pol = i32[this.tw(t, T_POLICY)];
      if (pol !== SchedPolicy.Fifo && pol !== SchedPolicy.RoundRobin) continue;
      const p = i32[this.tw(t, T_RT_PRIO)];
      if (p > bestPrio) {
        bestPrio = p;
        best = t;
      }
    }
    return best;
  }

  /** pick_next_task(): RT, then fair, then the idle task (id == cpu). */
  pickNext(cpu: number): number {
    const rt = this.pickRt(cpu);
    if (rt >= 0) return rt;
    const f = this.pickFair(cpu);
    return f >= 0 ? f : cpu;
  }

  /** Should `woken`, just enqueued on `cpu`, preempt the current task? (check_preempt_curr) */
  shouldPreempt(cpu: number, woken: number): boolean {
    const i32 = this.v.i32;
    const curr = this.curr(cpu);
    const cp = i32[this.tw(curr, T_POLICY)];
    const wp = i32[this.tw(woken, T_POLICY)];
    if (cp === SchedPolicy.Idle) return true;
    const wRt = wp === SchedPolicy.Fifo || wp === SchedPolicy.RoundRobin;
    const cRt = cp === SchedPolicy.Fifo || cp === SchedPolicy.RoundRobin;
    if (wRt)
      return (
        !i32[this.rq(cpu) + RQ_RT_THROTTLED] && (!cRt || i32[this.tw(woken, T_RT_PRIO)] > i32[this.tw(curr, T_RT_PRIO)])
      );
    if (cRt) return !!i32[this.rq(cpu) + RQ_RT_THROTTLED];
    return this.pickFair(cpu) === woken;
  }

  /**
   * try_to_wake_up's queue part, under `cpu`'s rq lock: make a sleeping task runnable.
   * Returns 0 when it was already runnable, 1 when woken, 2 when woken and `cpu` must reschedule.
   */
  wakeLocked(cpu: number, task: number, now: number): number {
    const i32 = this.v.i32;
    if (
      Atomics.compareExchange(i32, this.tw(task, T_STATE), TaskState.Sleeping, TaskState.Runnable) !==
      TaskState.Sleeping
    ) {
      return 0;
    }
    i32[this.tw(task, T_WAKEUPS)]++;
    if (this.queued(cpu, task)) return 1; // it had not yet left the queue: just keep running
    this.updateCurr(cpu, now);
    this.enqueue(cpu, task);
    return this.shouldPreempt(cpu, task) ? 2 : 1;
  }

  /**
   * scheduler_tick(): charge the current task, run RT throttling. Returns true when the CPU
   * should reschedule.
   */
  tickLocked(cpu: number, now: number): boolean {
    this.v.i32[this.tw(this.curr(cpu), T_TICKS)]++;
    const expired = this.updateCurr(cpu, now);
    const throttleChanged = this.rtPeriod(cpu, now);
    return throttleChanged || (expired && this.nrRunning(cpu) > 1);
  }

  /**
   * __schedule()'s pick, under the rq lock: charge prev, dequeue it if it is going to sleep,
   * pick the next task and make it current. Returns the next task (== prev: no switch).
   */
  scheduleLocked(cpu: number, now: number): number {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const b = this.rq(cpu);
    const prev = i32[b + RQ_CURR];
    this.updateCurr(cpu, now);
    if (
      i32[this.tw(prev, T_POLICY)] !== SchedPolicy.Idle &&
      Atomics.load(i32, this.tw(prev, T_STATE)) !== TaskState.Runnable
    ) {
      this.dequeue(cpu, prev);
    }
    const next = this.pickNext(cpu);
    if (next !== prev) {
      i32[b + RQ_CURR] = next;
      f64[this.tf(next, TF_EXEC_START)] = now;
      if (i32[this.tw(next, T_POLICY)] === SchedPolicy.RoundRobin && f64[this.tf(next, TF_RR_LEFT)] <= 0) {
        f64[this.tf(next, TF_RR_LEFT)] = RR_TIMESLICE_NS;
      }
      i32[this.tw(next, T_SLICES)]++;
    }
    return next;
  }

  /** Put a sleeping, dequeued unbound task onto another CPU (under the old CPU's lock). */
  setTaskCpu(task: number, cpu: number): void {
    Atomics.store(this.v.i32, this.tw(task, T_CPU), cpu);
  }

  slices(task: number): number {
    return this.v.i32[this.tw(task, T_SLICES)];
  }
  ticks(task: number): number {
    return this.v.i32[this.tw(task, T_TICKS)];
  }
}

/** RQ_QUEUE capacity (from the layout). */
const RQ_QUEUE_CAP = RQ_WORDS - RQ_QUEUE;
