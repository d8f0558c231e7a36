/**
 * The fair class as CFS in 5.15 (kernel/sched/fair.c, as read in 5.15.100; 6.1 has the same
 * rules for SCHED_NORMAL tasks), one FairPolicy (fair.ts). docs/research/kernel.md §1
 * quotes each function named here.
 *
 * Emulates:
 *   - the tunables sched_latency 6 ms, sched_min_granularity 0.75 ms, sched_wakeup_granularity
 *     1 ms, each times 1 + ilog2(min(cpus, 8)) (update_sysctl); sched_nr_latency 8, not scaled;
 *   - update_curr: vruntime += delta · 1024 / weight; min_vruntime per CPU (update_min_vruntime);
 *   - sched_slice (__sched_period, ALT_PERIOD with no groups, BASE_SLICE's min_granularity floor);
 *   - place_entity: a waking task at max(its vruntime, min_vruntime − sched_latency / 2)
 *     (GENTLE_FAIR_SLEEPERS); a new task (its first enqueue: the lab's tasks are born at boot and
 *     first woken later) at min_vruntime + sched_vslice (START_DEBIT), as task_fork_fair would
 *     place a child whose parent's vruntime is at most min_vruntime;
 *   - pick_next_entity: the leftmost (smallest vruntime; the running task loses ties), unless the
 *     next buddy, else the last buddy, is within one wakeup_gran of it (NEXT_BUDDY off, LAST_BUDDY
 *     on: a task that wins wakeup preemption becomes the next buddy, and with sched_nr_latency
 *     tasks queued the preempted one the last buddy; both cleared when picked or dequeued);
 *   - check_preempt_wakeup → wakeup_preempt_entity: preempt when curr.vruntime − woken.vruntime
 *     > calc_delta_fair(wakeup_granularity, woken);
 *   - check_preempt_tick: resched when the task ran more than sched_slice since it was picked,
 *     or, past min_granularity, when it leads the leftmost by more than that slice;
 *   - migrate_task_rq_fair / ENQUEUE_MIGRATED: a sleeping task moved to another CPU (an unbound
 *     worker) keeps its vruntime relative to min_vruntime.
 *   - check_preempt_wakeup's early return when curr already has NEED_RESCHED (`if
 *     (test_tsk_need_resched(curr)) return;`): in RunQueues.shouldPreempt (rq.ts), before this
 *     policy is asked, so a second wakeup marks no buddy;
 * Not modelled: the skip buddy (no sched_yield here), SCHED_BATCH / SCHED_IDLE policies, group scheduling, the kernel's integer inverse-weight arithmetic
 * (doubles here), HRTICK (slices end at ticks and wakeups only).
 *
 * Context: under the CPU's rq lock (rq.ts); never allocates.
 */
import { CPUF_MIN_VRUNTIME } from '../../hw/layout.js';
import { calcDeltaFair, type FairParams, type FairPolicy, type RqView, sysctlFactor } from './fair.js';
import { RQ_LAST_BUDDY, RQ_NEXT_BUDDY, T_MIGRATED, TF_PREV_SUM_EXEC, TF_SUM_EXEC, TF_VRUNTIME } from './layout.js';

/** normalized_sysctl_sched_latency: 6 ms (fair.c, 5.15); scaled by update_sysctl(). */
export const SCHED_LATENCY_NS = 6_000_000;
/** normalized_sysctl_sched_min_granularity: 0.75 ms (fair.c, 5.15); scaled by update_sysctl(). */
export const MIN_GRANULARITY_NS = 750_000;
/** normalized_sysctl_sched_wakeup_granularity: 1 ms (fair.c, 5.15); scaled by update_sysctl(). */
export const WAKEUP_GRANULARITY_NS = 1_000_000;
/** sched_nr_latency: 8 (fair.c, 5.15); update_sysctl() does not touch it. */
export const SCHED_NR_LATENCY = 8;

export class CfsPolicy implements FairPolicy {
  readonly name = 'cfs';
  /** sysctl_sched_latency after update_sysctl() (SET_SYSCTL(sched_latency)). */
  readonly latency: number;
  /** sysctl_sched_min_granularity after update_sysctl(). */
  readonly minGranularity: number;
  /** sysctl_sched_wakeup_granularity after update_sysctl(). */
  readonly wakeupGranularity: number;

  constructor(
    private readonly q: RqView,
    p: FairParams,
  ) {
    const f = sysctlFactor(p.cpus); // get_update_sysctl_factor(), SCHED_TUNABLESCALING_LOG
    this.latency = SCHED_LATENCY_NS * f;
    this.minGranularity = MIN_GRANULARITY_NS * f;
    this.wakeupGranularity = WAKEUP_GRANULARITY_NS * f;
  }

