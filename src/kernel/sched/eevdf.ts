/**
 * The fair class as EEVDF (kernel/sched/fair.c since 6.6), one FairPolicy (fair.ts).
 *
 * Emulates, in simplified form:
 *   - avg_vruntime V; a task is eligible when its vruntime ≤ V; the eligible task with the
 *     earliest virtual deadline (vruntime + base_slice · 1024 / weight) runs; a running task
 *     past its deadline gets a new one and, with another task queued, the CPU is rescheduled;
 *     base_slice is 0.75 ms scaled by the CPU count as the kernel's update_sysctl() does;
 *   - lag kept across sleep (vlag = V − vruntime at dequeue, clamped to the kernel's
 *     ±calc_delta_fair(max(2 · slice, TICK_NSEC)), update_entity_lag), restored at wakeup
 *     scaled by (W + w) / W as place_entity() does (PLACE_LAG), none on an empty queue;
 *   - wakeup preemption when the woken task is the one EEVDF would pick now;
 *   - RUN_TO_PARITY (on in 6.6–6.11): a running task that is still eligible and has not got a
 *     new deadline since it was picked is picked again, so a wakeup does not preempt it.
 * Differences: no PLACE_DEADLINE_INITIAL, no NEXT_BUDDY; slices end only at ticks and wakeups,
 * as in a kernel without HRTICK; an empty queue's V is the last V seen there (CPUF_V_HINT), where
 * the kernel's avg_vruntime() of an empty cfs_rq is its min_vruntime.
 *
 * Context: under the CPU's rq lock (rq.ts); never allocates.
 */
import { CPUF_V_HINT } from '../../hw/layout.js';
import { calcDeltaFair, type FairParams, type FairPolicy, type RqView, sysctlFactor, tickNsec } from './fair.js';
import { TF_DEADLINE, TF_VLAG, TF_VRUNTIME } from './layout.js';

/**
 * normalized_sysctl_sched_base_slice: 0.75 ms, EEVDF's request size r_i (fair.c, 6.6 to 6.14;
 * "default: 0.75 msec * (1 + ilog(ncpus))": update_sysctl() does SET_SYSCTL(sched_base_slice)
 * with get_update_sysctl_factor(), see sysctlFactor). 0.7 ms after the 2025 change "sched:
 * Reduce the default slice to avoid tasks getting an extra tick"; not modelled.
 */
export const BASE_SLICE_NS = 750_000;

export class EevdfPolicy implements FairPolicy {
  readonly name = 'eevdf';

  /** sysctl_sched_base_slice after update_sysctl(): BASE_SLICE_NS × (1 + ilog2(min(cpus, 8))). */
  readonly slice: number;
  /** TICK_NSEC at the machine's HZ: the lag clamp's floor. */
  readonly tickNs: number;

  constructor(
    private readonly q: RqView,
    p: FairParams,
  ) {
    this.slice = BASE_SLICE_NS * sysctlFactor(p.cpus);
    this.tickNs = tickNsec(p.hz);
  }

  initCpu(_cpu: number): void {}

  /** Average vruntime V of the normal tasks queued on `cpu` (weights as in avg_vruntime()). */
  avgVruntime(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let wsum = 0;
    let vsum = 0;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (!q.isNormal(t)) continue;
      const w = q.weight(t);
      wsum += w;
      vsum += w * q.vruntime(t);
    }
    return wsum > 0 ? vsum / wsum : q.f64[q.cf(cpu, CPUF_V_HINT)];
  }

  /** W: the summed weight of the normal tasks queued on `cpu`, the running one included
   *  (place_entity's `cfs_rq->avg_load` plus curr's weight when curr is on the queue). */
  queueWeight(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    let w = 0;
    for (let i = 0; i < n; i++) {
      const t = q.queuedAt(cpu, i);
      if (q.isNormal(t)) w += q.weight(t);
    }
    return w;
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
    const q = this.q;
    const f64 = q.f64;
    const w = q.weight(task);
    const load = this.queueWeight(cpu);
    const lag = load > 0 ? (f64[q.tf(task, TF_VLAG)] * (load + w)) / load : 0;
    const v = this.avgVruntime(cpu) - lag;
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
    if (v < f64[q.tf(task, TF_DEADLINE)]) return false; // update_deadline: (s64)(vruntime - deadline) < 0
    f64[q.tf(task, TF_DEADLINE)] = v + calcDeltaFair(this.slice, w);
    return true;
  }

  /** set_next_entity, RUN_TO_PARITY's "HACK, stash a copy of deadline at the point of pick in
   *  vlag, which isn't used until dequeue". */
  setNext(_cpu: number, task: number): void {
    const q = this.q;
    q.f64[q.tf(task, TF_VLAG)] = q.f64[q.tf(task, TF_DEADLINE)];
  }

  /** pick_eevdf among queued normal tasks: eligible (vruntime ≤ V), earliest deadline. */
  pick(cpu: number): number {
    const q = this.q;
    const n = q.queueLen(cpu);
    const V = this.avgVruntime(cpu);
    const curr = q.curr(cpu);
    // RUN_TO_PARITY: "Once selected, run a task until it either becomes non-eligible or until
    // it gets a new slice." (curr->vlag == curr->deadline: the stash of setNext, still valid)
    if (
      q.isNormal(curr) &&
      q.vruntime(curr) <= V + 1e-6 &&
      q.f64[q.tf(curr, TF_VLAG)] === q.f64[q.tf(curr, TF_DEADLINE)] &&
      q.queued(cpu, curr)
    )
      return curr;
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
      if (v <= V + 1e-6) {
        const dl = q.f64[q.tf(t, TF_DEADLINE)];
        if (dl < bestDl) {
          bestDl = dl;
          best = t;
        }
      }
    }
    return best >= 0 ? best : fallback;
  }

  /** check_preempt_wakeup_fair (6.6–6.11): preempt iff pick_eevdf() returns the woken task. */
  wakeupPreempt(cpu: number, _curr: number, woken: number): boolean {
    return this.pick(cpu) === woken;
  }

  /** No tick check of its own: the deadline check is in update_curr (charge). */
  tickPreempt(_cpu: number, _curr: number): boolean {
    return false;
  }
}
