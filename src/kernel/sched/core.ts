/**
 * The scheduler's entry points (kernel/sched/core.c): schedule(), try_to_wake_up(),
 * scheduler_tick(), the prepare-to-wait pattern; the policy (which task runs) is the run
 * queues' (rq.ts, with the fair class's policy: fair.ts), and the context switch itself is the
 * machine's: handing a CPU from one thread to another (`switchTo`, injected by the runtime,
 * src/machine/runtime.ts).
 *
 * Context: any thread that owns a CPU (schedule, sleepCurrent, tick) or any thread at all
 * (wakeUp, wakeUpOn). Never allocates.
 */
import { CPU_FLAGS, CPU_OWNER, CpuCounter, CpuFlag, SchedPolicy, TaskState } from '../../hw/layout.js';
import type { CpuContext } from '../context.js';
import { T_STATE } from './layout.js';
import { newidleBalance } from './newidle.js';
import type { RunQueues } from './rq.js';
import type { TaskPlacement } from './select.js';

/** Hand CPU `cpu` to task `next` (its thread finds itself owner); the caller stops executing on it. */
export type SwitchTo = (cpu: number, next: number, now: number) => void;
/** Get CPU `cpu`'s attention (it must look at its flags): the reschedule IPI. */
export type Kick = (cpu: number) => void;

export class Scheduler {
  /** Where woken tasks with allowed CPUs go (--app-cpus; select.ts); unset: tasks stay where they are. */
  placement: TaskPlacement | undefined;

  constructor(
    private readonly ctx: CpuContext,
    readonly rqs: RunQueues,
    /** Per task id: 1 for a kthread (kworker, unbound worker, ksoftirqd): counted in kthread_switches. */
    private readonly isKthread: Uint8Array,
    private readonly switchTo: SwitchTo,
    private readonly kick: Kick,
  ) {}

  /** Nothing runnable on `cpu`: its idle task owns it. Racy. */
  isIdle(cpu: number): boolean {
    return Atomics.load(this.ctx.i32, this.ctx.cw(cpu, CPU_OWNER)) === cpu && this.rqs.nrRunning(cpu) === 0;
  }

  /**
   * schedule(): pick the next task on the current CPU and switch to it. The caller (a task at a
   * preemption point, or one going to sleep after storing TaskState.Sleeping) must check
   * `ctx.task` afterwards: -1 means it no longer runs.
   * Context: task context on the owner.
   */
  schedule(): void {
    const ctx = this.ctx;
    const c = ctx.cpu;
    Atomics.and(ctx.i32, ctx.cw(c, CPU_FLAGS), ~CpuFlag.NeedResched);
    const now = ctx.now();
    this.rqs.lock(c);
    let next = this.rqs.scheduleLocked(c, now);
    this.rqs.unlock(c);
    // Going idle: newidle balancing may pull a placed task here (newidle.ts), then pick again.
    if (this.placement && this.rqs.policy(next) === SchedPolicy.Idle && newidleBalance(this.rqs, this.placement, c)) {
      this.rqs.lock(c);
      next = this.rqs.scheduleLocked(c, now);
      this.rqs.unlock(c);
      ctx.count(CpuCounter.newidle_pulls);
    }
    if (next === ctx.task) return;
    ctx.count(CpuCounter.ctx_switches);
    if (this.isKthread[next]) ctx.count(CpuCounter.kthread_switches);
    this.switchTo(c, next, now);
  }

  /**
   * finish_task_switch(): `task`'s thread has just taken CPU `cpu` (it found itself owner); its
   * run time counts from now, not from the pick (RunQueues.switchedIn: the hand-off between
   * threads is steal time). Context: the thread that now owns `cpu`, before it runs the task.
   */
  finishTaskSwitch(cpu: number, task: number, now: number = this.ctx.now()): number {
    this.rqs.lock(cpu);
    const woken = this.rqs.switchedIn(cpu, task, now);
    this.rqs.unlock(cpu);
    return woken;
  }

