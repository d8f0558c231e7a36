/**
 * Workqueues (kernel/workqueue.c): the system workqueues and alloc_workqueue, queue_work_on
 * with its PENDING bit, the bound per-CPU pools (normal nice 0, highpri nice -20), the unbound
 * pool with affinity scopes, WQ_BH pools run from softirq, and process_one_work.
 *
 * Emulates: queue_work_on returns false while PENDING, and PENDING is cleared before the
 * function runs; a bound pool's worker is woken only when none is running (need_more_worker's
 * nr_running check, paired with the worker's leave-then-recheck in src/machine/tasks.ts);
 * unbound placement: an idle CPU of the queueing CPU's pod (local first), else, unless strict,
 * any idle CPU, else the least loaded CPU of the pod; WQ_BH pools run from HI/TASKLET softirq
 * with BH_WORKER_RESTARTS / BH_WORKER_JIFFIES.
 * Differences: no concurrency management (deferred work never sleeps), one worker per bound
 * pool, one unbound pool whose pod is applied when a worker is placed (not a pool per pod);
 * with `kthreads: 'cpu'` (the default) unbound workers are hosted on CPU threads, so the one
 * woken is one hosted on the CPU chosen rather than the first idle one (kickUnbound).
 *
 * Context: queue_work_on from any context on the owner of a CPU; workers' pops from task
 * context, BH pools' from softirq. Never allocates on those paths.
 */
import type { AffinityScope, SystemWorkqueue, Work, Workqueue, WorkqueueAttrs } from '../api/types.js';
import { WORK_CPU_UNBOUND } from '../api/types.js';
import type { MachinePlan, Topology } from '../hw/board.js';
import { CpuCounter, Softirq, TaskState } from '../hw/layout.js';
import { LINE_WORDS } from '../shm/layout.js';
import { LOCK_WORDS, ShmLock } from '../shm/lock.js';
import { MpscRing } from '../shm/ring.js';
import type { CpuContext } from './context.js';
import type { Mechanism } from './mechanism.js';
import { describeArg, KernelBug, MAX_OBJECTS, O_ARG, O_STATE, type Objects, ObjState } from './objects.js';
import { type KernelProfile, kernelProfile } from './profiles.js';
import type { Scheduler } from './sched/core.js';
import type { Softirqs } from './softirq.js';

// ---------------------------------------------------------------------------------------------
// Worker pools.
// ---------------------------------------------------------------------------------------------
/** A pool: its lock line (pool->lock: unbound pools' consumers pop under it), then a line of
 *  words written by every CPU. */
export const POOL_WORDS = LOCK_WORDS + LINE_WORDS;
/** R: workers of this pool awake and processing (workqueue.c's nr_running). A producer on a
 *  bound pool wakes a worker only when it reads 0 after publishing; a worker decrements it, then
 *  re-checks the worklist before sleeping (the Dekker pair that keeps work from being stranded).
 *  Unbound pools keep the count but never read it (kickUnbound: WORKER_UNBOUND workers are not
 *  counted in the kernel's nr_running). Writers: the pool's workers (Atomics.add/sub); reader:
 *  queue_work on any CPU (Atomics.load, after the worklist's publish). */
export const P_NR_RUNNING = LOCK_WORDS;

// Pool numbering (the plan's pool ids, src/machine/plan.ts): per CPU c, 2c = bound normal and 2c+1 =
// bound highpri; 2N the unbound pool; 2N+1+2c (+1) the BH pools of CPU c (normal, highpri).
export function boundPool(cpu: number, highpri: boolean): number {
  return 2 * cpu + (highpri ? 1 : 0);
}
export function bhPool(cpus: number, cpu: number, highpri: boolean): number {
  return 2 * cpus + 1 + 2 * cpu + (highpri ? 1 : 0);
}

/** BH_WORKER_RESTARTS / BH_WORKER_JIFFIES (kernel/workqueue.c, 6.9): items and time per BH pool run. */
export const BH_WORKER_RESTARTS = 10;
export const BH_WORKER_NS = 2_000_000;

export interface WorkqueueEntry extends Workqueue {
  pods: (readonly number[])[]; // per CPU: the CPUs of its affinity scope
}

const SYSTEM_WQ_ATTRS: Record<SystemWorkqueue, WorkqueueAttrs> = {
  system_wq: {},
  system_highpri_wq: { highpri: true },
  system_unbound_wq: { unbound: true },
  system_bh_wq: { bh: true },
  system_bh_highpri_wq: { bh: true, highpri: true },
};
const KNOWN_ATTRS = ['unbound', 'highpri', 'bh', 'affinityScope', 'affinityStrict'];
const SCOPES: AffinityScope[] = ['cpu', 'smt', 'cache', 'numa', 'system'];

