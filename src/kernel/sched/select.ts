/**
 * Where a woken task runs: select_task_rq() and the fair class's select_task_rq_fair() wakeup
 * path (kernel/sched/core.c, kernel/sched/fair.c), for tasks whose allowed CPUs (`--app-cpus`,
 * taskset / numactl -N) hold more than one CPU. Followed as in 5.15 and 6.x alike (the functions
 * below did not change in what is modelled here between the two):
 *
 *   select_task_rq:        one allowed CPU → that CPU (pinned, cpumask_any); else the class's choice
 *   select_task_rq_fair:   want_affine = !wake_wide(p) && this_cpu allowed; the first domain with
 *                          SD_WAKE_AFFINE spanning this_cpu and prev_cpu (every domain up to the
 *                          2-node NUMA level keeps it: node distance 21 ≤ node_reclaim_distance
 *                          30, sd_init) → wake_affine; then select_idle_sibling(p, prev, target)
 *   wake_affine:           WA_IDLE (wake_affine_idle), then WA_WEIGHT (wake_affine_weight), else prev
 *   wake_affine_idle:      this_cpu idle and sharing prev's LLC → prev if idle, else this_cpu;
 *                          sync and this_cpu runs one task → this_cpu; prev idle → prev; no choice
 *   wake_affine_weight:    this_eff_load = load(this) − load(current) if sync, × 100 × cap(prev);
 *                          prev_eff_load = load(prev) × (100 + (imbalance_pct − 100) / 2) × cap(this)
 *                          (+1 if sync); this_cpu if this_eff_load < prev_eff_load
 *   select_idle_sibling:   target idle → target; prev idle and sharing target's LLC → prev;
 *                          recent_used_cpu idle, allowed and sharing target's LLC → it; else
 *                          select_idle_cpu: the first idle CPU of (target's LLC ∩ allowed),
 *                          scanning from target + 1 and wrapping; else target
 *
 * Differences (documented in docs/architecture.md, "Placement"): loads are run-queue lengths
 * (nr_running × NICE_0_LOAD; PELT's decayed averages are not modelled), every capacity is
 * SCHED_CAPACITY_SCALE, wake_wide() is taken as false (qperf's 1:1 waker/wakee pairs never flip
 * enough), the scan is not limited (5.15's SIS_PROP, 6.x's SIS_UTIL cut it short on a busy LLC),
 * SMT idle-core search (select_idle_core/smt) and the per-CPU-kthread stacking rule are left
 * out, recent_used_cpu is kept per waking thread rather than per task, and there is no fork or
 * exec balancing at run time (tcp_lat's fork placement is src/workloads/tcp-lat.ts forkCpus).
 *
 * Context: any thread waking a task (softirq, task or hardirq context); reads run-queue words
 * racily, as the kernel does without the remote rq lock. Never allocates.
 */

/** What placement reads of the machine: racy snapshots, as the kernel's are. */
export interface PlacementView {
  /** available_idle_cpu(): the idle task runs and nothing is runnable. */
  idle(cpu: number): boolean;
  /** rq->nr_running (runnable and running tasks). */
  nrRunning(cpu: number): number;
}

/** sd->imbalance_pct of the MC and NUMA domains (sd_init: 117; 110 for SMT). */
export const IMBALANCE_PCT = 117;
/** "No choice" (nr_cpumask_bits). */
const NONE = -1;

export class TaskPlacement {
  /** Per CPU: the id of its last-level cache group (sd_llc_id). */
  private readonly llc: Int32Array;
  /** Per CPU: the CPUs of its LLC, in id order. */
  private readonly llcCpus: readonly (readonly number[])[];
  /** Per task: allowed CPUs as a byte mask over CPUs (row task · cpus), or none (not placed here). */
  private readonly allowed: Uint8Array;
  /** Per task: how many CPUs it may run on (0: not placed here). */
  private readonly nrAllowed: Int32Array;
  /** Per task: p->recent_used_cpu (this waking thread's view), -1 none. */
  private readonly recent: Int32Array;
  /** The ids of the tasks placed here (newidle.ts pulls only these). */
  readonly placedTasks: Int32Array;

  constructor(
    readonly cpus: number,
    /** The cache level's groups (src/hw/board.ts Topology.cache). */
    cache: readonly (readonly number[])[],
    /** Per task id: its allowed CPUs, or undefined for tasks placed elsewhere (bound kthreads, workers). */
    allowed: readonly (readonly number[] | undefined)[],
    private readonly view: PlacementView,
  ) {
    this.llc = new Int32Array(cpus).fill(-1);
    const groups: number[][] = Array.from({ length: cpus }, () => []);
    cache.forEach((g, i) => {
      for (const c of g) this.llc[c] = i;
    });
    for (let c = 0; c < cpus; c++) {
      if (this.llc[c] < 0) this.llc[c] = cache.length + c; // a CPU no group names: its own LLC
      for (let d = 0; d < cpus; d++) if (this.llc[d] === this.llc[c] || d === c) groups[c].push(d);
    }
    this.llcCpus = groups.map((g) => [...new Set(g)].sort((a, b) => a - b));
    this.allowed = new Uint8Array(allowed.length * cpus);
    this.nrAllowed = new Int32Array(allowed.length);
    allowed.forEach((list, t) => {
      if (!list) return;
      for (const c of list) this.allowed[t * cpus + c] = 1;
      this.nrAllowed[t] = list.length;
    });
    this.recent = new Int32Array(allowed.length).fill(-1);
    this.placedTasks = Int32Array.from(allowed.flatMap((list, t) => (list ? [t] : [])));
  }