  /**
   * Steal: the host took CPU `cpu`'s thread from `from` to `to` while the current task ran on it
   * (src/machine/host-stall.ts). update_rq_clock_task() subtracts paravirt steal from
   * rq->clock_task (kernel/sched/core.c, CONFIG_PARAVIRT_TIME_ACCOUNTING), so update_curr() does
   * not charge it to the running task (RunQueues.skipSteal). Context: the owner of `cpu`.
   */
  chargeSteal(cpu: number, from: number, to: number): void {
    this.rqs.lock(cpu);
    this.rqs.skipSteal(cpu, from, to);
    this.rqs.unlock(cpu);
  }

  /**
   * The current task goes to sleep unless `recheck()` (evaluated after the state is stored, so a
   * concurrent wake-up is never lost: the prepare_to_wait / schedule pattern).
   * Returns true when it slept (gave the CPU away).
   */
  sleepCurrent(recheck: () => boolean): boolean {
    const ctx = this.ctx;
    const st = this.rqs.tw(ctx.task, T_STATE);
    Atomics.store(ctx.i32, st, TaskState.Sleeping);
    if (recheck()) {
      Atomics.store(ctx.i32, st, TaskState.Runnable);
      return false;
    }
    this.schedule();
    return ctx.task < 0;
  }

  /**
   * wake_up_process(): make `task` runnable on its CPU; preempt that CPU's current task if the
   * policy says so. A task with allowed CPUs (`placement`) is first placed as select_task_rq
   * does (`sync`: WF_SYNC, the waker is about to sleep). Context: any thread, any context.
   * Returns false when already runnable.
   */
  wakeUp(task: number, sync = false): boolean {
    const p = this.placement;
    if (p?.placed(task)) {
      const prev = this.rqs.taskCpu(task);
      const target = p.selectTaskRq(task, prev, this.ctx.cpu, sync);
      const woke = this.wakeUpOn(task, target);
      if (woke && target !== prev && this.ctx.cpu >= 0) this.ctx.count(CpuCounter.wakeup_migrations);
      return woke;
    }
    return this.wakeUpOn(task, -1);
  }

  /**
   * wake_up_process that may place the task: with `target` >= 0, a task that sleeps and sits on
   * no run queue (an unbound worker) is moved to `target` first. Under the rq lock of the CPU the
   * task belongs to, re-read after locking since a concurrent waker may have moved it.
   */
  wakeUpOn(task: number, target: number): boolean {
    const rqs = this.rqs;
    for (;;) {
      const c = rqs.taskCpu(task);
      rqs.lock(c);
      if (rqs.taskCpu(task) !== c) {
        rqs.unlock(c);
        continue;
      }
      if (target >= 0 && c !== target && rqs.state(task) === TaskState.Sleeping && !rqs.queued(c, task)) {
        rqs.setTaskCpu(task, target); // it sleeps and sits on no queue: nobody else places it
        rqs.unlock(c);
        continue;
      }
      // test_tsk_need_resched(curr), read under the rq lock; resched_curr() sets it under the
      // lock too (below), so two wakers of one CPU see each other's preemption.
      const flags = this.ctx.cw(c, CPU_FLAGS);
      const needResched = (Atomics.load(this.ctx.i32, flags) & CpuFlag.NeedResched) !== 0;
      const r = rqs.wakeLocked(c, task, this.ctx.now(), needResched);
      if (r === 2) Atomics.or(this.ctx.i32, flags, CpuFlag.NeedResched);
      rqs.unlock(c);
      this.afterWake(c, r);
      return r > 0;
    }
  }

  /** check_preempt_curr's outcome: count, set NEED_RESCHED on the target, kick it if remote. */
  private afterWake(c: number, r: number): void {
    if (r === 0) return;
    const ctx = this.ctx;
    if (ctx.cpu >= 0) ctx.count(CpuCounter.wakeups);
    if (r === 2) {
      if (ctx.cpu >= 0) ctx.count(CpuCounter.wakeup_preemptions);
      Atomics.or(ctx.i32, ctx.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
      if (c !== ctx.cpu) this.kick(c);
    }
  }

  /** scheduler_tick(): charge the running task; NEED_RESCHED when its slice ended. Context: hardirq on `c`. */
  tick(c: number): void {
    const ctx = this.ctx;
    this.rqs.lock(c);
    const resched = this.rqs.tickLocked(c, ctx.now());
    this.rqs.unlock(c);
    if (resched) Atomics.or(ctx.i32, ctx.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
  }
}