export class Workqueues {
  readonly list: WorkqueueEntry[] = [];
  private readonly poolLists: MpscRing[] = [];
  private readonly poolLocks: ShmLock[] = [];
  /** Base of the `pools` region (POOL_WORDS per pool). */
  private readonly poolBase: number;

  constructor(
    private readonly ctx: CpuContext,
    private readonly plan: MachinePlan,
    private readonly topology: Topology,
    private readonly objects: Objects,
    private readonly softirqs: Softirqs,
    private readonly sched: Scheduler,
    lockSpins: number,
    private readonly profile: KernelProfile = kernelProfile(),
  ) {
    this.poolBase = ctx.R.parts.pools[0];
    for (let p = 0; p < plan.pools.length; p++) {
      this.poolLists.push(new MpscRing(ctx.i32, ctx.R.parts.poolList[p]));
      this.poolLocks.push(new ShmLock(ctx.i32, this.pw(p, 0), lockSpins));
    }
    // 6.9: tasklet_hi_action / tasklet_action then run the BH pools (workqueue_softirq_action).
    softirqs.open(Softirq.Hi, (c) => this.bhPoolRun(c, true));
    softirqs.open(Softirq.Tasklet, (c) => this.bhPoolRun(c, false));
  }

  /** Index of word `word` (P_*) of pool `pool`. */
  pw(pool: number, word: number): number {
    return this.poolBase + pool * POOL_WORDS + word;
  }

  // --- creation (setup) ---------------------------------------------------------------------

  system(name: SystemWorkqueue): Workqueue {
    if (!(name in SYSTEM_WQ_ATTRS))
      throw new Error(`unknown system workqueue "${name}" (known: ${Object.keys(SYSTEM_WQ_ATTRS).join(', ')})`);
    const found = this.list.find((w) => w.name === name);
    return found ?? this.alloc(name, SYSTEM_WQ_ATTRS[name]);
  }

  alloc(name: string, given: WorkqueueAttrs | undefined): Workqueue {
    const a = given ?? {};
    if (typeof a !== 'object')
      throw new Error(`allocWorkqueue("${name}"): attrs must be an object (got ${describeArg(a)})`);
    for (const key of Object.keys(a))
      if (!KNOWN_ATTRS.includes(key))
        throw new Error(`allocWorkqueue("${name}"): unknown attribute ${key} (known: ${KNOWN_ATTRS.join(', ')})`);
    const scope: AffinityScope = a.affinityScope ?? 'cache';
    if (!SCOPES.includes(scope))
      throw new Error(`workqueue "${name}": affinityScope must be one of ${SCOPES.join(', ')} (got ${String(scope)})`);
    if (a.bh && a.unbound) throw new Error(`workqueue "${name}": WQ_BH and WQ_UNBOUND cannot be combined`);
    if (a.bh && !this.profile.wqBh)
      throw new Error(
        `workqueue "${name}": WQ_BH workqueues exist from Linux 6.9 on, and this run's kernel is ${this.profile.name}; run it with --kernel 6.9, or use a tasklet`,
      );
    const attrs = {
      unbound: !!a.unbound,
      highpri: !!a.highpri,
      bh: !!a.bh,
      affinityScope: scope,
      affinityStrict: !!a.affinityStrict,
    };
    const pods: (readonly number[])[] = [];
    for (let c = 0; c < this.ctx.nrCpus; c++) pods.push(this.podOf(scope, c));
    const wq: WorkqueueEntry = { kind: 'workqueue', id: this.list.length, name, attrs, pods };
    this.list.push(wq);
    return wq;
  }

  private podOf(scope: AffinityScope, cpu: number): readonly number[] {
    if (scope === 'cpu') return [cpu];
    if (scope === 'system') return Array.from({ length: this.ctx.nrCpus }, (_, i) => i);
    return this.topology[scope].find((g) => g.includes(cpu)) ?? [cpu];
  }

  /** A workqueue argument must be one s.workqueue() or s.allocWorkqueue() returned. */
  check(call: string, wq: { id?: unknown } | undefined): void {
    if (typeof wq?.id === 'number' && this.list[wq.id] === wq) return;
    throw new Error(
      `${call}: expected a workqueue returned by s.workqueue() or s.allocWorkqueue() in setup() (got ${describeArg(wq)})`,
    );
  }

  // --- queueing -----------------------------------------------------------------------------

