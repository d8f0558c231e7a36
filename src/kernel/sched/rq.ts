/**
 * Per-CPU run queues and the scheduling classes: real-time (FIFO/RR) above normal, and for
 * normal tasks a fair class whose policy is pluggable (fair.ts): EEVDF as in 6.6+ (eevdf.ts) or
 * CFS as in 5.15 (cfs.ts).
 *
 * Here, shared by every fair policy:
 *   - queue membership (RQ_QUEUE, unordered; the policy picks);
 *   - update_curr's wall-clock part (exec_start, sum_exec_runtime), then the policy's charge;
 *   - the class order of pick_next_task (RT, fair, idle) and of check_preempt_curr (RT over
 *     normal, anything over idle, normal never over RT unless RT is throttled);
 *   - RT throttling (sched_rt_runtime_us = 950000 of sched_rt_period_us = 1000000);
 *   - SCHED_RR rotation every RR_TIMESLICE.
 * Differences: no load balancing or migration (tasks stay on their CPU, unbound workers are
 * placed at wakeup); no cgroups.
 *
 * The clock a task is charged by (rq_clock_task) runs from when its thread takes the CPU, not
 * from the pick: the lab's context switch is a hand-off between host threads (a futex wake,
 * tens of µs to milliseconds on a loaded host, where the kernel's takes about a microsecond), and
 * that time is the emulator's, not the task's. The kernel does the same with time its CPU did
 * not run: update_rq_clock_task() (kernel/sched/core.c, CONFIG_PARAVIRT_TIME_ACCOUNTING)
 * subtracts steal time from clock_task, and KVM counts a vCPU thread's host run_delay as steal
 * (record_steal_time(), arch/x86/kvm/x86.c). See {@link NOT_YET_RUNNING}, {@link RunQueues.switchedIn}.
 * The host descheduling a CPU's thread while a task runs on it is steal too: detected as a host
 * stall, its run delay can be subtracted the same way ({@link RunQueues.skipSteal}, `--host-steal`;
 * off by default: docs/twin.md).
 *
 * Every function here runs under the CPU's rq lock unless it says otherwise.
 * Context: whichever thread calls (the CPU's owner, or a remote waker); never allocates.
 */
import { CPUF_RT_TIME, SchedPolicy, TaskState } from '../../hw/layout.js';
import { ShmLock } from '../../shm/lock.js';
import { CfsPolicy } from './cfs.js';
import { EEVDF_6_9, EEVDF_6_18, EevdfPolicy } from './eevdf.js';
import {
  type FairParams,
  type FairPolicy,
  type FairPolicyName,
  niceToWeight,
  RqView,
  type SchedViews,
} from './fair.js';
import {
  RQ_CURR,
  RQ_LEN,
  RQ_NR_RUNNING,
  RQ_QUEUE,
  RQ_RT_THROTTLED,
  RQ_WORDS,
  T_CHARGE,
  T_CPU,
  T_DELAYED,
  T_NICE,
  T_POLICY,
  T_RT_PRIO,
  T_SLICES,
  T_STATE,
  T_TICKS,
  T_WAKEUPS,
  T_WEIGHT,
  T_WORK_NS,
  TASK_F64,
  TASK_WORDS,
  TF_EXEC_START,
  TF_RR_LEFT,
  TF_SUM_EXEC,
  TF_WOKEN_AT,
} from './layout.js';
import { pickRt, RR_TIMESLICE_NS, rtPeriod } from './rt.js';

// The scheduler's words (src/kernel/sched/layout.ts), re-exported: the registry reads the records'
// constants from this module (src/kernel/registry.ts).
export * from './layout.js';

// The real-time class (kernel/sched/rt.c): its constants, throttling and pick (./rt.ts).
export { RR_TIMESLICE_NS, RT_PERIOD_NS, RT_RUNTIME_NS } from './rt.js';

/** The fair policy called `name`, over the queues `q`. */
function fairPolicy(name: FairPolicyName, q: RqView, p: FairParams): FairPolicy {
  switch (name) {
    case 'eevdf':
      return new EevdfPolicy(q, p, EEVDF_6_9);
    case 'eevdf-6.18':
      return new EevdfPolicy(q, p, EEVDF_6_18);
    case 'cfs':
      return new CfsPolicy(q, p);
  }
}

