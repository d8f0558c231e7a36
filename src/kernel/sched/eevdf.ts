/**
 * The fair class as EEVDF (kernel/sched/fair.c since 6.6), one FairPolicy (fair.ts), in two rule
 * sets (EevdfRules): 6.6–6.11 (the 6.9 profile) and 6.18 (the 6.18 profile, the kernel this
 * project's host runs; docs/twin.md).
 *
 * Emulates, in simplified form:
 *   - avg_vruntime V; a task is eligible when its vruntime ≤ V; the eligible task with the
 *     earliest virtual deadline (vruntime + base_slice · 1024 / weight) runs; a running task
 *     past its deadline gets a new one and, with another task queued, the CPU is rescheduled;
 *     base_slice is 0.75 ms (0.70 ms in 6.18) scaled by the CPU count as update_sysctl() does;
 *   - lag kept across sleep (vlag = V − vruntime at dequeue, clamped to the kernel's
 *     ±calc_delta_fair(max(2 · slice, TICK_NSEC)), update_entity_lag), restored at wakeup
 *     scaled by (W + w) / W as place_entity() does (PLACE_LAG), none on an empty queue;
 *   - wakeup preemption when the woken task is the one EEVDF would pick now; the running task
 *     keeps the CPU only with a deadline strictly before the best queued one's (a tie goes to
 *     the queued task, as __pick_eevdf()'s entity_before() decides);
 *   - 6.6–6.11 RUN_TO_PARITY: a running task that is still eligible and has not got a new
 *     deadline since it was picked is picked again, so a wakeup does not preempt it (the
 *     deadline stashed in vlag at the pick);
 *   - 6.18 (features.h as in 6.18.2): RUN_TO_PARITY by set_protect_slice() (vprot = the deadline
 *     at the pick, not refreshed by update_deadline(); equal slices here, so PREEMPT_SHORT never
 *     applies) and update_curr()'s resched whenever two or more are queued and the running task
 *     is past its deadline or its protection (`if (resched || !protect_slice(curr))`);
 *     DELAY_DEQUEUE: a task that goes to sleep while not eligible stays queued as delayed,
 *     competing, until it is picked (reaped: dequeued, DELAY_ZERO drops positive lag) or woken
 *     (requeue_delayed_entity(): with positive lag it is placed again at V with none, else it
 *     keeps its place). rq.ts keeps the queue membership and the flag (T_DELAYED).
 * Differences: no PLACE_DEADLINE_INITIAL, no NEXT_BUDDY, no PLACE_REL_DEADLINE (no migration of a
 * queued task); slices end only at ticks and wakeups, as in a kernel without HRTICK; an empty
 * queue's V is the last V seen there (CPUF_V_HINT), where the kernel's avg_vruntime() of an empty
 * cfs_rq is its min_vruntime; V and eligibility in doubles, where the kernel's integers round.
 *
 * Context: under the CPU's rq lock (rq.ts); never allocates.
 */
import { CPUF_V_HINT } from '../../hw/layout.js';
import { calcDeltaFair, type FairParams, type FairPolicy, type RqView, sysctlFactor, tickNsec } from './fair.js';
import { TF_DEADLINE, TF_VLAG, TF_VPROT, TF_VRUNTIME } from './layout.js';

/**
 * normalized_sysctl_sched_base_slice: 0.75 ms, EEVDF's request size r_i (fair.c, 6.6 to 6.14;
 * "default: 0.75 msec * (1 + ilog(ncpus))": update_sysctl() does SET_SYSCTL(sched_base_slice)
 * with get_update_sysctl_factor(), see sysctlFactor). 0.7 ms after the 2025 change "sched:
 * Reduce the default slice to avoid tasks getting an extra tick"; not modelled.
 */
export const BASE_SLICE_NS = 750_000;

/**
 * normalized_sysctl_sched_base_slice in 6.18: 0.70 ms, "default: 0.70 msec * (1 + ilog(ncpus))"
 * (fair.c of 6.18.2; "sched: Reduce the default slice to avoid tasks getting an extra tick",
 * 2ae891b82695, 6.15, backported to 6.12.y).
 */
export const BASE_SLICE_NS_618 = 700_000;

/** What differs between the EEVDF releases the profiles model. */
export interface EevdfRules {
  readonly name: 'eevdf' | 'eevdf-6.18';
  /** normalized_sysctl_sched_base_slice. */
  readonly baseSliceNs: number;
  /**
   * RUN_TO_PARITY as 6.6–6.11 had it (`stash`: curr->vlag == curr->deadline, the deadline at the
   * pick) or as 6.17+ (`vprot`: set_protect_slice(), protect_slice(), and update_curr()'s resched
   * when the protection is over).
   */
  readonly parity: 'stash' | 'vprot';
  /** DELAY_DEQUEUE and DELAY_ZERO (6.12+). */
  readonly delayDequeue: boolean;
}