  /** queue_work_on(): false (nothing queued) while `work` is PENDING. */
  queueOn(cpu: number, wq: Workqueue, work: Work): boolean {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const st = this.objects.ow(work.id, O_STATE);
    if ((Atomics.or(i32, st, ObjState.Pending) & ObjState.Pending) !== 0) {
      ctx.count(CpuCounter.works_refused);
      return false;
    }
    const here = ctx.cpu;
    const target = cpu === WORK_CPU_UNBOUND ? here : cpu;
    if (cpu !== WORK_CPU_UNBOUND) this.objects.checkCpu(cpu, 'queue_work_on');
    const a = wq.attrs;
    let pool: number;
    if (a.bh) {
      if (target !== here) {
        Atomics.and(i32, st, ~ObjState.Pending);
        throw new KernelBug(
          `queue_work_on(${cpu}, ${wq.name}): a WQ_BH workqueue runs on the queueing CPU only (this is CPU ${here})`,
        );
      }
      pool = bhPool(ctx.nrCpus, here, a.highpri);
    } else if (a.unbound) {
      pool = this.plan.unboundPool;
    } else {
      pool = boundPool(target, a.highpri);
    }
    Atomics.store(i32, this.objects.ow(work.id, O_ARG), pool);
    const list = this.poolLists[pool];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug(`worklist of pool ${pool} is full: a PENDING work item would be lost`);
    i32[idx] = work.id;
    list.publish();
    ctx.count(CpuCounter.works_queued);
    if (a.bh) this.softirqs.raise(a.highpri ? Softirq.Hi : Softirq.Tasklet);
    else if (a.unbound) this.kickUnbound(pool, here, wq as WorkqueueEntry);
    else if (Atomics.load(i32, this.pw(pool, P_NR_RUNNING)) === 0) this.sched.wakeUp(this.plan.pools[pool].workers[0]);
    return true;
  }

  /** work_pending(). */
  pending(work: Work): boolean {
    return (Atomics.load(this.ctx.i32, this.objects.ow(work.id, O_STATE)) & ObjState.Pending) !== 0;
  }

  /**
   * Wake an idle unbound worker onto a CPU of the queueing CPU's pod (need_more_worker, then
   * kick_pool: the first idle worker, its wake_cpu in the pod, select_task_rq_fair's idle
   * sibling). A worker on a thread of its own (`kthreads: 'thread'`) is moved to the CPU chosen;
   * one hosted on a CPU's thread (src/machine/plan.ts) cannot move, so a worker hosted on the CPU
   * chosen is woken. One hosted there that is not asleep is waking or about to re-check the
   * worklist before it sleeps (WorkerTask), and takes the item. No worker hosted there at all
   * (fewer workers than CPUs): a sleeping one on an idle CPU, else any sleeping one.
   */
  private kickUnbound(pool: number, here: number, wq: WorkqueueEntry): void {
    // No nr_running gate: an unbound pool's workers carry WORKER_UNBOUND, one of
    // WORKER_NOT_RUNNING's flags (kernel/workqueue.c), so they never count in pool->nr_running
    // and need_more_worker() holds whenever the worklist is not empty: every insert_work() kicks
    // the first idle worker. Gating on the workers awake here stranded items behind one awake
    // worker that a nice -20 hog kept off its CPU, while idle workers slept on idle CPUs.
    const target = this.placeUnbound(Math.max(here, 0), wq);
    const sched = this.sched;
    const tasks = this.plan.tasks;
    const workers = this.plan.pools[pool].workers;
    let hostedThere = false;
    for (const w of workers) {
      if (tasks[w].bound) {
        if (tasks[w].cpu !== target) continue;
        hostedThere = true;
        if (sched.rqs.state(w) === TaskState.Sleeping && sched.wakeUpOn(w, -1)) return;
      } else if (sched.rqs.state(w) === TaskState.Sleeping && sched.wakeUpOn(w, target)) return;
    }
    if (hostedThere) return;
    for (let pass = 0; pass < 2; pass++) {
      for (const w of workers) {
        if (!tasks[w].bound || sched.rqs.state(w) !== TaskState.Sleeping) continue;
        if (pass === 0 && !sched.isIdle(tasks[w].cpu)) continue;
        if (sched.wakeUpOn(w, -1)) return;
      }
    }
  }

  /** Where an unbound worker should run: an idle CPU of the pod (local first), else, if not
   *  strict, any idle CPU, else the least loaded CPU of the pod by weight (select_task_rq_fair
   *  compares weighted load: a CPU held by a nice -20 hog is far busier than one running a
   *  kworker, though both run one task; ties stay local). */
  placeUnbound(here: number, wq: WorkqueueEntry): number {
    const s = this.sched;
    const pod = wq.pods[here];
    if (pod.includes(here) && s.isIdle(here)) return here;
    for (const c of pod) if (s.isIdle(c)) return c;
    if (!wq.attrs.affinityStrict) for (let c = 0; c < this.ctx.nrCpus; c++) if (s.isIdle(c)) return c;
    let best = pod.includes(here) ? here : pod[0];
    let load = s.rqs.loadWeight(best);
    for (const c of pod) {
      const l = s.rqs.loadWeight(c);
      if (l < load) {
        best = c;
        load = l;
      }
    }
    return best;
  }

