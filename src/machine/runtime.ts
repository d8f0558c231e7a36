/**
 * One thread's view of the emulated kernel: interrupts, softirqs, ticks, timers, tasklets,
 * irq_work, workqueues and the scheduler's entry points, run by whichever thread owns a CPU.
 *
 * Every thread that can own a CPU (CPU threads, kthreads) builds one Runtime over the shared
 * buffer. Per-CPU state lives in shared memory (src/machine/layout.ts); this object holds only
 * views, the thread's identity, and where it executes now (cpu, task, nesting of hardirq and
 * softirq), which is per thread because one thread executes on one CPU at a time.
 *
 * Emulates, from the kernel:
 *   kernel/softirq.c   irq_exit → __do_softirq with MAX_SOFTIRQ_TIME (2 ms) and
 *                      MAX_SOFTIRQ_RESTART (10), then wakeup_softirqd; tasklet_action;
 *                      differences: softirqs raised from task context run at once (as
 *                      local_bh_enable would), no ksoftirqd_running() short-cut.
 *   kernel/time/timer.c add_timer_on / mod_timer / del_timer, TIMER_DEFERRABLE, run_local_timers
 *                      raising TIMER_SOFTIRQ at a tick once a timer expired; differences: one
 *                      flat list per CPU instead of the wheel (a handful of timers).
 *   kernel/workqueue.c queue_work_on's PENDING bit, bound per-CPU pools (normal, highpri) each
 *                      with one worker, need_more_worker's nr_running check, unbound pools with
 *                      affinity scopes, WQ_BH pools run from HI/TASKLET softirq with
 *                      BH_WORKER_RESTARTS (10) / BH_WORKER_JIFFIES (2 ms); differences: no
 *                      concurrency management (work never sleeps), one unbound pool whose pod
 *                      is applied when a worker is placed.
 *   kernel/irq_work.c  irq_work_queue_on: claim PENDING, add to the target's list, send an
 *                      IPI only if none is outstanding (the llist_add-returned-empty rule).
 */
import type {
  AffinityScope,
  Callback,
  CpuView,
  DeferralStrategy,
  Deferred,
  IrqWork,
  Kernel,
  StrategySetup,
  SystemWorkqueue,
  Tasklet,
  Timer,
  Work,
  Workqueue,
  WorkqueueAttrs,
} from '../api/types.js';
import { WORK_CPU_UNBOUND } from '../api/types.js';
import { nowNs } from '../clock.js';
import { FastPool } from '../random/fastpool.js';
import { InputPool } from '../random/inputpool.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { ShmLock } from '../shm/lock.js';
import { MpscRing } from '../shm/ring.js';
import { IrqChip, recordTime, Vector } from './irqchip.js';
import {
  C_ACTIVE,
  C_EPOCH,
  C_JIFFIES,
  C_PHASE,
  C_STOP,
  C_TEST,
  C_TRIGGER,
  CPU_COUNTERS,
  CPU_DEFERRED,
  CPU_F64,
  CPU_FLAGS,
  CPU_HEARTBEAT,
  CPU_IN_SOFTIRQ,
  CPU_IPI_PENDING,
  CPU_LAST_TICK,
  CPU_NEXT_TIMER,
  CPU_NEXT_TIMER_ANY,
  CPU_ON_CPU,
  CPU_OWNER,
  CPU_SOFTIRQ,
  CPU_WHERE,
  CPU_WORDS,
  CPUF_HANDOFF_NS,
  CPUF_SWITCH_NS,
  CpuCounter,
  CpuFlag,
  genEnter,
  genExit,
  MAX_OBJECTS,
  MAX_TIMERS_PER_CPU,
  type MachineRegions,
  O_ARG,
  O_CPU,
  O_FLAGS,
  O_STATE,
  OBJ_WORDS,
  ObjState,
  P_NR_RUNNING,
  Phase,
  POOL_WORDS,
  Softirq,
  T_STATE,
  TaskState,
  TB_LEN,
  TB_LIST,
  TestFlag,
  TIMER_BASE_WORDS,
  Where,
} from './layout.js';
import type { MachineOptions } from './options.js';
import { bhPool, boundPool, type MachinePlan } from './plan.js';
import { RunQueues } from './sched.js';
import { St, Tracer } from './trace.js';

/** MAX_SOFTIRQ_TIME: 2 ms (kernel/softirq.c). */
export const MAX_SOFTIRQ_TIME_NS = 2_000_000;
/** MAX_SOFTIRQ_RESTART: 10 passes. */
export const MAX_SOFTIRQ_RESTART = 10;
/** BH_WORKER_RESTARTS / BH_WORKER_JIFFIES (kernel/workqueue.c): items and time per BH pool run. */
export const BH_WORKER_RESTARTS = 10;
export const BH_WORKER_NS = 2_000_000;
/** "No timer pending" in CPU_NEXT_TIMER*: far in the future for time_after comparisons. */
export const NO_TIMER = 0x7fffffff;
/** instruction_pointer() analogue: a base address plus the irq number. */
const IP_BASE = 0xffff_8000_0100_0;

/** What a kernel object runs, and for whom (fault attribution). */
interface ObjEntry {
  fn: Callback;
  strategy: number;
  kind: 'work' | 'tasklet' | 'timer' | 'irq_work';
  name: string;
}

export interface WorkqueueEntry extends Workqueue {
  pods: number[][]; // per CPU: the CPUs of its affinity scope
}

/** A fault raised by the emulated kernel itself (a BUG), carrying where it happened. */
export class KernelBug extends Error {}

/** Workload hooks into a thread's runtime. */
export interface WorkloadHooks {
  /** NET_RX softirq on the runtime's current CPU. */
  netRx?(rt: Runtime): void;
  /** NET_TX softirq. */
  netTx?(rt: Runtime): void;
  /** The phase changed; called on each CPU thread when it notices. */
  onPhase?(rt: Runtime, phase: Phase): void;
}

export class Runtime {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly rqs: RunQueues;
  readonly bells: Doorbell[] = [];
  readonly chip: IrqChip;
  readonly tracer: Tracer;
  readonly fastPools: FastPool[] = [];
  readonly inputPool: InputPool;
  readonly facade: Kernel;
  readonly nrCpus: number;
  readonly hz: number;

  // --- where this thread executes now ------------------------------------------------------
  /** The CPU this thread owns now, or -1. */
  cpu = -1;
  /** The task it runs as, or -1. */
  task = -1;
  /** Nesting of hardirq handling (preempt_count's HARDIRQ part). */
  hardirq = 0;
  /** Nesting of softirq processing on this thread. */
  softirq = 0;
  /** Strategy whose code runs now (-1: none): named in fault reports. */
  inStrategy = -1;
  /** Where the first exception was thrown (context and CPU), kept as the stack unwinds. */
  faultAt: { context: 'hardirq' | 'softirq'; cpu: number } | undefined;
  /** Control values last seen. */
  phase = Phase.Boot;
  epoch = 0;