  initCpu(cpu: number): void {
    const q = this.q;
    q.i32[q.rq(cpu) + RQ_NEXT_BUDDY] = -1;
    q.i32[q.rq(cpu) + RQ_LAST_BUDDY] = -1;
    q.f64[q.cf(cpu, CPUF_MIN_VRUNTIME)] = 0;
  }

  /** cfs_rq->min_vruntime of `cpu`. */
  minVruntime(cpu: number): number {
    return this.q.f64[this.q.cf(cpu, CPUF_MIN_VRUNTIME)];
  }

  /** __sched_period(nr_running): sched_latency, or nr × min_granularity past sched_nr_latency. */
  period(nr: number): number {
    return nr > SCHED_NR_LATENCY ? nr * this.minGranularity : this.latency;
  }

  /**
   * sched_slice(cfs_rq, se): the period for the queue (counting `task` once if it is not on it:
   * `nr_running + !se->on_rq`) shared by weight, floored at min_granularity (BASE_SLICE).
   */
  slice(cpu: number, task: number, onRq: boolean): number {
    const q = this.q;
    const w = q.weight(task);
    let nr = onRq ? 0 : 1;
    let load = onRq ? 0 : w;
    const n = q.queueLen(cpu);
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (!q.isNormal(t)) continue;
      nr++;
      load += q.weight(t);
    }
    return Math.max((this.period(nr) * w) / load, this.minGranularity);
  }

  /** Normal tasks queued on `cpu` (cfs_rq->nr_running: the running one included). */
  private nrRunning(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let nr = 0;
    for (let i = 0; i < n; i++) if (q.isNormal(q.queuedAt(cpu, i))) nr++;
    return nr;
  }

  /** The queued normal task with the smallest vruntime other than `except` (first among equals), or -1. */
  private leftmost(cpu: number, except: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let best = -1;
    let bestV = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (t === except || !q.isNormal(t)) continue;
      const v = q.vruntime(t);
      if (v < bestV) {
        bestV = v;
        best = t;
      }
    }
    return best;
  }

  /**
   * update_min_vruntime(): max(min_vruntime, the smallest vruntime among the queued normal
   * tasks, `except` left out (the task being dequeued)); unchanged when none is queued.
   */
  private updateMinVruntime(cpu: number, except: number): void {
    const left = this.leftmost(cpu, except);
    if (left < 0) return;
    const q = this.q;
    const m = q.cf(cpu, CPUF_MIN_VRUNTIME);
    q.f64[m] = Math.max(q.f64[m], q.vruntime(left)); // "ensure we never gain time by being placed backwards"
  }

  /** clear_buddies(cfs_rq, se): forget `task` as next or last buddy. */
  private clearBuddies(cpu: number, task: number): void {
    const i32 = this.q.i32;
    const b = this.q.rq(cpu);
    if (i32[b + RQ_NEXT_BUDDY] === task) i32[b + RQ_NEXT_BUDDY] = -1;
    if (i32[b + RQ_LAST_BUDDY] === task) i32[b + RQ_LAST_BUDDY] = -1;
  }

  /** wakeup_gran(se): sysctl_sched_wakeup_granularity in `task`'s virtual time (calc_delta_fair). */
  wakeupGran(task: number): number {
    return calcDeltaFair(this.wakeupGranularity, this.q.weight(task));
  }

  /** wakeup_preempt_entity(curr, se): -1 when se is not left of curr, 1 when more than wakeup_gran(se) left, else 0. */
  private wakeupPreemptEntity(curr: number, se: number): number {
    const vdiff = this.q.vruntime(curr) - this.q.vruntime(se);
    if (vdiff <= 0) return -1;
    return vdiff > this.wakeupGran(se) ? 1 : 0;
  }

  /**
   * enqueue_entity(ENQUEUE_WAKEUP) → place_entity(cfs_rq, se, 0), or for a new task
   * task_fork_fair → place_entity(cfs_rq, se, 1).
   */
  place(cpu: number, task: number, initial: boolean): void {
    const q = this.q;
    const f64 = q.f64;
    const vr = q.tf(task, TF_VRUNTIME);
    const mig = q.tw(task, T_MIGRATED);
    if (q.i32[mig]) {
      f64[vr] += this.minVruntime(cpu); // enqueue_entity: renorm for ENQUEUE_MIGRATED
      q.i32[mig] = 0;
    }
    const min = this.minVruntime(cpu);
    if (initial) {
      // place_entity(initial): START_DEBIT, vruntime += sched_vslice(cfs_rq, se)
      f64[vr] = min + calcDeltaFair(this.slice(cpu, task, false), q.weight(task));
      return;
    }
    // place_entity(!initial): "sleeps up to a single latency don't count"; GENTLE_FAIR_SLEEPERS halves it.
    const thresh = this.latency / 2;
    f64[vr] = Math.max(f64[vr], min - thresh);
  }

  /** dequeue_entity(DEQUEUE_SLEEP): clear_buddies, then update_min_vruntime without the task. */
  dequeue(cpu: number, task: number): void {
    this.clearBuddies(cpu, task);
    this.updateMinVruntime(cpu, task);
  }

  /** migrate_task_rq_fair (TASK_WAKING): vruntime -= the old queue's min_vruntime, once. */
  migrate(task: number, from: number): void {
    const q = this.q;
    const mig = q.tw(task, T_MIGRATED);
    if (q.i32[mig]) return; // already relative (moved twice before it was enqueued)
    q.f64[q.tf(task, TF_VRUNTIME)] -= this.minVruntime(from);
    q.i32[mig] = 1;
  }

  /** update_curr: vruntime += calc_delta_fair(delta_exec, curr); update_min_vruntime. Never asks to resched. */
  charge(cpu: number, task: number, delta: number): boolean {
    const q = this.q;
    q.f64[q.tf(task, TF_VRUNTIME)] += calcDeltaFair(delta, q.weight(task));
    this.updateMinVruntime(cpu, -1);
    return false;
  }

  /** set_next_entity: clear_buddies; prev_sum_exec_runtime = sum_exec_runtime. */
  setNext(cpu: number, task: number): void {
    const q = this.q;
    this.clearBuddies(cpu, task);
    q.f64[q.tf(task, TF_PREV_SUM_EXEC)] = q.f64[q.tf(task, TF_SUM_EXEC)];
  }

  /** pick_next_entity(cfs_rq, curr): the leftmost, or a buddy that is not unfair to it. */
  pick(cpu: number): number {
    const q = this.q;
    const curr = q.curr(cpu);
    let left = this.leftmost(cpu, curr);
    // "if (!left || (curr && entity_before(curr, left))) left = curr;" (curr only if still queued)
    if (q.isNormal(curr) && (left < 0 || q.vruntime(curr) < q.vruntime(left)) && q.queued(cpu, curr)) left = curr;
    if (left < 0) return -1;
    const next = q.i32[q.rq(cpu) + RQ_NEXT_BUDDY];
    // "Someone really wants this to run. If it's not unfair, run it."
    if (next >= 0 && this.wakeupPreemptEntity(next, left) < 1) return next;
    const last = q.i32[q.rq(cpu) + RQ_LAST_BUDDY];
    // "Prefer last buddy, try to return the CPU to a preempted task."
    if (last >= 0 && this.wakeupPreemptEntity(last, left) < 1) return last;
    return left;
  }

  /**
   * check_preempt_wakeup: preempt when wakeup_preempt_entity(curr, woken) == 1; the woken task
   * becomes the next buddy, and with sched_nr_latency tasks queued the preempted one the last.
   */
  wakeupPreempt(cpu: number, curr: number, woken: number): boolean {
    const q = this.q;
    const scale = this.nrRunning(cpu) >= SCHED_NR_LATENCY; // "int scale = cfs_rq->nr_running >= sched_nr_latency"
    if (this.wakeupPreemptEntity(curr, woken) !== 1) return false;
    q.i32[q.rq(cpu) + RQ_NEXT_BUDDY] = woken; // set_next_buddy(pse) (next_buddy_marked is never set: NEXT_BUDDY off)
    if (scale) q.i32[q.rq(cpu) + RQ_LAST_BUDDY] = curr; // LAST_BUDDY: set_last_buddy(se)
    return true;
  }

  /** 5.15's update_curr() reschedules nothing: preemption at wake-up is check_preempt_wakeup's alone. */
  wakeResched(_cpu: number, _curr: number, _expired: boolean, _queuedBefore: number): boolean {
    return false;
  }

  /** entity_tick → check_preempt_tick (only with more than one normal task queued). */
  tickPreempt(cpu: number, curr: number): boolean {
    if (this.nrRunning(cpu) <= 1) return false;
    const q = this.q;
    const ideal = this.slice(cpu, curr, true);
    const deltaExec = q.f64[q.tf(curr, TF_SUM_EXEC)] - q.f64[q.tf(curr, TF_PREV_SUM_EXEC)];
    if (deltaExec > ideal) {
      this.clearBuddies(cpu, curr);
      return true;
    }
    // "Ensure that a task that missed wakeup preemption by a narrow margin doesn't have to wait for a full slice."
    if (deltaExec < this.minGranularity) return false;
    const se = this.leftmost(cpu, curr); // __pick_first_entity: the tree holds every task but curr
    if (se < 0) return false;
    const delta = q.vruntime(curr) - q.vruntime(se);
    if (delta < 0) return false;
    return delta > ideal; // vruntime against wall-clock ideal_runtime: as the kernel compares them
  }

  /** CFS has no delayed dequeue: a sleeping task always leaves the queue. */
  delaySleep(_cpu: number, _task: number): boolean {
    return false;
  }
  finishDelayed(_cpu: number, _task: number): void {}
  requeueDelayed(_cpu: number, _task: number): void {}
}