/**
 * TF_EXEC_START of a task that was picked but whose thread has not yet taken the CPU (the lab's
 * context switch in flight): update_curr() charges it nothing (now − ∞ < 0) until
 * {@link RunQueues.switchedIn} starts its clock.
 */
export const NOT_YET_RUNNING = Number.POSITIVE_INFINITY;

/**
 * How a kthread (kworker, unbound worker, ksoftirqd) is charged by update_curr() (`--kthread-charge`):
 *   - `work`: only the time its work items and softirq passes ran (T_WORK_NS), a documented
 *     model, the default. The kernel charges a kworker its whole run (the switch, worker_thread's
 *     loop, process_one_work, then the work): about 2 µs beside 20 µs of work here (bench:twin
 *     (b): a same-CPU switch 1.9–2.8 µs). The lab's own run of those paths costs 50–80 µs on this
 *     host (cold JavaScript: measured per phase, docs/twin.md), and beside a nice −20 task every
 *     µs charged costs the kworker 87 µs of waiting (EEVDF's lag, CFS's vruntime), so charging
 *     them made the lab's kworker wait 3–60 times what its own rules give (docs/twin.md). Leaving
 *     them out errs by the kernel's ~2 µs instead.
 *   - `wall`: the wall time it held the CPU, as for every other task (the lab before this model).
 */
export const KTHREAD_CHARGES = ['work', 'wall'] as const;
export type KthreadCharge = (typeof KTHREAD_CHARGES)[number];
export const DEFAULT_KTHREAD_CHARGE: KthreadCharge = 'work';

/** The most one report of work adds (RunQueues.addWork): T_WORK_NS is an Int32 of ns. */
const MAX_WORK_REPORT_NS = 1 << 30;

/** A real-time task's share of its CPU in {@link RunQueues.loadWeight}: more than any nice level's weight (nice -20 is 88761). */
export const RT_LOAD_WEIGHT = 1 << 20;

export class RunQueues extends RqView {
  /**
   * The run queues of a machine laid out by planMachine (any thread), with the fair policy
   * `sched` (default EEVDF); `hz` is the machine's tick rate (TICK_NSEC).
   */
  static of(
    i32: Int32Array,
    f64: Float64Array,
    R: { parts: Readonly<Record<string, readonly number[]>>; cpuF64: number },
    cpus: number,
    lockSpins: number,
    sched: FairPolicyName | undefined,
    hz: number,
  ): RunQueues {
    const v = {
      i32,
      f64,
      rqBase: R.parts.rq[0],
      taskBase: R.parts.task[0],
      taskF64: R.parts.taskF64[0] / 2,
      cpuF64: R.cpuF64 / 2,
      nrCpus: cpus,
      lockSpins,
    };
    return new RunQueues(v, sched ?? 'eevdf', { cpus, hz });
  }

  private readonly locks: ShmLock[] = [];
  /** The fair class's policy. */
  readonly fair: FairPolicy;
  constructor(v: SchedViews, sched: FairPolicyName, p: FairParams) {
    super(v);
    this.fair = fairPolicy(sched, this, p);
    for (let c = 0; c < v.nrCpus; c++) this.locks.push(new ShmLock(v.i32, v.rqBase + c * RQ_WORDS, v.lockSpins));
  }

  lock(cpu: number): void {
    this.locks[cpu].lock();
  }
  unlock(cpu: number): void {
    this.locks[cpu].unlock();
  }