/** 6.6–6.11 (the 6.9 profile): features.h of 6.9, PLACE_LAG and RUN_TO_PARITY. */
export const EEVDF_6_9: EevdfRules = {
  name: 'eevdf',
  baseSliceNs: BASE_SLICE_NS,
  parity: 'stash',
  delayDequeue: false,
};
/** 6.18 (features.h of 6.18.2: PLACE_LAG, RUN_TO_PARITY, PREEMPT_SHORT, DELAY_DEQUEUE, DELAY_ZERO). */
export const EEVDF_6_18: EevdfRules = {
  name: 'eevdf-6.18',
  baseSliceNs: BASE_SLICE_NS_618,
  parity: 'vprot',
  delayDequeue: true,
};

export class EevdfPolicy implements FairPolicy {
  readonly name: 'eevdf' | 'eevdf-6.18';

  /** sysctl_sched_base_slice after update_sysctl(): BASE_SLICE_NS × (1 + ilog2(min(cpus, 8))). */
  readonly slice: number;
  /** TICK_NSEC at the machine's HZ: the lag clamp's floor. */
  readonly tickNs: number;

  constructor(
    private readonly q: RqView,
    p: FairParams,
    readonly rules: EevdfRules = EEVDF_6_9,
  ) {
    this.name = rules.name;
    this.slice = rules.baseSliceNs * sysctlFactor(p.cpus);
    this.tickNs = tickNsec(p.hz);
  }

  initCpu(_cpu: number): void {}