  // --- running ------------------------------------------------------------------------------

  /** Pop one work id from `pool`'s list (-1: empty). Unbound pools have many consumers: locked. */
  pop(pool: number): number {
    const list = this.poolLists[pool];
    const shared = this.plan.pools[pool].kind === 'unbound';
    if (shared) this.poolLocks[pool].lock();
    const idx = list.peek();
    let id = -1;
    if (idx >= 0) {
      id = this.ctx.i32[idx];
      list.release();
    }
    if (shared) this.poolLocks[pool].unlock();
    return id;
  }

  hasWork(pool: number): boolean {
    return this.poolLists[pool].peek() >= 0;
  }

  /** process_one_work(): clear PENDING, then run. Context: the caller's (task for workers, softirq for BH). */
  run(id: number): void {
    Atomics.and(this.ctx.i32, this.objects.ow(id, O_STATE), ~ObjState.Pending);
    this.objects.call(id);
  }

  /** bh_worker(): run a BH pool's items for at most BH_WORKER_RESTARTS items / BH_WORKER_NS. */
  private bhPoolRun(c: number, highpri: boolean): void {
    const ctx = this.ctx;
    const pool = bhPool(ctx.nrCpus, c, highpri);
    const start = ctx.now();
    for (let n = 0; n < BH_WORKER_RESTARTS; n++) {
      const id = this.pop(pool);
      if (id < 0) return;
      this.run(id);
      ctx.count(CpuCounter.bh_works_run);
      ctx.count(CpuCounter.works_run);
      if (ctx.now() - start >= BH_WORKER_NS) break;
    }
    if (this.hasWork(pool)) this.softirqs.mark(c, highpri ? Softirq.Hi : Softirq.Tasklet);
  }
}

/** Workqueues as a kernel mechanism (src/kernel/mechanism.ts): a lock line and a worklist per pool. */
export const mechanism: Mechanism<Workqueues> = {
  name: 'workqueue',
  regions: (s) => ({
    pools: { words: POOL_WORDS * s.pools, count: 1 },
    poolList: { words: MpscRing.wordsFor(MAX_OBJECTS, 1), count: s.pools },
  }),
  records: { pool: { prefix: /^P_[A-Z_]+$/, size: POOL_WORDS, extra: { lock: [0, LOCK_WORDS] } } },
  init(m) {
    const base = m.R.parts.pools[0];
    for (const p of m.plan.pools) {
      ShmLock.init(m.i32, base + p.id * POOL_WORDS);
      const list = m.R.parts.poolList[p.id];
      MpscRing.init(m.i32, list, MAX_OBJECTS, 1, m.words(list));
    }
  },
  busy(m) {
    for (const p of m.plan.pools)
      if (new MpscRing(m.i32, m.R.parts.poolList[p.id]).length() !== 0)
        return `work queued on pool ${p.id} (${p.kind}, CPU ${p.cpu})`;
    // A work item popped from its list is done only once its worker has counted it.
    const queued = m.count('works_queued');
    const run = m.count('works_run');
    return run < queued ? `${queued - run} queued work items have not finished running` : '';
  },
  build: (k) => new Workqueues(k.ctx, k.plan, k.topology, k.objects, k.softirqs, k.sched, k.lockSpins, k.profile),
  facade: (w, k) => ({
    queueWorkOn(cpu: number, wq: Workqueue, work: Work): boolean {
      w.check('queueWorkOn', wq);
      k.objects.checkHandle('queueWorkOn', 'work', work);
      return w.queueOn(cpu, wq, work);
    },
    queueWork(wq: Workqueue, work: Work): boolean {
      w.check('queueWork', wq);
      k.objects.checkHandle('queueWork', 'work', work);
      return w.queueOn(WORK_CPU_UNBOUND, wq, work);
    },
    workPending(work: Work): boolean {
      k.objects.checkHandle('workPending', 'work', work);
      return w.pending(work);
    },
  }),
  setup: (w, k, index) => ({
    createWork: (name, fn) => ({ kind: 'work', id: k.objects.create('work', name, fn, index), name }) as Work,
    workqueue: (name: SystemWorkqueue) => w.system(name),
    allocWorkqueue: (name, attrs) => w.alloc(name, attrs),
  }),
};