  // --- words -----------------------------------------------------------------------------
  nrRunning(cpu: number): number {
    return Atomics.load(this.v.i32, this.rq(cpu) + RQ_NR_RUNNING);
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
  initTask(task: number, cpu: number, policy: SchedPolicy, nice: number, rtPrio: number, workOnly = false): void {
    const i32 = this.v.i32;
    i32.fill(0, this.tw(task, 0), this.tw(task, TASK_WORDS));
    this.v.f64.fill(0, this.tf(task, 0), this.tf(task, TASK_F64));
    i32[this.tw(task, T_STATE)] = policy === SchedPolicy.Idle ? TaskState.Runnable : TaskState.Sleeping;
    i32[this.tw(task, T_CPU)] = cpu;
    i32[this.tw(task, T_POLICY)] = policy;
    i32[this.tw(task, T_NICE)] = nice;
    i32[this.tw(task, T_RT_PRIO)] = rtPrio;
    i32[this.tw(task, T_WEIGHT)] = niceToWeight(nice);
    i32[this.tw(task, T_CHARGE)] = workOnly ? 1 : 0;
  }

  /**
   * The thread running `task` ran `ns` of its work (a work item, a softirq pass): what
   * update_curr() charges a task charged by work only (T_CHARGE). Context: the thread running
   * `task`, no lock (Atomics: update_curr() takes it under the rq lock from any thread).
   */
  addWork(task: number, ns: number): void {
    if (!this.chargedByWork(task) || !(ns > 0)) return;
    Atomics.add(this.v.i32, this.tw(task, T_WORK_NS), Math.min(Math.round(ns), MAX_WORK_REPORT_NS));
  }

  /** Whether update_curr() charges `task` only the work it reports (T_CHARGE, written once at init). */
  chargedByWork(task: number): boolean {
    return this.v.i32[this.tw(task, T_CHARGE)] !== 0;
  }

  /** Initialise CPU `cpu`'s run queue with its idle task current. Context: main thread. */
  initCpu(cpu: number): void {
    const b = this.rq(cpu);
    this.v.i32.fill(0, b, b + RQ_WORDS);
    this.v.i32[b + RQ_CURR] = cpu;
    this.fair.initCpu(cpu);
  }

  /**
   * The load on `cpu` for placing a waking task (select_task_rq_fair's view, racy: a hint): the
   * sum of its queued tasks' weights (cfs_rq->load), a real-time task counting as a CPU with no
   * capacity left for normal tasks (RT_LOAD_WEIGHT). Context: any thread.
   */
  loadWeight(cpu: number): number {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    const n = Atomics.load(i32, b + RQ_LEN);
    let w = 0;
    for (let k = 0; k < n; k++) {
      const t = i32[b + RQ_QUEUE + k];
      const p = i32[this.tw(t, T_POLICY)];
      w += p === SchedPolicy.Fifo || p === SchedPolicy.RoundRobin ? RT_LOAD_WEIGHT : i32[this.tw(t, T_WEIGHT)];
    }
    return w;
  }

  // --- queue membership (indexOf, queued: RqView) ---------------------------------------------
  /** Add a runnable task to `cpu`'s queue; the policy places a normal one (`initial`: its first enqueue). */
  enqueue(cpu: number, task: number, initial = false): void {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    if (this.isNormal(task)) this.fair.place(cpu, task, initial);
    const n = i32[b + RQ_LEN];
    if (n >= RQ_QUEUE_CAP) throw new Error(`run queue of CPU ${cpu} is full (${n} tasks)`);
    i32[b + RQ_QUEUE + n] = task;
    i32[b + RQ_LEN] = n + 1;
    Atomics.store(i32, b + RQ_NR_RUNNING, n + 1);
  }

  /** Remove a task from `cpu`'s queue; the policy saves what it keeps of a normal one. */
  dequeue(cpu: number, task: number): void {
    if (this.indexOf(cpu, task) < 0) return;
    if (this.isNormal(task)) this.fair.dequeue(cpu, task);
    this.unqueue(cpu, task);
  }

  /** Take `task` out of `cpu`'s queue (membership only: the policy has done its part). */
  private unqueue(cpu: number, task: number): void {
    const i32 = this.v.i32;
    const b = this.rq(cpu);
    const idx = this.indexOf(cpu, task);
    if (idx < 0) return;
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
   * update_curr(): charge the running task for the time since it was last charged (nothing while
   * its context switch is in flight: {@link NOT_YET_RUNNING}).
   * Returns true when the fair policy asks for a resched (EEVDF: the task passed its deadline)
   * or an RR task used up its slice.
   */
  updateCurr(cpu: number, now: number): boolean {
    const i32 = this.v.i32;
    const f64 = this.v.f64;
    const t = i32[this.rq(cpu) + RQ_CURR];
    const pol = i32[this.tw(t, T_POLICY)];
    if (pol === SchedPolicy.Idle) return false;
    const wall = now - f64[this.tf(t, TF_EXEC_START)];
    if (wall <= 0) return false;
    f64[this.tf(t, TF_EXEC_START)] = now;
    // A task charged by its work (T_CHARGE: a kthread under --kthread-charge work) is charged
    // what it reported since the last charge, not the wall time (KTHREAD_CHARGES).
    const delta = i32[this.tw(t, T_CHARGE)] === 0 ? wall : Atomics.exchange(i32, this.tw(t, T_WORK_NS), 0);
    if (delta <= 0) return false;
    f64[this.tf(t, TF_SUM_EXEC)] += delta;
    if (pol === SchedPolicy.Normal) return this.fair.charge(cpu, t, delta);
    f64[this.cf(cpu, CPUF_RT_TIME)] += delta;
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

  /**
   * pick_next_task(): RT, then fair, then the idle task (id == cpu). A delayed task the fair class
   * picks is reaped and the pick made again (pick_next_entity(): `if (se->sched_delayed) {
   * dequeue_entities(rq, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED); return NULL; }`, then `goto again`).
   */
  pickNext(cpu: number): number {
    const rt = pickRt(this, cpu);
    if (rt >= 0) return rt;
    const i32 = this.v.i32;
    for (;;) {
      const f = this.fair.pick(cpu);
      if (f < 0) return cpu;
      if (i32[this.tw(f, T_DELAYED)] === 0) return f;
      i32[this.tw(f, T_DELAYED)] = 0;
      this.fair.finishDelayed(cpu, f);
      this.unqueue(cpu, f);
    }
  }

  /**
   * Should `woken`, just enqueued on `cpu`, preempt the current task? (check_preempt_curr)
   * `currNeedsResched`: `cpu` already has NEED_RESCHED set (read by the waker under the rq lock).
   */
  shouldPreempt(cpu: number, woken: number, currNeedsResched = false): boolean {
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
    // check_preempt_wakeup (5.15 fair.c) and check_preempt_wakeup_fair (6.6+, 6.18 as well): "We
    // can come here with TIF_NEED_RESCHED already set from new task wake up path ... if
    // (test_tsk_need_resched(curr)) return;": no second preemption, no buddy marked; the pending
    // reschedule's pick decides. (EEVDF had kept the old behaviour until 2026-12-07: with the
    // return, an earlier version of the lab's EEVDF starved a nice-0 task beside a nice −20 hog in
    // test/machine/scheduler.test.ts; that no longer happens, after the wake-up's update_curr()
    // and the tie on the deadline were mended: docs/twin.md.)
    if (currNeedsResched) return false;
    return this.fair.wakeupPreempt(cpu, curr, woken);
  }

  /**
   * try_to_wake_up's queue part, under `cpu`'s rq lock: make a sleeping task runnable.
   * Returns 0 when it was already runnable, 1 when woken, 2 when woken and `cpu` must reschedule.
   */
  wakeLocked(cpu: number, task: number, now: number, currNeedsResched = false): number {
    const i32 = this.v.i32;
    if (
      Atomics.compareExchange(i32, this.tw(task, T_STATE), TaskState.Sleeping, TaskState.Runnable) !==
      TaskState.Sleeping
    ) {
      return 0;
    }
    const first = i32[this.tw(task, T_WAKEUPS)]++ === 0;
    if (this.queued(cpu, task)) {
      if (i32[this.tw(task, T_DELAYED)] === 0) return 1; // it had not yet left the queue: just keep running
      // ttwu_runnable() of a delayed task: requeue_delayed_entity(), then wakeup_preempt(), whose
      // update_curr() now runs with the task queued (nr_queued ≥ 2: it may resched on its own).
      i32[this.tw(task, T_DELAYED)] = 0;
      this.fair.requeueDelayed(cpu, task);
      this.v.f64[this.tf(task, TF_WOKEN_AT)] = now;
      const resched = this.updateCurr(cpu, now) && this.nrRunning(cpu) > 1;
      return resched || this.shouldPreempt(cpu, task, currNeedsResched) ? 2 : 1;
    }
    const expired = this.updateCurr(cpu, now);
    const queuedBefore = this.nrRunning(cpu);
    this.enqueue(cpu, task, first);
    this.v.f64[this.tf(task, TF_WOKEN_AT)] = now;
    const curr = this.curr(cpu);
    // The wake-up's update_curr() may reschedule a running normal task on its own (eevdf.ts,
    // wakeResched): the pick then runs even when the woken task does not preempt.
    if (this.isNormal(curr) && this.fair.wakeResched(cpu, curr, expired, queuedBefore)) return 2;
    return this.shouldPreempt(cpu, task, currNeedsResched) ? 2 : 1;
  }

  /**
   * scheduler_tick(): charge the current task, run RT throttling, the fair policy's tick check.
   * Returns true when the CPU should reschedule.
   */
  tickLocked(cpu: number, now: number): boolean {
    const curr = this.curr(cpu);
    this.v.i32[this.tw(curr, T_TICKS)]++;
    const expired = this.updateCurr(cpu, now);
    const throttleChanged = rtPeriod(this, cpu, now);
    const fairTick = this.isNormal(curr) && this.fair.tickPreempt(cpu, curr);
    return throttleChanged || ((expired || fairTick) && this.nrRunning(cpu) > 1);
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
      // 6.12+ DELAY_DEQUEUE: a sleeper that is not eligible stays queued, delayed (eevdf.ts).
      if (this.isNormal(prev) && this.fair.delaySleep(cpu, prev)) i32[this.tw(prev, T_DELAYED)] = 1;
      else this.dequeue(cpu, prev);
    }
    const next = this.pickNext(cpu);
    if (next !== prev) {
      i32[b + RQ_CURR] = next;
      // set_next_entity's update_stats_curr_start() starts next's clock here; in the lab its
      // thread has yet to take the CPU, and the clock starts then (switchedIn).
      f64[this.tf(next, TF_EXEC_START)] = NOT_YET_RUNNING;
      if (i32[this.tw(next, T_POLICY)] === SchedPolicy.RoundRobin && f64[this.tf(next, TF_RR_LEFT)] <= 0) {
        f64[this.tf(next, TF_RR_LEFT)] = RR_TIMESLICE_NS;
      }
      i32[this.tw(next, T_SLICES)]++;
      if (this.isNormal(next)) this.fair.setNext(cpu, next);
    }
    return next;
  }

  /**
   * finish_task_switch()'s part here, under `cpu`'s rq lock: `task`'s thread has taken the CPU at
   * `now`, and if `task` is still `cpu`'s current task with its switch in flight, its clock
   * starts now. The hand-off before it is steal time, charged to no task (the file's header:
   * update_rq_clock_task() subtracts steal from clock_task, and set_next_entity() started the
   * clock at the pick only because the kernel's own switch takes next to no time). Returns how
   * long after the wake-up that queued it `task` runs (ns), or −1 when this is not its first run
   * since one (a preempted task resumed, the idle task).
   */
  switchedIn(cpu: number, task: number, now: number): number {
    const es = this.tf(task, TF_EXEC_START);
    if (this.curr(cpu) === task && this.v.f64[es] === NOT_YET_RUNNING) this.v.f64[es] = now;
    // The first run since a wake-up: try_to_wake_up → running (runqlat's run-queue latency).
    const w = this.tf(task, TF_WOKEN_AT);
    const woken = this.v.f64[w];
    if (!(woken > 0)) return -1;
    this.v.f64[w] = 0;
    return Math.max(0, now - woken);
  }

  /**
   * Steal from `from` to `to` on `cpu` (Scheduler.chargeSteal): the part of it not yet charged
   * to the current task (after its TF_EXEC_START) is moved past, as if rq->clock_task had not
   * advanced over it (update_rq_clock_task(), CONFIG_PARAVIRT_TIME_ACCOUNTING).
   */
  skipSteal(cpu: number, from: number, to: number): void {
    const es = this.tf(this.curr(cpu), TF_EXEC_START);
    const start = this.v.f64[es];
    if (start < to) this.v.f64[es] = start + (to - Math.max(from, start));
  }

  /** Put a sleeping, dequeued unbound task onto another CPU (under the old CPU's lock). */
  setTaskCpu(task: number, cpu: number): void {
    if (this.isNormal(task)) this.fair.migrate(task, this.taskCpu(task));
    Atomics.store(this.v.i32, this.tw(task, T_CPU), cpu);
  }

  slices(task: number): number {
    return this.v.i32[this.tw(task, T_SLICES)];
  }
  ticks(task: number): number {
    return this.v.i32[this.tw(task, T_TICKS)];
  }
  /** sum_exec_runtime: what update_curr() has charged `task` (ns; racy outside the rq lock). */
  sumExec(task: number): number {
    return this.v.f64[this.tf(task, TF_SUM_EXEC)];
  }
}

/** RQ_QUEUE capacity (from the layout). */
const RQ_QUEUE_CAP = RQ_WORDS - RQ_QUEUE;