  /** Is `task` placed here (its allowed mask given)? */
  placed(task: number): boolean {
    return task < this.nrAllowed.length && this.nrAllowed[task] > 0;
  }

  isAllowed(task: number, cpu: number): boolean {
    return this.allowed[task * this.cpus + cpu] === 1;
  }

  /** cpus_share_cache(). */
  sharesCache(a: number, b: number): boolean {
    return this.llc[a] === this.llc[b];
  }

  /**
   * select_task_rq() for a wakeup of `task` last run on `prev`, woken from `thisCpu` (-1: a
   * thread that owns no CPU: treated as not allowed). Returns the CPU to enqueue it on, or -1
   * when the task is not placed here (the caller leaves it where it is).
   */
  selectTaskRq(task: number, prev: number, thisCpu: number, sync: boolean): number {
    const n = this.nrAllowed[task] ?? 0;
    if (n === 0) return NONE;
    let cpu: number;
    if (n === 1) cpu = this.firstAllowed(task);
    else cpu = this.selectTaskRqFair(task, prev, thisCpu, sync);
    // is_cpu_allowed() else select_fallback_rq(): the first allowed CPU of prev's node is not
    // modelled; the first allowed CPU is.
    return this.isAllowed(task, cpu) ? cpu : this.firstAllowed(task);
  }

  /** select_task_rq_fair(), WF_TTWU path. */
  selectTaskRqFair(task: number, prev: number, thisCpu: number, sync: boolean): number {
    const wantAffine = thisCpu >= 0 && this.isAllowed(task, thisCpu); // && !wake_wide(p)
    let target = prev;
    // Every domain of thisCpu up to the machine spans prev and has SD_WAKE_AFFINE (see above).
    if (wantAffine && thisCpu !== prev) target = this.wakeAffine(prev, thisCpu, sync);
    return this.selectIdleSibling(task, prev, target);
  }

  /** wake_affine(): WA_IDLE, then WA_WEIGHT, else prev. */
  wakeAffine(prev: number, thisCpu: number, sync: boolean): number {
    let target = this.wakeAffineIdle(thisCpu, prev, sync);
    if (target === NONE) target = this.wakeAffineWeight(thisCpu, prev, sync);
    return target === NONE ? prev : target;
  }

  /** wake_affine_idle(). */
  wakeAffineIdle(thisCpu: number, prev: number, sync: boolean): number {
    const v = this.view;
    if (v.idle(thisCpu) && this.sharesCache(thisCpu, prev)) return v.idle(prev) ? prev : thisCpu;
    if (sync && v.nrRunning(thisCpu) === 1) return thisCpu;
    if (v.idle(prev)) return prev;
    return NONE;
  }

  /** wake_affine_weight(), loads as run-queue lengths, capacities equal. */
  wakeAffineWeight(thisCpu: number, prev: number, sync: boolean): number {
    const v = this.view;
    let thisLoad = v.nrRunning(thisCpu);
    // sync: current's load (one task, none when the idle task is current) is taken off: the
    // waker is about to sleep.
    if (sync && thisLoad > 0) thisLoad -= 1;
    thisLoad += 1; // the woken task's own load, on this side
    const thisEff = thisLoad * 100;
    let prevEff = v.nrRunning(prev) * (100 + (IMBALANCE_PCT - 100) / 2);
    if (sync) prevEff += 1;
    return thisEff < prevEff ? thisCpu : NONE;
  }

  /** select_idle_sibling(). */
  selectIdleSibling(task: number, prev: number, target: number): number {
    const v = this.view;
    if (v.idle(target)) return target;
    if (prev !== target && this.sharesCache(prev, target) && v.idle(prev)) return prev;
    const recent = this.recent[task];
    this.recent[task] = prev;
    if (
      recent >= 0 &&
      recent !== prev &&
      recent !== target &&
      this.sharesCache(recent, target) &&
      v.idle(recent) &&
      this.isAllowed(task, recent)
    )
      return recent;
    const i = this.selectIdleCpu(task, target);
    return i >= 0 ? i : target;
  }

  /** select_idle_cpu(): the first idle CPU of target's LLC that the task may use, from target + 1, wrapping. */
  selectIdleCpu(task: number, target: number): number {
    const llc = this.llcCpus[target];
    const start = llc.indexOf(target);
    for (let k = 1; k <= llc.length; k++) {
      const c = llc[(start + k) % llc.length];
      if (this.isAllowed(task, c) && this.view.idle(c)) return c;
    }
    return NONE;
  }

  private firstAllowed(task: number): number {
    const base = task * this.cpus;
    for (let c = 0; c < this.cpus; c++) if (this.allowed[base + c]) return c;
    return NONE;
  }
}

/**
 * The placement of a machine whose plan gives some tasks allowed CPUs (--app-cpus); undefined
 * when none has (every task pinned). Context: a thread's start-up (Runtime).
 */
export function taskPlacementOf(
  cpus: number,
  cache: readonly (readonly number[])[],
  tasks: readonly { readonly allowed?: readonly number[] }[],
  view: PlacementView,
): TaskPlacement | undefined {
  if (!tasks.some((t) => t.allowed)) return undefined;
  return new TaskPlacement(
    cpus,
    cache,
    tasks.map((t) => t.allowed),
    view,
  );
}