  // --- views --------------------------------------------------------------------------------
  private readonly irqRings: MpscRing[] = [];
  private readonly irqWorkLists: MpscRing[] = [];
  private readonly taskletLists: MpscRing[] = []; // [2c] = HI, [2c+1] = normal
  private readonly poolLists: MpscRing[] = [];
  private readonly poolLocks: ShmLock[] = [];
  private readonly timerLocks: ShmLock[] = [];
  private readonly expired = new Int32Array(MAX_TIMERS_PER_CPU);
  private readonly deferred: Deferred[] = [];

  // --- kernel objects (identical in every thread: created by setup in the same order) ------
  readonly objects: ObjEntry[] = [];
  readonly workqueues: WorkqueueEntry[] = [];
  readonly strategies: DeferralStrategy[] = [];
  readonly strategyLabels: string[] = [];
  workload: WorkloadHooks = {};
  /** Posts this thread's histograms for a new collect epoch (set by the thread's start-up). */
  onReport: ((epoch: number) => void) | undefined;

  private readonly ctl: number;
  private readonly gc: number;
  /** > 0: the hand-off payload is a driver work item of this many ns, not random.c's mix. */
  private readonly driverWorkNs: number;
  /** Per task id: a kthread (kworker, unbound worker, ksoftirqd), for kthread_switches. */
  private readonly isKthread: Uint8Array;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly R: MachineRegions,
    readonly plan: MachinePlan,
    readonly opts: MachineOptions,
    readonly threadId: number,
  ) {
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
    this.nrCpus = opts.cpus;
    this.hz = opts.hz;
    this.ctl = R.control;
    this.gc = R.globalCounters;
    this.driverWorkNs = opts.payload?.kind === 'driver_work' ? Math.max(1, opts.payload.workNs) : 0;
    this.isKthread = Uint8Array.from(plan.tasks, (t) =>
      t.kind === 'kworker' || t.kind === 'unbound' || t.kind === 'ksoftirqd' ? 1 : 0,
    );
    this.rqs = RunQueues.of(this.i32, this.f64, R, opts.cpus, opts.lockSpins);
    for (let t = 0; t < plan.threads.length; t++)
      this.bells.push(new Doorbell(this.i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    for (let c = 0; c < opts.cpus; c++) {
      this.irqRings.push(new MpscRing(this.i32, R.irqRings[c]));
      this.irqWorkLists.push(new MpscRing(this.i32, R.irqWorkLists[c]));
      this.taskletLists.push(new MpscRing(this.i32, R.taskletLists[2 * c]));
      this.taskletLists.push(new MpscRing(this.i32, R.taskletLists[2 * c + 1]));
      this.timerLocks.push(new ShmLock(this.i32, R.timerBase + c * TIMER_BASE_WORDS, opts.lockSpins));
      this.fastPools.push(new FastPool(this.i32, R.fastPools + c * 16, opts.fastPool.variant));
      this.deferred.push(new DeferredMix(this, c));
    }
    for (let p = 0; p < plan.pools.length; p++) {
      this.poolLists.push(new MpscRing(this.i32, R.poolLists[p]));
      this.poolLocks.push(new ShmLock(this.i32, R.pools + p * POOL_WORDS, opts.lockSpins));
    }
    this.chip = new IrqChip(
      this.i32,
      R.cpu,
      R.globalCounters,
      this.irqRings,
      this.bells.slice(0, opts.cpus),
      opts.notify,
    );
    this.inputPool = new InputPool(this.i32, R.inputPool, opts.lockSpins);
    this.tracer = new Tracer(opts.tracing);
    this.facade = new KernelFacade(this);
  }

  // =========================================================================================
  // Small accessors
  // =========================================================================================
  now(): number {
    return nowNs();
  }
  jiffies(): number {
    return Atomics.load(this.i32, this.ctl + C_JIFFIES);
  }
  cw(cpu: number, word: number): number {
    return this.R.cpu + cpu * CPU_WORDS + word;
  }
  cf(cpu: number, word: number): number {
    return this.R.cpuF64 / 2 + cpu * CPU_F64 + word;
  }
  ow(obj: number, word: number): number {
    return this.R.objects + obj * OBJ_WORDS + word;
  }
  pw(pool: number, word: number): number {
    return this.R.pools + pool * POOL_WORDS + word;
  }
  count(counter: number, n = 1): void {
    if (this.cpu >= 0) this.i32[this.R.cpu + this.cpu * CPU_WORDS + CPU_COUNTERS + counter] += n;
  }
  countOn(cpu: number, counter: number, n = 1): void {
    this.i32[this.R.cpu + cpu * CPU_WORDS + CPU_COUNTERS + counter] += n;
  }
  stopping(): boolean {
    return Atomics.load(this.i32, this.ctl + C_STOP) !== 0;
  }
  ownerOf(cpu: number): number {
    return Atomics.load(this.i32, this.cw(cpu, CPU_OWNER));
  }
  isIdle(cpu: number): boolean {
    return this.ownerOf(cpu) === cpu && this.rqs.nrRunning(cpu) === 0;
  }
  contextName(): 'hardirq' | 'softirq' | 'task' {
    return this.hardirq > 0 ? 'hardirq' : this.softirq > 0 ? 'softirq' : 'task';
  }

  // =========================================================================================
  // Ownership
  // =========================================================================================

  /** The thread starts executing as `task` on `cpu` (it found OWNER == task). */
  enterCpu(cpu: number, task: number): void {
    const was = Atomics.add(this.i32, this.cw(cpu, CPU_ON_CPU), 1);
    if (was !== 0) throw new KernelBug(`two owners on CPU ${cpu} at once (task ${task} found ${was} already running)`);
    this.cpu = cpu;
    this.task = task;
    const sw = this.f64[this.cf(cpu, CPUF_SWITCH_NS)];
    if (sw > 0) this.tracer.record(St.CtxSwitch, nowNs() - sw);
  }

  /** Stop executing on the current CPU without handing it over (run ends). */
  leaveCpu(): void {
    if (this.cpu < 0) return;
    Atomics.sub(this.i32, this.cw(this.cpu, CPU_ON_CPU), 1);
    this.cpu = -1;
    this.task = -1;
  }

  /** Hand CPU `cpu` to `next`: the context switch. The caller stops executing on it. */
  private switchTo(cpu: number, next: number, now: number): void {
    this.f64[this.cf(cpu, CPUF_SWITCH_NS)] = now;
    Atomics.sub(this.i32, this.cw(cpu, CPU_ON_CPU), 1);
    this.cpu = -1;
    this.task = -1;
    Atomics.store(this.i32, this.cw(cpu, CPU_OWNER), next); // publishes all this thread wrote as owner
    const nt = this.plan.tasks[next].thread;
    if (nt !== this.threadId) this.bells[nt].ring();
  }

  /**
   * schedule(): pick the next task on the current CPU and switch to it. The caller (a task at a
   * preemption point, or one going to sleep after storing TaskState.Sleeping) must check
   * `this.task` afterwards: -1 means it no longer runs.
   * Context: task context on the owner.
   */
  schedule(): void {
    const c = this.cpu;
    Atomics.and(this.i32, this.cw(c, CPU_FLAGS), ~CpuFlag.NeedResched);
    const now = nowNs();
    this.rqs.lock(c);
    const next = this.rqs.scheduleLocked(c, now);
    this.rqs.unlock(c);
    if (next === this.task) return;
    this.count(CpuCounter.ctx_switches);
    if (this.isKthread[next]) this.count(CpuCounter.kthread_switches);
    this.switchTo(c, next, now);
  }

  /**
   * The current task goes to sleep unless `stillNeeded` (evaluated after the state is stored,
   * so a concurrent wake-up is never lost: the prepare_to_wait / schedule pattern).
   * Returns true when it slept (gave the CPU away).
   */
  sleepCurrent(recheck: () => boolean): boolean {
    const st = this.rqs.tw(this.task, T_STATE);
    Atomics.store(this.i32, st, TaskState.Sleeping);
    if (recheck()) {
      Atomics.store(this.i32, st, TaskState.Runnable);
      return false;
    }
    this.schedule();
    return this.task < 0;
  }

  /**
   * wake_up_process(): make `task` runnable on its CPU; preempt that CPU's current task if the
   * scheduler says so. Context: any thread, any context. Returns false when already runnable.
   */
  wakeUp(task: number): boolean {
    return this.wakeUpOn(task, -1);
  }

  /**
   * wake_up_process that may place the task: with `target` >= 0, a task that sleeps and sits on
   * no run queue (an unbound worker) is moved to `target` first. Under the rq lock of the CPU the
   * task belongs to, re-read after locking since a concurrent waker may have moved it.
   */
  wakeUpOn(task: number, target: number): boolean {
    for (;;) {
      const c = this.rqs.taskCpu(task);
      this.rqs.lock(c);
      if (this.rqs.taskCpu(task) !== c) {
        this.rqs.unlock(c);
        continue;
      }
      if (target >= 0 && c !== target && this.rqs.state(task) === TaskState.Sleeping && !this.rqs.queued(c, task)) {
        this.rqs.setTaskCpu(task, target); // it sleeps and sits on no queue: nobody else places it
        this.rqs.unlock(c);
        continue;
      }
      const r = this.rqs.wakeLocked(c, task, nowNs());
      this.rqs.unlock(c);
      this.afterWake(c, r);
      return r > 0;
    }
  }

  private afterWake(c: number, r: number): void {
    if (r === 0) return;
    if (this.cpu >= 0) this.count(CpuCounter.wakeups);
    if (r === 2) {
      if (this.cpu >= 0) this.count(CpuCounter.wakeup_preemptions);
      Atomics.or(this.i32, this.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
      if (c !== this.cpu) this.chip.kick(c);
    }
  }

  // =========================================================================================
  // Preemption points and interrupts
  // =========================================================================================

  /**
   * A preemption point: handle whatever is flagged on the current CPU. Returns true when the
   * caller still owns the CPU as the same task. Context: task context on the owner.
   */
  poll(): boolean {
    const b = this.R.cpu + this.cpu * CPU_WORDS;
    this.i32[b + CPU_HEARTBEAT]++;
    const f = Atomics.load(this.i32, b + CPU_FLAGS);
    if (f === 0) return true;
    return this.handleFlags(f);
  }

  private handleFlags(f: number): boolean {
    const task = this.task;
    // Control first: a phase change (Measure → Drain) must switch recording off before the
    // interrupts and ticks that arrived with it are handled.
    if ((f & CpuFlag.Control) !== 0) {
      Atomics.and(this.i32, this.cw(this.cpu, CPU_FLAGS), ~CpuFlag.Control);
      this.checkControl();
    }
    if ((f & (CpuFlag.IrqPending | CpuFlag.Tick | CpuFlag.IrqWork)) !== 0) this.interrupt();
    if (
      this.hardirq === 0 &&
      this.softirq === 0 &&
      (Atomics.load(this.i32, this.cw(this.cpu, CPU_FLAGS)) & CpuFlag.NeedResched) !== 0
    ) {
      this.schedule();
    }
    return this.task === task && task >= 0;
  }

  /**
   * Inside softirq processing: take hard interrupts (they are enabled there), nothing else.
   * Softirq handlers that loop over many items call it between items.
   * Context: softirq on the owner.
   */
  pollIrq(): void {
    const f = Atomics.load(this.i32, this.cw(this.cpu, CPU_FLAGS));
    if ((f & (CpuFlag.IrqPending | CpuFlag.Tick | CpuFlag.IrqWork)) !== 0) this.interrupt();
  }

  /** Hard-IRQ entry: clear the flags first, then handle; then irq_exit. */
  interrupt(): void {
    const c = this.cpu;
    const old = Atomics.and(
      this.i32,
      this.cw(c, CPU_FLAGS),
      ~(CpuFlag.IrqPending | CpuFlag.Tick | CpuFlag.IrqWork | CpuFlag.NetCoalesced),
    );
    this.hardirq++;
    const w = this.cw(c, CPU_WHERE);
    const prevWhere = this.i32[w];
    this.i32[w] = Where.Hardirq;
    try {
      if ((old & CpuFlag.IrqPending) !== 0) this.drainIrqRing(c);
      if ((old & CpuFlag.NetCoalesced) !== 0) this.raiseSoftirq(Softirq.NetRx);
      if ((old & CpuFlag.IrqWork) !== 0) this.runIrqWorkList(c);
      if ((old & CpuFlag.Tick) !== 0) this.tick(c);
    } catch (e) {
      this.faultAt ??= { context: 'hardirq', cpu: c };
      throw e;
    } finally {
      this.hardirq--;
      this.i32[w] = prevWhere;
    }
    this.irqExit();
  }

  private drainIrqRing(c: number): void {
    const ring = this.irqRings[c];
    const i32 = this.i32;
    const tr = this.tracer;
    this.count(CpuCounter.irq_entries);
    for (;;) {
      const idx = ring.peek();
      if (idx < 0) return;
      const vector = i32[idx];
      const arg = i32[idx + 1];
      const raised = recordTime(i32, idx);
      const t = nowNs();
      tr.record(St.IrqEntry, t - raised);
      if (vector === Vector.Ipi) {
        this.count(CpuCounter.ipis_received);
        this.runIrqWorkList(c);
      } else {
        this.deviceInterrupt(arg, t);
        if (vector === Vector.Net) this.raiseSoftirq(Softirq.NetRx);
      }
      // Released only once handled: until then the record keeps the ring non-empty, so the
      // drain (Machine.busy) cannot miss an interrupt that is being handled. What the handler
      // left behind (a hand-off's CPU_DEFERRED, a raised softirq) is published before this.
      ring.release();
      if (tr.on) tr.record(St.Hardirq, nowNs() - t);
    }
  }

  /** handle_irq_event → add_interrupt_randomness, and the hand-off when it says so. */
  private deviceInterrupt(irq: number, t: number): void {
    const c = this.cpu;
    this.count(CpuCounter.interrupts);
    const mix = this.fastPools[c].addInterruptRandomness(
      irq,
      t,
      IP_BASE + irq,
      this.jiffies(),
      this.hz,
      Atomics.load(this.i32, this.ctl + C_TRIGGER),
    );
    if (this.driverWorkNs > 0) {
      // Driver payload: every interrupt queues the driver's work unless it is still pending.
      if (Atomics.load(this.i32, this.cw(c, CPU_DEFERRED)) > 0) return;
    } else if (!mix) {
      return;
    }
    const dw = this.cw(c, CPU_DEFERRED);
    // The hand-off time of the pending job; not overwritten by a hand-off that will be refused.
    const pendingBefore = Atomics.add(this.i32, dw, 1);
    if (pendingBefore === 0) this.f64[this.cf(c, CPUF_HANDOFF_NS)] = t;
    const active = Atomics.load(this.i32, this.ctl + C_ACTIVE);
    const s = this.strategies[Math.max(active, 0)];
    this.inStrategy = Math.max(active, 0);
    const t1 = this.tracer.on ? nowNs() : 0;
    this.i32[this.cw(c, CPU_WHERE)] = Where.Handoff;
    const ok = this.callHandoff(s, c);
    this.i32[this.cw(c, CPU_WHERE)] = Where.Hardirq;
    if (this.tracer.on) this.tracer.record(St.HandoffCall, nowNs() - t1);
    if (!ok) Atomics.sub(this.i32, dw, 1);
    this.count(ok ? CpuCounter.handoffs : CpuCounter.handoffs_refused);
    // Refused with nothing pending: no job will run, and random.c's MIX_INFLIGHT stays set.
    if (!ok && pendingBefore === 0) this.count(CpuCounter.handoffs_lost);
    if (ok && (Atomics.load(this.i32, this.ctl + C_TEST) & TestFlag.DoubleHandoff) !== 0) this.secondHandoff(s, c);
    this.inStrategy = -1;
  }

  /** The strategy's hand-off for CPU `c`'s mix; anything but a boolean back is a fault. */
  private callHandoff(s: DeferralStrategy, c: number): boolean {
    const ok = s.handoff(this.facade, this.deferred[c]);
    if (ok !== true && ok !== false) throw new Error(badHandoffReturn(ok));
    return ok;
  }

  /** Conformance: hand off again at once (see TestFlag.DoubleHandoff). */
  private secondHandoff(s: DeferralStrategy, c: number): void {
    const dw = this.cw(c, CPU_DEFERRED);
    if (Atomics.load(this.i32, dw) > 0) {
      if (this.callHandoff(s, c)) this.count(CpuCounter.handoffs_while_pending_accepted);
      return;
    }
    this.f64[this.cf(c, CPUF_HANDOFF_NS)] = nowNs();
    Atomics.add(this.i32, dw, 1);
    const ok = this.callHandoff(s, c);
    if (!ok) Atomics.sub(this.i32, dw, 1);
    this.count(ok ? CpuCounter.handoffs : CpuCounter.handoffs_refused);
  }

  /** The deferred payload: mix_interrupt_randomness for `poolCpu`'s fast pool, measured. */
  runDeferred(poolCpu: number): void {
    const t0 = nowNs();
    if (Atomics.sub(this.i32, this.cw(poolCpu, CPU_DEFERRED), 1) <= 0) {
      Atomics.add(this.i32, this.cw(poolCpu, CPU_DEFERRED), 1); // keep the count honest for the rest
      this.count(CpuCounter.mixes_duplicate);
    }
    this.tracer.record(St.HandoffToStart, t0 - this.f64[this.cf(poolCpu, CPUF_HANDOFF_NS)]);
    if (this.driverWorkNs > 0) {
      while (nowNs() - t0 < this.driverWorkNs) {
        // the driver's work: busy for workNs
      }
    } else {
      this.fastPools[poolCpu].mixInterruptRandomness(this.cpu, this.jiffies(), this.inputPool, t0);
    }
    if (this.cpu !== poolCpu) this.count(CpuCounter.mixes_remote);
    this.count(
      this.hardirq > 0 ? CpuCounter.mixes_hardirq : this.softirq > 0 ? CpuCounter.mixes_softirq : CpuCounter.mixes_task,
    );
    const w = this.inputPool.lastWaitNs;
    if (w > 0) this.tracer.record(St.LockWait, w);
    this.count(CpuCounter.mixes);
    if (this.tracer.on) this.tracer.record(St.Work, nowNs() - t0);
  }

  private tick(c: number): void {
    this.count(CpuCounter.ticks);
    const j = this.jiffies();
    this.i32[this.cw(c, CPU_LAST_TICK)] = j;
    // run_local_timers(): raise TIMER_SOFTIRQ once the earliest timer expired.
    if (j - Atomics.load(this.i32, this.cw(c, CPU_NEXT_TIMER_ANY)) >= 0) this.raiseSoftirq(Softirq.Timer);
    const now = nowNs();
    this.rqs.lock(c);
    const resched = this.rqs.tickLocked(c, now);
    this.rqs.unlock(c);
    if (resched) Atomics.or(this.i32, this.cw(c, CPU_FLAGS), CpuFlag.NeedResched);
  }

  /** irq_exit(): run pending softirqs unless already inside interrupt or softirq processing. */
  private irqExit(): void {
    if (this.hardirq === 0 && this.softirq === 0 && Atomics.load(this.i32, this.cw(this.cpu, CPU_SOFTIRQ)) !== 0) {
      this.doSoftirq(false);
    }
  }

  // =========================================================================================
  // Softirqs
  // =========================================================================================

  /** raise_softirq on the current CPU. From task context the softirq runs now (local_bh_enable). */
  raiseSoftirq(nr: number): void {
    Atomics.or(this.i32, this.cw(this.cpu, CPU_SOFTIRQ), 1 << nr);
    if (this.hardirq === 0 && this.softirq === 0) this.doSoftirq(false);
  }

  /**
   * __do_softirq(): run pending vectors in order; restart while more are raised, for at most
   * MAX_SOFTIRQ_TIME and MAX_SOFTIRQ_RESTART passes; then leave the rest to ksoftirqd/n.
   */
  doSoftirq(fromKsoftirqd: boolean): void {
    const c = this.cpu;
    const word = this.cw(c, CPU_SOFTIRQ);
    const start = nowNs();
    let restarts = MAX_SOFTIRQ_RESTART;
    this.softirq++;
    this.i32[this.cw(c, CPU_IN_SOFTIRQ)]++;
    this.count(CpuCounter.softirq_runs);
    try {
      for (;;) {
        const pending = Atomics.exchange(this.i32, word, 0);
        for (let nr = 0; nr < 10; nr++) {
          if ((pending & (1 << nr)) === 0) continue;
          this.i32[this.cw(c, CPU_WHERE)] = Where.Softirq + nr;
          this.runSoftirq(c, nr);
          this.i32[this.cw(c, CPU_WHERE)] = Where.Softirq;
          this.pollIrq();
        }
        if (Atomics.load(this.i32, word) === 0) break;
        if (nowNs() - start < MAX_SOFTIRQ_TIME_NS && --restarts > 0) {
          this.count(CpuCounter.softirq_restarts);
          continue;
        }
        if (!fromKsoftirqd) this.wakeKsoftirqd(c);
        break;
      }
    } catch (e) {
      this.faultAt ??= { context: 'softirq', cpu: c };
      throw e;
    } finally {
      this.softirq--;
      this.i32[this.cw(c, CPU_IN_SOFTIRQ)]--;
      this.i32[this.cw(c, CPU_WHERE)] = this.hardirq > 0 ? Where.Hardirq : Where.Task;
    }
    if (this.tracer.on) this.tracer.record(St.Softirq, nowNs() - start);
  }

  private wakeKsoftirqd(c: number): void {
    this.count(CpuCounter.ksoftirqd_wakeups);
    this.wakeUp(this.plan.ksoftirqd[c]);
  }

  private runSoftirq(c: number, nr: number): void {
    switch (nr) {
      case Softirq.Hi:
        this.taskletAction(c, true);
        this.bhPoolRun(c, true);
        return;
      case Softirq.Timer:
        this.runTimers(c);
        return;
      case Softirq.NetTx:
        this.workload.netTx?.(this);
        return;
      case Softirq.NetRx:
        this.workload.netRx?.(this);
        return;
      case Softirq.Tasklet:
        this.taskletAction(c, false);
        this.bhPoolRun(c, false);
        return;
      default:
        return;
    }
  }

  // =========================================================================================
  // Kernel objects: creation (setup) and invocation
  // =========================================================================================

  private createObj(kind: ObjEntry['kind'], name: string, fn: Callback, strategy: number): number {
    const id = this.objects.length;
    if (id >= MAX_OBJECTS)
      throw new Error(`too many kernel objects (limit ${MAX_OBJECTS}): a strategy creates too many in setup()`);
    if (typeof fn !== 'function') throw new Error(`${kind} "${name}" needs a callback function`);
    this.objects.push({ fn, strategy, kind, name });
    return id;
  }

  /** Call object `id`'s callback, attributing faults to its strategy. */
  private callObj(id: number): void {
    const o = this.objects[id];
    const prev = this.inStrategy;
    if (o.strategy < 0) {
      o.fn(this.facade);
      return;
    }
    const w = this.cw(this.cpu, CPU_WHERE);
    const prevWhere = this.i32[w];
    this.inStrategy = o.strategy;
    this.i32[w] = Where.Callback + id;
    o.fn(this.facade);
    this.i32[w] = prevWhere;
    this.inStrategy = prev;
  }

  /** An irq_work owned by the workload (created in every thread in the same order). */
  createWorkloadIrqWork(name: string, fn: Callback): IrqWork {
    return { kind: 'irq_work', id: this.createObj('irq_work', name, fn, -1), name };
  }

  /** Build the setup context strategy `index` receives. */
  setupFor(index: number, options: Record<string, string | number | boolean>): StrategySetup {
    return {
      nrCpus: this.nrCpus,
      hz: this.hz,
      options: Object.freeze({ ...options }),
      deferred: (cpu: number) => {
        this.checkCpu(cpu, 'deferred');
        return this.deferred[cpu];
      },
      createWork: (name, fn) => ({ kind: 'work', id: this.createObj('work', name, fn, index), name }) as Work,
      createTasklet: (name, fn) =>
        ({ kind: 'tasklet', id: this.createObj('tasklet', name, fn, index), name }) as Tasklet,
      createTimer: (name, fn, o) => {
        const id = this.createObj('timer', name, fn, index);
        const deferrable = !!o?.deferrable;
        return { kind: 'timer', id, name, deferrable } as Timer;
      },
      createIrqWork: (name, fn) =>
        ({ kind: 'irq_work', id: this.createObj('irq_work', name, fn, index), name }) as IrqWork,
      workqueue: (name: SystemWorkqueue) => this.systemWorkqueue(name),
      allocWorkqueue: (name, attrs) => this.allocWorkqueue(name, attrs),
    };
  }

  systemWorkqueue(name: SystemWorkqueue): Workqueue {
    const attrs: Record<SystemWorkqueue, WorkqueueAttrs> = {
      system_wq: {},
      system_highpri_wq: { highpri: true },
      system_unbound_wq: { unbound: true },
      system_bh_wq: { bh: true },
      system_bh_highpri_wq: { bh: true, highpri: true },
    };
    if (!(name in attrs))
      throw new Error(`unknown system workqueue "${name}" (known: ${Object.keys(attrs).join(', ')})`);
    const found = this.workqueues.find((w) => w.name === name);
    return found ?? this.allocWorkqueue(name, attrs[name]);
  }

  allocWorkqueue(name: string, given: WorkqueueAttrs | undefined): Workqueue {
    const a = given ?? {};
    if (typeof a !== 'object')
      throw new Error(`allocWorkqueue("${name}"): attrs must be an object (got ${describeArg(a)})`);
    const known = ['unbound', 'highpri', 'bh', 'affinityScope', 'affinityStrict'];
    for (const key of Object.keys(a))
      if (!known.includes(key))
        throw new Error(`allocWorkqueue("${name}"): unknown attribute ${key} (known: ${known.join(', ')})`);
    const scope: AffinityScope = a.affinityScope ?? 'cache';
    const scopes: AffinityScope[] = ['cpu', 'smt', 'cache', 'numa', 'system'];
    if (!scopes.includes(scope))
      throw new Error(`workqueue "${name}": affinityScope must be one of ${scopes.join(', ')} (got ${String(scope)})`);
    if (a.bh && a.unbound) throw new Error(`workqueue "${name}": WQ_BH and WQ_UNBOUND cannot be combined`);
    const attrs = {
      unbound: !!a.unbound,
      highpri: !!a.highpri,
      bh: !!a.bh,
      affinityScope: scope,
      affinityStrict: !!a.affinityStrict,
    };
    const pods: number[][] = [];
    for (let c = 0; c < this.nrCpus; c++) pods.push(this.podOf(scope, c));
    const wq: WorkqueueEntry = { kind: 'workqueue', id: this.workqueues.length, name, attrs, pods };
    this.workqueues.push(wq);
    return wq;
  }

  private podOf(scope: AffinityScope, cpu: number): number[] {
    const all = Array.from({ length: this.nrCpus }, (_, i) => i);
    if (scope === 'cpu') return [cpu];
    if (scope === 'system') return all;
    const groups = this.opts.topology[scope];
    return groups.find((g) => g.includes(cpu)) ?? [cpu];
  }

  /**
   * A kernel-object argument must be a handle this thread's setup() created, of the right kind:
   * a strategy passing anything else gets a message, not an internal error. Two loads and
   * compares on the hand-off path.
   */
  checkHandle(call: string, kind: ObjEntry['kind'], h: { kind?: unknown; id?: unknown } | undefined): void {
    const o = typeof h?.id === 'number' ? this.objects[h.id] : undefined;
    if (o && h?.kind === kind && o.kind === kind) return;
    const from = { work: 'createWork', tasklet: 'createTasklet', timer: 'createTimer', irq_work: 'createIrqWork' }[
      kind
    ];
    throw new Error(`${call}: expected a ${kind} handle returned by s.${from}() in setup() (got ${describeArg(h)})`);
  }

  /** A workqueue argument must be one s.workqueue() or s.allocWorkqueue() returned. */
  checkWorkqueue(call: string, wq: { id?: unknown } | undefined): void {
    if (typeof wq?.id === 'number' && this.workqueues[wq.id] === wq) return;
    throw new Error(
      `${call}: expected a workqueue returned by s.workqueue() or s.allocWorkqueue() in setup() (got ${describeArg(wq)})`,
    );
  }

  private checkCpu(cpu: number, what: string): void {
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= this.nrCpus) {
      throw new Error(`${what}: CPU ${cpu} does not exist (this machine has CPUs 0..${this.nrCpus - 1})`);
    }
  }

  // =========================================================================================
  // Workqueues
  // =========================================================================================

  queueWorkOn(cpu: number, wq: Workqueue, work: Work): boolean {
    const st = this.ow(work.id, O_STATE);
    if ((Atomics.or(this.i32, st, ObjState.Pending) & ObjState.Pending) !== 0) {
      this.count(CpuCounter.works_refused);
      return false;
    }
    const here = this.cpu;
    const target = cpu === WORK_CPU_UNBOUND ? here : cpu;
    if (cpu !== WORK_CPU_UNBOUND) this.checkCpu(cpu, 'queue_work_on');
    const a = wq.attrs;
    let pool: number;
    if (a.bh) {
      if (target !== here) {
        Atomics.and(this.i32, st, ~ObjState.Pending);
        throw new KernelBug(
          `queue_work_on(${cpu}, ${wq.name}): a WQ_BH workqueue runs on the queueing CPU only (this is CPU ${here})`,
        );
      }
      pool = bhPool(this.nrCpus, here, a.highpri);
    } else if (a.unbound) {
      pool = this.plan.unboundPool;
    } else {
      pool = boundPool(target, a.highpri);
    }
    Atomics.store(this.i32, this.ow(work.id, O_ARG), pool);
    const list = this.poolLists[pool];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug(`worklist of pool ${pool} is full: a PENDING work item would be lost`);
    this.i32[idx] = work.id;
    list.publish();
    this.count(CpuCounter.works_queued);
    if (a.bh) this.raiseSoftirq(a.highpri ? Softirq.Hi : Softirq.Tasklet);
    else if (a.unbound) this.kickUnbound(pool, here, wq as WorkqueueEntry);
    else if (Atomics.load(this.i32, this.pw(pool, P_NR_RUNNING)) === 0) this.wakeUp(this.plan.pools[pool].workers[0]);
    return true;
  }

  /** Wake an idle unbound worker onto a CPU of the queueing CPU's pod (need_more_worker). */
  private kickUnbound(pool: number, here: number, wq: WorkqueueEntry): void {
    if (Atomics.load(this.i32, this.pw(pool, P_NR_RUNNING)) !== 0) return;
    const target = this.placeUnbound(Math.max(here, 0), wq);
    for (const w of this.plan.pools[pool].workers) {
      if (this.rqs.state(w) === TaskState.Sleeping && this.wakeUpOn(w, target)) return;
    }
  }

  /** Where an unbound worker should run: an idle CPU of the pod (local first), else, if not
   *  strict, any idle CPU, else the least loaded CPU of the pod. */
  placeUnbound(here: number, wq: WorkqueueEntry): number {
    const pod = wq.pods[here];
    if (pod.includes(here) && this.isIdle(here)) return here;
    for (const c of pod) if (this.isIdle(c)) return c;
    if (!wq.attrs.affinityStrict) for (let c = 0; c < this.nrCpus; c++) if (this.isIdle(c)) return c;
    let best = pod.includes(here) ? here : pod[0];
    let load = this.rqs.nrRunning(best);
    for (const c of pod) {
      const l = this.rqs.nrRunning(c);
      if (l < load) {
        best = c;
        load = l;
      }
    }
    return best;
  }

  /** Pop one work id from `pool`'s list (-1: empty). Unbound pools have many consumers: locked. */
  popWork(pool: number): number {
    const list = this.poolLists[pool];
    const shared = this.plan.pools[pool].kind === 'unbound';
    if (shared) this.poolLocks[pool].lock();
    const idx = list.peek();
    let id = -1;
    if (idx >= 0) {
      id = this.i32[idx];
      list.release();
    }
    if (shared) this.poolLocks[pool].unlock();
    return id;
  }

  poolHasWork(pool: number): boolean {
    return this.poolLists[pool].peek() >= 0;
  }

  /** process_one_work(): clear PENDING, then run. Context: the caller's (task for workers, softirq for BH). */
  runWork(id: number): void {
    Atomics.and(this.i32, this.ow(id, O_STATE), ~ObjState.Pending);
    this.callObj(id);
  }

  /** bh_worker(): run a BH pool's items for at most BH_WORKER_RESTARTS items / BH_WORKER_NS. */
  private bhPoolRun(c: number, highpri: boolean): void {
    const pool = bhPool(this.nrCpus, c, highpri);
    const start = nowNs();
    for (let n = 0; n < BH_WORKER_RESTARTS; n++) {
      const id = this.popWork(pool);
      if (id < 0) return;
      this.runWork(id);
      this.count(CpuCounter.bh_works_run);
      this.count(CpuCounter.works_run);
      if (nowNs() - start >= BH_WORKER_NS) break;
    }
    if (this.poolHasWork(pool))
      Atomics.or(this.i32, this.cw(c, CPU_SOFTIRQ), 1 << (highpri ? Softirq.Hi : Softirq.Tasklet));
  }

  // =========================================================================================
  // Tasklets
  // =========================================================================================

  taskletSchedule(t: Tasklet, hi: boolean): boolean {
    if ((Atomics.or(this.i32, this.ow(t.id, O_STATE), ObjState.Pending) & ObjState.Pending) !== 0) return false;
    const list = this.taskletLists[2 * this.cpu + (hi ? 0 : 1)];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug('tasklet list is full');
    this.i32[idx] = t.id;
    list.publish();
    Atomics.store(this.i32, this.ow(t.id, O_CPU), this.cpu);
    this.raiseSoftirq(hi ? Softirq.Hi : Softirq.Tasklet);
    return true;
  }

  /** tasklet_action_common(): run the tasklets scheduled on this CPU (those present at entry). */
  private taskletAction(c: number, hi: boolean): void {
    const list = this.taskletLists[2 * c + (hi ? 0 : 1)];
    let n = list.length();
    while (n-- > 0) {
      const idx = list.peek();
      if (idx < 0) return;
      const id = this.i32[idx];
      list.release();
      const st = this.ow(id, O_STATE);
      if ((Atomics.or(this.i32, st, ObjState.Running) & ObjState.Running) !== 0) {
        // Running on another CPU (tasklet_trylock failed): requeue and raise again.
        const j = list.claim();
        this.i32[j] = id;
        list.publish();
        Atomics.or(this.i32, this.cw(c, CPU_SOFTIRQ), 1 << (hi ? Softirq.Hi : Softirq.Tasklet));
        continue;
      }
      Atomics.and(this.i32, st, ~ObjState.Pending);
      try {
        this.callObj(id);
      } finally {
        Atomics.and(this.i32, st, ~ObjState.Running);
      }
      this.count(CpuCounter.tasklets_run);
    }
  }

  // =========================================================================================
  // Timers
  // =========================================================================================

  private tb(c: number, w: number): number {
    return this.R.timerBase + c * TIMER_BASE_WORDS + w;
  }

  /** Recompute a base's next-expiry words. Under its lock. */
  private timerNext(c: number, j: number): void {
    const i32 = this.i32;
    const n = i32[this.tb(c, TB_LEN)];
    let nd = NO_TIMER;
    let na = NO_TIMER;
    let haveD = false;
    let haveA = false;
    for (let i = 0; i < n; i++) {
      const id = i32[this.tb(c, TB_LIST + i)];
      const e = i32[this.ow(id, O_ARG)];
      if (!haveA || e - na < 0) {
        na = e;
        haveA = true;
      }
      if (i32[this.ow(id, O_FLAGS)] & 1) continue;
      if (!haveD || e - nd < 0) {
        nd = e;
        haveD = true;
      }
    }
    // "none" must compare as far in the future: put it half the int32 range ahead of now.
    Atomics.store(i32, this.cw(c, CPU_NEXT_TIMER), haveD ? nd : (j + 0x3fffffff) | 0);
    Atomics.store(i32, this.cw(c, CPU_NEXT_TIMER_ANY), haveA ? na : (j + 0x3fffffff) | 0);
  }

  addTimerOn(t: Timer, cpu: number, expires: number): void {
    this.checkCpu(cpu, 'add_timer_on');
    const lock = this.timerLocks[cpu];
    lock.lock();
    const st = this.ow(t.id, O_STATE);
    if ((Atomics.load(this.i32, st) & ObjState.Pending) !== 0) {
      lock.unlock();
      throw new KernelBug(`add_timer_on: timer "${t.name}" is already pending (kernel: BUG_ON(timer_pending(timer)))`);
    }
    const n = this.i32[this.tb(cpu, TB_LEN)];
    this.i32[this.tb(cpu, TB_LIST + n)] = t.id;
    this.i32[this.tb(cpu, TB_LEN)] = n + 1;
    this.i32[this.ow(t.id, O_ARG)] = expires | 0;
    this.i32[this.ow(t.id, O_FLAGS)] = t.deferrable ? 1 : 0;
    Atomics.store(this.i32, this.ow(t.id, O_CPU), cpu);
    Atomics.or(this.i32, st, ObjState.Pending);
    this.timerNext(cpu, this.jiffies());
    lock.unlock();
  }

  /** Detach a pending timer from whatever base holds it. Returns true when it was pending. */
  delTimer(t: Timer): boolean {
    for (;;) {
      const cpu = Atomics.load(this.i32, this.ow(t.id, O_CPU));
      if ((Atomics.load(this.i32, this.ow(t.id, O_STATE)) & ObjState.Pending) === 0 || cpu < 0) return false;
      const lock = this.timerLocks[cpu];
      lock.lock();
      if (Atomics.load(this.i32, this.ow(t.id, O_CPU)) !== cpu) {
        lock.unlock();
        continue;
      }
      const pending = this.detachLocked(cpu, t.id);
      if (pending) this.timerNext(cpu, this.jiffies());
      lock.unlock();
      return pending;
    }
  }

  private detachLocked(cpu: number, id: number): boolean {
    const i32 = this.i32;
    const n = i32[this.tb(cpu, TB_LEN)];
    for (let i = 0; i < n; i++) {
      if (i32[this.tb(cpu, TB_LIST + i)] !== id) continue;
      i32[this.tb(cpu, TB_LIST + i)] = i32[this.tb(cpu, TB_LIST + n - 1)];
      i32[this.tb(cpu, TB_LEN)] = n - 1;
      Atomics.and(i32, this.ow(id, O_STATE), ~ObjState.Pending);
      Atomics.store(i32, this.ow(id, O_CPU), -1);
      return true;
    }
    return false;
  }

  modTimer(t: Timer, expires: number): boolean {
    const was = this.delTimer(t);
    this.addTimerOn(t, this.cpu, expires);
    return was;
  }

  timerPending(t: Timer): boolean {
    return (Atomics.load(this.i32, this.ow(t.id, O_STATE)) & ObjState.Pending) !== 0;
  }

  /** TIMER_SOFTIRQ: detach every expired timer under the lock, then run them. */
  private runTimers(c: number): void {
    const j = this.jiffies();
    const lock = this.timerLocks[c];
    const i32 = this.i32;
    let k = 0;
    lock.lock();
    let n = i32[this.tb(c, TB_LEN)];
    for (let i = 0; i < n; ) {
      const id = i32[this.tb(c, TB_LIST + i)];
      if (j - i32[this.ow(id, O_ARG)] >= 0) {
        this.expired[k++] = id;
        i32[this.tb(c, TB_LIST + i)] = i32[this.tb(c, TB_LIST + n - 1)];
        n--;
        Atomics.and(i32, this.ow(id, O_STATE), ~ObjState.Pending);
        Atomics.store(i32, this.ow(id, O_CPU), -1);
      } else {
        i++;
      }
    }
    i32[this.tb(c, TB_LEN)] = n;
    this.timerNext(c, j);
    lock.unlock();
    for (let i = 0; i < k; i++) {
      this.count(CpuCounter.timers_run);
      this.callObj(this.expired[i]);
    }
  }

  // =========================================================================================
  // irq_work
  // =========================================================================================

  irqWorkQueueOn(iw: IrqWork, cpu: number): boolean {
    this.checkCpu(cpu, 'irq_work_queue_on');
    if ((Atomics.or(this.i32, this.ow(iw.id, O_STATE), ObjState.Pending) & ObjState.Pending) !== 0) return false;
    const list = this.irqWorkLists[cpu];
    const idx = list.claim();
    if (idx < 0) throw new KernelBug('irq_work list is full');
    this.i32[idx] = iw.id;
    list.publish();
    if (cpu === this.cpu) {
      // arch_irq_work_raise(): a self-IPI, taken at the next preemption point or irq exit.
      Atomics.or(this.i32, this.cw(cpu, CPU_FLAGS), CpuFlag.IrqWork);
      return true;
    }
    // Send an IPI only if none is outstanding (llist_add returned "was empty").
    if (Atomics.exchange(this.i32, this.cw(cpu, CPU_IPI_PENDING), 1) === 0) {
      this.count(CpuCounter.ipis_sent);
      this.chip.raise(cpu, Vector.Ipi, this.cpu, nowNs());
    }
    return true;
  }

  /** Run this CPU's irq_work list in hardirq context (the IPI handler, or the self-IPI). */
  private runIrqWorkList(c: number): void {
    Atomics.store(this.i32, this.cw(c, CPU_IPI_PENDING), 0); // before draining: a later add sends a new IPI
    const list = this.irqWorkLists[c];
    for (;;) {
      const idx = list.peek();
      if (idx < 0) return;
      const id = this.i32[idx];
      list.release();
      const st = this.ow(id, O_STATE);
      Atomics.store(this.i32, st, ObjState.Running); // IRQ_WORK_BUSY, PENDING cleared
      try {
        this.callObj(id);
      } finally {
        Atomics.and(this.i32, st, ~ObjState.Running);
      }
      this.count(CpuCounter.irq_works_run);
    }
  }

  // =========================================================================================
  // Control
  // =========================================================================================

  /** Look at the control region: phase changes switch recording and run workload hooks. */
  checkControl(): void {
    const e = this.newEpoch();
    if (e !== undefined) this.onReport?.(e);
    const p = Atomics.load(this.i32, this.ctl + C_PHASE) as Phase;
    if (p !== this.phase) {
      this.phase = p;
      this.tracer.on = this.opts.tracing && p === Phase.Measure;
      if (p === Phase.Warmup) this.tracer.reset();
      const th = this.plan.threads[this.threadId];
      if (th.kind === 'cpu') {
        if (p === Phase.Warmup || p === Phase.Measure) {
          // A measuring phase starts: this CPU's thread wakes the load generators placed on it.
          for (const t of this.plan.tasks) if (t.startsOnPhase && t.cpu === th.cpu) this.wakeUp(t.id);
        }
        this.workload.onPhase?.(this, p);
      }
    }
  }

  /** A new collect epoch, if any (the thread loop reports when this is not undefined). */
  newEpoch(): number | undefined {
    const e = Atomics.load(this.i32, this.ctl + C_EPOCH);
    if (e === this.epoch) return undefined;
    this.epoch = e;
    return e;
  }

  /** A collect epoch was announced that this thread has not reported yet. */
  newEpochPending(): boolean {
    return Atomics.load(this.i32, this.ctl + C_EPOCH) !== this.epoch;
  }

  /**
   * Enter a generation step (see C_GEN_INFLIGHT): true when the phase, read after entering,
   * still generates load; then call genExit() once what was generated is pushed. False: do not
   * generate (already exited).
   */
  genEnter(): boolean {
    return genEnter(this.i32, this.ctl);
  }
  genExit(): void {
    genExit(this.i32, this.ctl);
  }

  /** The phase word differs from the last one this thread acted on. */
  phaseChanged(): boolean {
    return Atomics.load(this.i32, this.ctl + C_PHASE) !== this.phase;
  }

  isStopping(): boolean {
    return Atomics.load(this.i32, this.ctl + C_STOP) !== 0;
  }

  /** Interrupt records waiting in CPU `cpu`'s IRQ ring (racy). */
  irqBacklog(cpu: number): number {
    return this.irqRings[cpu].length();
  }

  globalCount(counter: number, n = 1): void {
    Atomics.add(this.i32, this.gc + counter, n);
  }
}

/** The per-CPU deferred mix handed to strategies. */
class DeferredMix implements Deferred {
  constructor(
    private readonly rt: Runtime,
    readonly cpu: number,
  ) {}
  run(_k: Kernel): void {
    this.rt.runDeferred(this.cpu);
  }
}

/** The read-only kernel facade strategies see: the API, no internals. */
class KernelFacade implements Kernel {
  readonly #rt: Runtime;
  constructor(rt: Runtime) {
    this.#rt = rt;
  }
  get cpu(): number {
    return this.#rt.cpu;
  }
  get nrCpus(): number {
    return this.#rt.nrCpus;
  }
  get context(): 'hardirq' | 'softirq' | 'task' {
    return this.#rt.contextName();
  }
  get jiffies(): number {
    return this.#rt.jiffies();
  }
  get hz(): number {
    return this.#rt.hz;
  }
  nowNs(): number {
    return nowNs();
  }
  cpuView(cpu: number): CpuView {
    const rt = this.#rt;
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= rt.nrCpus) throw new Error(`cpuView: CPU ${cpu} does not exist`);
    return {
      idle: rt.isIdle(cpu),
      nrRunning: rt.rqs.nrRunning(cpu),
      softirqPending: Atomics.load(rt.i32, rt.cw(cpu, CPU_SOFTIRQ)),
      irqBacklog: rt.irqBacklog(cpu),
    };
  }
  queueWorkOn(cpu: number, wq: Workqueue, work: Work): boolean {
    this.#rt.checkWorkqueue('queueWorkOn', wq);
    this.#rt.checkHandle('queueWorkOn', 'work', work);
    return this.#rt.queueWorkOn(cpu, wq, work);
  }
  queueWork(wq: Workqueue, work: Work): boolean {
    this.#rt.checkWorkqueue('queueWork', wq);
    this.#rt.checkHandle('queueWork', 'work', work);
    return this.#rt.queueWorkOn(WORK_CPU_UNBOUND, wq, work);
  }
  workPending(work: Work): boolean {
    this.#rt.checkHandle('workPending', 'work', work);
    return (Atomics.load(this.#rt.i32, this.#rt.ow(work.id, O_STATE)) & ObjState.Pending) !== 0;
  }
  taskletSchedule(t: Tasklet): boolean {
    this.#rt.checkHandle('taskletSchedule', 'tasklet', t);
    return this.#rt.taskletSchedule(t, false);
  }
  taskletHiSchedule(t: Tasklet): boolean {
    this.#rt.checkHandle('taskletHiSchedule', 'tasklet', t);
    return this.#rt.taskletSchedule(t, true);
  }
  addTimerOn(timer: Timer, cpu: number, expires: number): void {
    this.#rt.checkHandle('addTimerOn', 'timer', timer);
    this.#rt.addTimerOn(timer, cpu, expires);
  }
  modTimer(timer: Timer, expires: number): boolean {
    this.#rt.checkHandle('modTimer', 'timer', timer);
    return this.#rt.modTimer(timer, expires);
  }
  timerPending(timer: Timer): boolean {
    this.#rt.checkHandle('timerPending', 'timer', timer);
    return this.#rt.timerPending(timer);
  }
  delTimer(timer: Timer): boolean {
    this.#rt.checkHandle('delTimer', 'timer', timer);
    return this.#rt.delTimer(timer);
  }
  irqWorkQueue(iw: IrqWork): boolean {
    this.#rt.checkHandle('irqWorkQueue', 'irq_work', iw);
    return this.#rt.irqWorkQueueOn(iw, this.#rt.cpu);
  }
  irqWorkQueueOn(iw: IrqWork, cpu: number): boolean {
    this.#rt.checkHandle('irqWorkQueueOn', 'irq_work', iw);
    return this.#rt.irqWorkQueueOn(iw, cpu);
  }
  raiseSoftirq(nr: number): void {
    if (!Number.isInteger(nr) || nr < 0 || nr > 9) throw new Error(`raiseSoftirq: vector must be 0..9 (got ${nr})`);
    this.#rt.raiseSoftirq(nr);
  }
  mightSleep(): void {
    const ctx = this.#rt.contextName();
    if (ctx !== 'task') {
      throw new KernelBug(`BUG: sleeping function called from invalid context (${ctx}) on CPU ${this.#rt.cpu}`);
    }
  }
}

/** The message for a hand-off that returned something other than a boolean. */
function badHandoffReturn(v: unknown): string {
  if (typeof (v as { then?: unknown })?.then === 'function')
    return 'handoff() returned a Promise: strategies run synchronously inside the emulated CPU, whose loop never yields to the event loop while the machine runs (async, await, setTimeout and Promise callbacks never resume); do the work with the kernel API and return true or false';
  const got = v === undefined ? 'undefined (no return value)' : typeof v === 'string' ? JSON.stringify(v) : String(v);
  return `handoff() returned ${got}, not a boolean: return true when the mix was queued (it will run once), false when it was already pending (as queue_work_on does)`;
}

/** A short description of a value a strategy passed, for messages. */
function describeArg(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object') {
    const kind = (v as { kind?: unknown }).kind;
    return kind === undefined
      ? 'an object with no kind'
      : `an object of kind ${JSON.stringify(kind)}, not created here`;
  }
  return `${typeof v} ${JSON.stringify(v)}`;
}