  /** Average vruntime V of the normal tasks queued on `cpu` (weights as in avg_vruntime()). */
  avgVruntime(cpu: number, except = -1): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let wsum = 0;
    let vsum = 0;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (!q.isNormal(t) || t === except) continue;
      const w = q.weight(t);
      wsum += w;
      vsum += w * q.vruntime(t);
    }
    return wsum > 0 ? vsum / wsum : q.f64[q.cf(cpu, CPUF_V_HINT)];
  }

  /** W: the summed weight of the normal tasks queued on `cpu`, the running one included
   *  (place_entity's `cfs_rq->avg_load` plus curr's weight when curr is on the queue). */
  queueWeight(cpu: number, except = -1): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let w = 0;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (q.isNormal(t) && t !== except) w += q.weight(t);
    }
    return w;
  }

  /** entity_eligible(): `task`'s vruntime is at or left of V (vruntime_eligible's `avg >= key · load`). */
  eligible(cpu: number, task: number): boolean {
    return this.q.vruntime(task) <= this.avgVruntime(cpu) + 1e-6;
  }

  /**
   * place_entity() (fair.c, 6.6+), PLACE_LAG: vruntime = V − lag, where the saved vlag is scaled
   * by (W + w) / W so that the task's own weight joining the average does not eat its lag:
   *     if (sched_feat(PLACE_LAG) && cfs_rq->nr_running) { ... lag = se->vlag; ...
   *         lag *= load + scale_load_down(se->load.weight); ... lag = div_s64(lag, load); }
   *     se->vruntime = vruntime - lag;
   * On an empty queue (nr_running 0) the lag is dropped. Then a fresh deadline, vd_i = ve_i + r_i/w_i.
   */
  place(cpu: number, task: number, _initial: boolean): void {
    this.placeAmong(cpu, task, -1);
  }

  /** place_entity() among `cpu`'s queued tasks but `except` (a task placed again where it is queued). */
  private placeAmong(cpu: number, task: number, except: number): void {
    const q = this.q;
    const f64 = q.f64;
    const w = q.weight(task);
    const load = this.queueWeight(cpu, except);
    const lag = load > 0 ? (f64[q.tf(task, TF_VLAG)] * (load + w)) / load : 0;
    const v = this.avgVruntime(cpu, except) - lag;
    f64[q.tf(task, TF_VRUNTIME)] = v;
    f64[q.tf(task, TF_DEADLINE)] = v + calcDeltaFair(this.slice, w); // place_entity: vd_i = ve_i + r_i/w_i
  }

  /** Save the task's lag, clamped as in update_entity_lag; with nothing left queued, V stays here. */
  dequeue(cpu: number, task: number): void {
    const q = this.q;
    const f64 = q.f64;
    const V = this.avgVruntime(cpu);
    // update_entity_lag (fair.c, 6.6+): limit = calc_delta_fair(max_t(u64, 2*se->slice, TICK_NSEC), se)
    const limit = this.lagLimit(q.weight(task));
    const lag = V - f64[q.tf(task, TF_VRUNTIME)];
    f64[q.tf(task, TF_VLAG)] = Math.max(-limit, Math.min(limit, lag));
    f64[q.cf(cpu, CPUF_V_HINT)] = V;
  }

  /** The lag clamp of an entity of weight `w` (update_entity_lag). */
  lagLimit(w: number): number {
    return calcDeltaFair(Math.max(2 * this.slice, this.tickNs), w);
  }

  /** Lag is relative to V: nothing to renormalise. */
  migrate(_task: number, _from: number): void {}

  /** vruntime += delta · 1024 / w; past the deadline: a new one (update_deadline), resched. */
  charge(_cpu: number, task: number, delta: number): boolean {
    const q = this.q;
    const f64 = q.f64;
    const w = q.weight(task);
    f64[q.tf(task, TF_VRUNTIME)] += calcDeltaFair(delta, w); // update_curr
    const v = f64[q.tf(task, TF_VRUNTIME)];
    // 6.18 update_curr(): `if (resched || !protect_slice(curr)) resched_curr_lazy(rq)` (rq.ts
    // reschedules only with two or more queued: `if (cfs_rq->nr_queued == 1) return;`).
    const unprotected = this.rules.parity === 'vprot' && !this.protectSlice(task);
    if (v < f64[q.tf(task, TF_DEADLINE)]) return unprotected; // update_deadline: (s64)(vruntime - deadline) < 0
    f64[q.tf(task, TF_DEADLINE)] = v + calcDeltaFair(this.slice, w);
    return true;
  }

  /**
   * set_next_entity(). 6.6–6.11, RUN_TO_PARITY's "HACK, stash a copy of deadline at the point of
   * pick in vlag, which isn't used until dequeue". 6.18, set_protect_slice(): vprot = the deadline
   * (`slice = min(cfs_rq_min_slice(), se->slice)` is se->slice: every task here has the base
   * slice), not refreshed when update_deadline() gives a new one.
   */
  setNext(_cpu: number, task: number): void {
    const q = this.q;
    q.f64[q.tf(task, this.rules.parity === 'stash' ? TF_VLAG : TF_VPROT)] = q.f64[q.tf(task, TF_DEADLINE)];
  }

  /** pick_eevdf among queued normal tasks (delayed ones included): eligible (vruntime ≤ V), earliest deadline. */
  pick(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    const V = this.avgVruntime(cpu);
    const curr = q.curr(cpu);
    const currRuns = q.isNormal(curr) && q.vruntime(curr) <= V + 1e-6 && q.queued(cpu, curr);
    if (this.rules.parity === 'stash') {
      // RUN_TO_PARITY: "Once selected, run a task until it either becomes non-eligible or until
      // it gets a new slice." (curr->vlag == curr->deadline: the stash of setNext, still valid)
      if (currRuns && q.f64[q.tf(curr, TF_VLAG)] === q.f64[q.tf(curr, TF_DEADLINE)]) return curr;
    } else {
      // __pick_eevdf(): "if (cfs_rq->nr_queued == 1) return curr && curr->on_rq ? curr : se;",
      // then `if (curr && protect && protect_slice(curr)) return curr;` for an eligible curr.
      const only = this.onlyNormal(cpu);
      if (only >= 0) return only;
      if (currRuns && this.protectSlice(curr)) return curr;
    }
    // The tree (every queued entity but curr, which the kernel keeps out of it while it runs):
    // the eligible one with the earliest deadline; among equal deadlines the one queued first
    // (rb_add_cached puts an equal key to the right).
    let best = -1;
    let bestDl = Number.POSITIVE_INFINITY;
    let fallback = -1;
    let fallbackV = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (!q.isNormal(t)) continue;
      const v = q.vruntime(t);
      if (v < fallbackV) {
        fallbackV = v;
        fallback = t;
      }
      if (t === curr) continue;
      if (v <= V + 1e-6) {
        const dl = q.f64[q.tf(t, TF_DEADLINE)];
        if (dl < bestDl) {
          bestDl = dl;
          best = t;
        }
      }
    }
    // __pick_eevdf()'s end: `if (!best || (curr && entity_before(curr, best))) best = curr;`,
    // entity_before() being `(s64)(a->deadline - b->deadline) < 0` ("Tiebreak on vruntime seems
    // unnecessary since it can hardly happen"): the running task keeps the CPU only with a
    // deadline strictly before the best queued one's; on a tie the queued task wins. The tie is
    // not rare here: a task woken with no lag is placed at V, which beside one running task is
    // that task's vruntime, and a running task whose deadline the wake-up's update_curr() just
    // renewed has the same deadline, vruntime + the same slice.
    if (currRuns && (best < 0 || q.f64[q.tf(curr, TF_DEADLINE)] < bestDl)) return curr;
    return best >= 0 ? best : fallback;
  }

  /** check_preempt_wakeup_fair (6.6–6.11): preempt iff pick_eevdf() returns the woken task. */
  wakeupPreempt(cpu: number, _curr: number, woken: number): boolean {
    return this.pick(cpu) === woken;
  }

  /**
   * update_curr() in the wake-up path reschedules the running task even when the woken one does
   * not preempt it; the pick may then choose a third task (a second hog beside the running one).
   * Only enqueue_entity()'s call can: it runs before the woken task is counted (`queuedBefore`),
   * and check_preempt_wakeup_fair()'s second call finds `delta_exec <= 0` and returns at once (the
   * rq clock is read once per wake-up, update_rq_clock() in ttwu, and the first call moved
   * exec_start to it). So a lone running task is never rescheduled this way. 6.6–6.11:
   * update_deadline() gave `curr` a new deadline and `if (cfs_rq->nr_running > 1)
   * resched_curr()`. 6.18: `if (cfs_rq->nr_queued == 1) return; if (resched ||
   * !protect_slice(curr)) resched_curr_lazy(rq);` (PREEMPT_LAZY's flag is honoured on the return
   * to user space: at once for a task there). ftrace on the host (6.18, docs/twin.md) shows both
   * halves: beside two hogs a wake-up that switches hog to hog; beside one, wake-ups of a task
   * that was dequeued set no need-resched flag.
   */
  wakeResched(_cpu: number, curr: number, expired: boolean, queuedBefore: number): boolean {
    if (queuedBefore <= 1) return false;
    if (this.rules.parity === 'stash') return expired;
    return expired || !this.protectSlice(curr);
  }

  /** 6.17+ protect_slice(): `task`'s vruntime is still short of the vprot set at its pick. */
  private protectSlice(task: number): boolean {
    const q = this.q;
    return q.f64[q.tf(task, TF_VPROT)] > q.vruntime(task);
  }

  /** No tick check of its own: the deadline check is in update_curr (charge). */
  tickPreempt(_cpu: number, _curr: number): boolean {
    return false;
  }

  /** The one normal task queued on `cpu` when there is exactly one (nr_queued == 1), else -1. */
  private onlyNormal(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let one = -1;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (!q.isNormal(t)) continue;
      if (one >= 0) return -1;
      one = t;
    }
    return one;
  }

  /**
   * dequeue_entity() (6.12+): `if (sched_feat(DELAY_DEQUEUE) && delay && !entity_eligible(cfs_rq,
   * se)) { ... set_delayed(se); return false; }`: a sleeper right of V stays queued.
   */
  delaySleep(cpu: number, task: number): boolean {
    return this.rules.delayDequeue && !this.eligible(cpu, task);
  }

  /**
   * pick_next_entity() picked a delayed task: dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED)
   * saves its lag (update_entity_lag) and finish_delayed_dequeue_entity() drops it if positive:
   * `if (sched_feat(DELAY_ZERO) && se->vlag > 0) se->vlag = 0;`.
   */
  finishDelayed(cpu: number, task: number): void {
    this.dequeue(cpu, task);
    const f64 = this.q.f64;
    const vl = this.q.tf(task, TF_VLAG);
    if (f64[vl] > 0) f64[vl] = 0;
  }

  /**
   * requeue_delayed_entity() (6.12+, DELAY_ZERO): `update_entity_lag(cfs_rq, se); if (se->vlag >
   * 0) { ... se->vlag = 0; place_entity(cfs_rq, se, 0); ... }`: woken with positive lag, the task
   * is placed at V (of the others) with none and a new deadline; otherwise it keeps its place.
   */
  requeueDelayed(cpu: number, task: number): void {
    const q = this.q;
    const f64 = q.f64;
    const V = this.avgVruntime(cpu);
    const limit = this.lagLimit(q.weight(task));
    const lag = Math.max(-limit, Math.min(limit, V - f64[q.tf(task, TF_VRUNTIME)]));
    f64[q.tf(task, TF_VLAG)] = lag;
    if (lag <= 0) return;
    f64[q.tf(task, TF_VLAG)] = 0;
    this.placeAmong(cpu, task, task);
  }
}
