/**
 * One thread's emulated CPU: ownership, interrupt entry and exit, and the control loop; the
 * kernel itself is in src/kernel/ (one file per subsystem) and random.c's driver half in
 * src/random/driver.ts, all built here over one narrow context (src/kernel/context.ts).
 *
 * Every thread that can own a CPU (CPU threads, kthreads) builds one Runtime over the shared
 * buffer. A device interrupt's path: the irqchip's record in the CPU's IRQ ring and its
 * IRQ_PENDING flag (irqchip.ts) → `poll()` at a preemption point → `interrupt()` (hardirq) →
 * the random driver's `interrupt()` → the strategy's handoff() → a kernel object → irq_exit
 * (softirqs) → the deferred job, wherever the strategy put it → `driver.runDeferred()`.
 */
import type { DeferralStrategy, IrqWork, Kernel, StrategySetup } from '../api/types.js';
import { nowNs } from '../clock.js';
import { Arrivals, IrqChip, recordTime, Vector } from '../hw/irqchip.js';
import {
  ARR_R_IRQ,
  C_EPOCH,
  C_PHASE,
  C_STOP,
  CPU_FLAGS,
  CPU_HEARTBEAT,
  CPU_ON_CPU,
  CPU_OWNER,
  CPU_WORDS,
  CPUF_NIC_DUE,
  CPUF_SWITCH_NS,
  CpuCounter,
  CpuFlag,
  genEnter,
  genExit,
  IRQ_R_ARG,
  IRQ_R_VECTOR,
  type MachineRegions,
  Phase,
  Softirq,
  TaskState,
  Where,
} from '../hw/layout.js';
import { TlWhat, timelineOf } from '../hw/timeline.js';
import { St, Tracer } from '../hw/trace.js';
import { CpuContext } from '../kernel/context.js';
import { type BuiltMechanism, buildMechanisms, kernelFacade, partOf, strategySetup } from '../kernel/facade.js';
import { type IrqWorks, mechanism as irqWorkMechanism } from '../kernel/irq_work.js';
import type { KernelBase, Mechanism } from '../kernel/mechanism.js';
import { KernelBug, Objects } from '../kernel/objects.js';
import { kernelProfile } from '../kernel/profiles.js';
import { MECHANISMS } from '../kernel/registry.js';
import { Scheduler } from '../kernel/sched/core.js';
import { RunQueues } from '../kernel/sched/rq.js';
import { taskPlacementOf } from '../kernel/sched/select.js';
import { Softirqs } from '../kernel/softirq.js';
import { type Tasklets, mechanism as taskletMechanism } from '../kernel/tasklet.js';
import { type Timers, mechanism as timerMechanism } from '../kernel/timer.js';
import { type Workqueues, mechanism as workqueueMechanism } from '../kernel/workqueue.js';
import { RandomDriver } from '../random/driver.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { MpscRing } from '../shm/ring.js';
import type { WorkloadAttachment } from '../workloads/workload.js';
import { GrowthCollector } from './full-gc.js';
import { type HostStalls, hostStallsOf } from './host-stall.js';
import { KickParts } from './kick-parts.js';
import { fairPolicyOf, type MachineOptions } from './options.js';
import type { MachinePlan } from './plan.js';
import { chargeSwitch } from './switch-floor.js';

/** The flags that mean "take an interrupt". */
const IRQ_FLAGS = CpuFlag.IrqPending | CpuFlag.Tick | CpuFlag.IrqWork;

export class Runtime {
  readonly ctx: CpuContext;
  readonly i32: Int32Array;
  readonly bells: Doorbell[] = [];
  readonly chip: IrqChip;
  readonly objects: Objects;
  readonly sched: Scheduler;
  readonly softirqs: Softirqs;
  /** The kernel's mechanisms, each with the part this thread built (src/kernel/registry.ts). */
  readonly built: BuiltMechanism[];
  /** Shortcuts to the built-in mechanisms' parts (tests and the thread's start-up use them). */
  readonly tasklets: Tasklets;
  readonly timers: Timers;
  readonly workqueues: Workqueues;
  readonly irqWorks: IrqWorks;
  readonly driver: RandomDriver;
  readonly facade: Kernel;
  workload: WorkloadAttachment = { task: () => undefined };
  /** Posts this thread's histograms for a new collect epoch (set by the thread's start-up). */
  onReport: ((epoch: number) => void) | undefined;
  /** Host stalls and GC on this thread (src/machine/host-stall.ts). */
  readonly stalls: HostStalls;
  /** A wake-up onto this thread's halted CPU in parts (wake_to_kick, kick_to_run). */
  readonly kick = new KickParts();
  private readonly growth = new GrowthCollector(); // a full GC at a trial's end after growth (full-gc.ts)
  /** Control values last seen. */
  phase = Phase.Boot;
  epoch = 0;

  private readonly base: KernelBase;
  /** The mechanisms' hooks for a tick and for an IPI (MechanismHooks), in registry order. */
  private readonly tickHooks: readonly ((c: number) => void)[];
  private readonly ipiHooks: readonly ((c: number) => void)[];
  /** Device-interrupt arrivals published ahead by the irq thread (irqchip.ts). */
  readonly arrivals: Arrivals;
  private readonly irqRings: MpscRing[] = [];
  private readonly ctl: number;
  /** --switch-cost's floor, emulated ns (0: none; MachineOptions.switchFloorNs). */
  private readonly switchFloorNs: number;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly R: MachineRegions,
    readonly plan: MachinePlan,
    readonly opts: MachineOptions,
    readonly threadId: number,
    clock: () => number = nowNs,
  ) {
    const ctx = new CpuContext(sab, R, opts.cpus, opts.hz, clock, new Tracer(opts.tracing));
    const profile = kernelProfile(opts.kernel);
    this.ctx = ctx;
    this.switchFloorNs = opts.switchFloorNs ?? 0;
    ctx.timeline = timelineOf(ctx.i32, ctx.f64, R, threadId, clock);
    this.i32 = ctx.i32;
    this.ctl = R.control;
    for (let t = 0; t < plan.threads.length; t++)
      this.bells.push(new Doorbell(this.i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    for (let c = 0; c < opts.cpus; c++) this.irqRings.push(new MpscRing(this.i32, R.irqRings[c]));
    const cpuBells = this.bells.slice(0, opts.cpus);
    this.chip = new IrqChip(this.i32, R.cpu, R.globalCounters, this.irqRings, cpuBells, opts.notify);
    this.arrivals = new Arrivals(this.i32, R.arrivals);
    const isKthread = Uint8Array.from(plan.tasks, (t) =>
      t.kind === 'kworker' || t.kind === 'unbound' || t.kind === 'ksoftirqd' ? 1 : 0,
    );
    const rqs = RunQueues.of(this.i32, ctx.f64, R, opts.cpus, opts.lockSpins, fairPolicyOf(opts), opts.hz);
    this.objects = new Objects(ctx);
    this.sched = new Scheduler(
      ctx,
      rqs,
      isKthread,
      (cpu, next, now) => this.switchTo(cpu, next, now),
      (cpu) => this.chip.kick(cpu),
    );
    this.stalls = hostStallsOf(ctx, opts.hostStalls, this.sched, plan.threads[threadId]?.cpu ?? -1);
    this.sched.placement = taskPlacementOf(opts.cpus, opts.topology.cache, plan.tasks, {
      idle: (c) => this.sched.isIdle(c),
      nrRunning: (c) => rqs.nrRunning(c),
    });
    this.softirqs = new Softirqs(ctx, this.sched, plan.ksoftirqd, () => this.pollIrq(), {
      ksoftirqdDefers: opts.softirqDefer ?? profile.softirq.ksoftirqdDefers, // --softirq-defer
    });
    // Each mechanism builds its part, in registry order: softirq actions run in the order they
    // are opened (tasklets before BH workqueues, 6.9's order).
    const base: KernelBase = {
      ctx,
      objects: this.objects,
      sched: this.sched,
      softirqs: this.softirqs,
      chip: this.chip,
      plan,
      topology: opts.topology,
      profile,
      lockSpins: opts.lockSpins,
    };
    this.base = base;
    ({ built: this.built, tickHooks: this.tickHooks, ipiHooks: this.ipiHooks } = buildMechanisms(base, MECHANISMS));
    this.tasklets = this.part(taskletMechanism);
    this.timers = this.part(timerMechanism);
    this.workqueues = this.part(workqueueMechanism);
    this.irqWorks = this.part(irqWorkMechanism);
    this.softirqs.open(Softirq.NetTx, () => this.workload.netTx?.(this));
    this.softirqs.open(Softirq.NetRx, () => this.workload.netRx?.(this));
    this.driver = new RandomDriver(ctx, opts.fastPool.variant, opts.payload, opts.lockSpins, (task, ns) =>
      rqs.addWork(task, ns),
    );
    this.facade = kernelFacade(base, (cpu) => this.irqBacklog(cpu), this.built);
    this.objects.facade = this.facade;
    this.driver.facade = this.facade;
    // The application tasks of each CPU (tcp_lat's, a hog): is one running or runnable there?
    const apps = Array.from({ length: opts.cpus }, (_, c) =>
      Int32Array.from(plan.tasks.filter((t) => t.kind === 'app' && t.cpu === c).map((t) => t.id)),
    );
    this.driver.appRunnable = (c) => {
      const ids = apps[c];
      for (let k = 0; k < ids.length; k++) if (rqs.state(ids[k]) === TaskState.Runnable) return true;
      return false;
    };
  }

  // --- the context, for hosted tasks and workloads ------------------------------------------
  get cpu(): number {
    return this.ctx.cpu;
  }
  get task(): number {
    return this.ctx.task;
  }
  get tracer(): Tracer {
    return this.ctx.tracer;
  }
  get strategies(): DeferralStrategy[] {
    return this.driver.strategies;
  }
  now(): number {
    return this.ctx.now();
  }
  count(counter: number, n = 1): void {
    this.ctx.count(counter, n);
  }
  isStopping(): boolean {
    return Atomics.load(this.i32, this.ctl + C_STOP) !== 0;
  }
  /** Interrupt records waiting in CPU `cpu`'s IRQ ring (racy). */
  irqBacklog(cpu: number): number {
    return this.irqRings[cpu].length();
  }
  globalCount(counter: number, n = 1): void {
    Atomics.add(this.i32, this.R.globalCounters + counter, n);
  }
  /** An irq_work owned by the workload (created in every thread in the same order). */
  createWorkloadIrqWork(name: string, fn: (k: Kernel) => void): IrqWork {
    return { kind: 'irq_work', id: this.objects.create('irq_work', name, fn, -1), name };
  }
  /** The setup context strategy `index` receives. */
  setupFor(index: number, options: Record<string, string | number | boolean>): StrategySetup {
    return strategySetup(this.base, this.built, index, options, (cpu) => this.driver.deferred[cpu]);
  }

  /** The part this thread built of mechanism `m`. */
  part<P>(m: Mechanism<P>): P {
    return partOf(this.built, m);
  }

  // =========================================================================================
  // Ownership: a context switch is a real hand-off of the CPU between threads (or tasks of one)
  // =========================================================================================

  /** The thread starts executing as `task` on `cpu` (it found OWNER == task). */
  enterCpu(cpu: number, task: number): void {
    const was = Atomics.add(this.i32, this.ctx.cw(cpu, CPU_ON_CPU), 1);
    if (was !== 0) throw new KernelBug(`two owners on CPU ${cpu} at once (task ${task} found ${was} already running)`);
    this.ctx.cpu = cpu;
    this.ctx.task = task;
    const sw = this.ctx.f64[this.ctx.cf(cpu, CPUF_SWITCH_NS)];
    let now = this.ctx.now(); // one clock read: the switch's end and the task's run-time start
    // --switch-cost: a switch lasts at least the host kernel's (a model; src/machine/switch-floor.ts).
    if (this.switchFloorNs > 0) now = chargeSwitch(sw, now, this.switchFloorNs, this.ctx.now);
    const woken = this.sched.finishTaskSwitch(cpu, task, now); // its run time starts now, not at the pick
    this.stalls.arm(now);
    this.ctx.timeline.begin(TlWhat.Task, cpu, task);
    if (sw > 0) this.ctx.tracer.record(St.CtxSwitch, now - sw);
    if (woken < 0) return;
    this.ctx.tracer.record(St.WakeupToRun, woken); // try_to_wake_up → running
    this.kick.taskRuns(this.ctx.tracer, now, woken);
  }

  /** Stop executing on the current CPU without handing it over (run ends). */
  leaveCpu(): void {
    if (this.ctx.cpu < 0) return;
    this.stalls.disarm();
    this.ctx.timeline.end(TlWhat.Task, this.ctx.cpu, this.ctx.task);
    Atomics.sub(this.i32, this.ctx.cw(this.ctx.cpu, CPU_ON_CPU), 1);
    this.ctx.cpu = -1;
    this.ctx.task = -1;
  }

  /** Hand CPU `cpu` to `next`: the context switch. The caller stops executing on it. */
  private switchTo(cpu: number, next: number, now: number): void {
    const ctx = this.ctx;
    ctx.timeline.end(TlWhat.Task, cpu, ctx.task, next, now);
    this.stalls.disarm();
    ctx.f64[ctx.cf(cpu, CPUF_SWITCH_NS)] = now;
    Atomics.sub(this.i32, ctx.cw(cpu, CPU_ON_CPU), 1);
    ctx.cpu = -1;
    ctx.task = -1;
    Atomics.store(this.i32, ctx.cw(cpu, CPU_OWNER), next); // publishes all this thread wrote as owner
    const nt = this.plan.tasks[next].thread;
    if (nt !== this.threadId) this.bells[nt].ring();
  }

  // =========================================================================================
  // Preemption points and interrupts
  // =========================================================================================

  /**
   * A preemption point: handle whatever is flagged on the current CPU. Returns true when the
   * caller still owns the CPU as the same task. Context: task context on the owner.
   */
  poll(): boolean {
    const ctx = this.ctx;
    const c = ctx.cpu;
    const b = this.R.cpu + c * CPU_WORDS;
    this.i32[b + CPU_HEARTBEAT]++;
    const f = Atomics.load(this.i32, b + CPU_FLAGS);
    const now = ctx.now();
    this.stalls.at(now); // a gap since the last preemption point above the threshold: a host stall
    if (f === 0 && this.arrivals.dueAt(c, now) < 0 && ctx.f64[ctx.cf(c, CPUF_NIC_DUE)] > now) return true;
    return this.handleFlags(f, now);
  }

  /** A device interrupt is due on CPU `c` now (an arrival's due time, or its NIC's, has come). */
  arrivalDue(c: number, now: number = this.ctx.now()): boolean {
    return this.arrivals.dueAt(c, now) >= 0 || this.ctx.f64[this.ctx.cf(c, CPUF_NIC_DUE)] <= now;
  }

  /** When CPU `c`'s next device interrupt is due: an arrival or its NIC (+Infinity: none known). */
  nextDeviceDue(c: number): number {
    const a = this.arrivals.nextDue(c);
    const n = this.ctx.f64[this.ctx.cf(c, CPUF_NIC_DUE)];
    return Math.min(a, n);
  }

  /** NicPost: a packet was posted to CPU `c`'s NIC; its owner recomputes when the NIC fires. */
  private nicPosted(c: number): void {
    Atomics.and(this.i32, this.ctx.cw(c, CPU_FLAGS), ~CpuFlag.NicPost);
    this.workload.nic?.recompute(c);
  }

  private handleFlags(f: number, now: number): boolean {
    const ctx = this.ctx;
    const task = ctx.task;
    // Control first: a phase change (Measure → Drain) must switch recording off before the
    // interrupts and ticks that arrived with it are handled.
    if ((f & CpuFlag.Control) !== 0) {
      Atomics.and(this.i32, ctx.cw(ctx.cpu, CPU_FLAGS), ~CpuFlag.Control);
      this.checkControl();
    }
    if ((f & CpuFlag.NicPost) !== 0) this.nicPosted(ctx.cpu);
    if ((f & IRQ_FLAGS) !== 0 || this.arrivalDue(ctx.cpu, now)) this.interrupt();
    if (
      ctx.hardirq === 0 &&
      ctx.softirq === 0 &&
      (Atomics.load(this.i32, ctx.cw(ctx.cpu, CPU_FLAGS)) & CpuFlag.NeedResched) !== 0
    ) {
      this.sched.schedule();
    }
    return ctx.task === task && task >= 0;
  }

  /**
   * Inside softirq processing: take hard interrupts (they are enabled there), nothing else.
   * Softirq actions that loop over many items call it between items. Context: softirq on the owner.
   */
  pollIrq(): void {
    const c = this.ctx.cpu;
    const f = Atomics.load(this.i32, this.ctx.cw(c, CPU_FLAGS));
    const now = this.ctx.now();
    this.stalls.at(now);
    if ((f & CpuFlag.NicPost) !== 0) this.nicPosted(c);
    if ((f & IRQ_FLAGS) !== 0 || this.arrivalDue(c, now)) this.interrupt();
  }

  /** Hard-IRQ entry: clear the flags first, then handle; then irq_exit. */
  interrupt(): void {
    const ctx = this.ctx;
    const c = ctx.cpu;
    const old = Atomics.and(this.i32, ctx.cw(c, CPU_FLAGS), ~IRQ_FLAGS);
    ctx.timeline.begin(TlWhat.Hardirq, c, old);
    ctx.hardirq++;
    const prevWhere = ctx.setWhere(c, Where.Hardirq);
    try {
      if ((old & CpuFlag.IrqPending) !== 0) this.drainIrqRing(c);
      this.takeArrivals(c);
      const nic = this.workload.nic;
      if (nic !== undefined) {
        const now = ctx.now();
        if (ctx.f64[ctx.cf(c, CPUF_NIC_DUE)] <= now) nic.takeIrq(c, now);
      }
      if ((old & CpuFlag.IrqWork) !== 0) for (let i = 0; i < this.ipiHooks.length; i++) this.ipiHooks[i](c);
      if ((old & CpuFlag.Tick) !== 0) for (let i = 0; i < this.tickHooks.length; i++) this.tickHooks[i](c);
    } catch (e) {
      ctx.faultAt ??= { context: 'hardirq', cpu: c };
      throw e;
    } finally {
      ctx.hardirq--;
      ctx.setWhere(c, prevWhere);
    }
    ctx.timeline.end(TlWhat.Hardirq, c);
    this.softirqs.irqExit();
  }

  /** Handle every record in CPU `c`'s IRQ ring. Context: hardirq on `c`. */
  private drainIrqRing(c: number): void {
    const ring = this.irqRings[c];
    const i32 = this.i32;
    const ctx = this.ctx;
    const tr = ctx.tracer;
    ctx.count(CpuCounter.irq_entries);
    for (;;) {
      const idx = ring.peek();
      if (idx < 0) return;
      const vector = i32[idx + IRQ_R_VECTOR];
      const arg = i32[idx + IRQ_R_ARG];
      const raised = recordTime(i32, idx);
      const t = ctx.now();
      ctx.timeline.begin(TlWhat.Irq, c, vector, arg, t);
      tr.record(St.IrqEntry, t - raised);
      if (vector === Vector.Ipi) {
        ctx.count(CpuCounter.ipis_received);
        for (let i = 0; i < this.ipiHooks.length; i++) this.ipiHooks[i](c);
      } else {
        this.driver.interrupt(arg, t);
      }
      // Released only once handled: until then the record keeps the ring non-empty, so the
      // drain (Machine.busy) cannot miss an interrupt that is being handled. What the handler
      // left behind (a hand-off's CPU_DEFERRED, a raised softirq) is published before this.
      ring.release();
      ctx.timeline.end(TlWhat.Irq, c, vector);
      if (tr.on) tr.record(St.Hardirq, ctx.now() - t);
    }
  }

  /**
   * Handle every device interrupt whose arrival is due on CPU `c` (the clock read once: what
   * comes due meanwhile is taken at the next preemption point). Raise time = due time, so
   * irq_entry is the machine's lateness in taking it. Context: hardirq on `c`.
   */
  private takeArrivals(c: number): void {
    const ctx = this.ctx;
    const arr = this.arrivals;
    const tr = ctx.tracer;
    const now = ctx.now();
    let idx = arr.dueAt(c, now);
    if (idx < 0) return;
    ctx.count(CpuCounter.irq_entries);
    const i32 = this.i32;
    // One clock read per arrival: a handler's end is the next one's start.
    let t = now;
    do {
      ctx.timeline.begin(TlWhat.Irq, c, Vector.Device, i32[idx + ARR_R_IRQ], t);
      tr.record(St.IrqEntry, t - arr.dueOf(idx));
      this.driver.interrupt(i32[idx + ARR_R_IRQ], t);
      // Released once handled, like an IRQ ring record: the drain cannot miss it meanwhile.
      arr.release(c);
      const end = ctx.now();
      ctx.timeline.end(TlWhat.Irq, c, Vector.Device, 0, end);
      if (tr.on) tr.record(St.Hardirq, end - t);
      t = end;
      idx = arr.dueAt(c, now);
    } while (idx >= 0);
  }

  // =========================================================================================
  // Control
  // =========================================================================================

  /** Look at the control region: phase changes switch recording and run workload hooks. */
  checkControl(): void {
    const e = this.newEpoch();
    if (e !== undefined) this.onReport?.(e);
    const p = Atomics.load(this.i32, this.ctl + C_PHASE) as Phase;
    if (p === this.phase) return;
    this.phase = p;
    const tr = this.ctx.tracer;
    // Recording runs in the warm-up too, and what it recorded is dropped when Measure starts: the
    // recording path (clock reads, the WASM histograms) is then as warm as the rest at a
    // machine's first measured trial. With recording off in the warm-up, that trial's mean came
    // out ~30% above the later trials' (tcp_lat 64 B inline, poll, after a 1.5 s warm-up).
    this.stalls.takeGc(); // the ending phase's GCs, into its stage (a Measure's are kept, a warm-up's reset)
    if (p === Phase.Pause) this.growth.atPause(); // between trials: the GC profilers' leak (full-gc.ts)
    tr.on = this.opts.tracing && (p === Phase.Warmup || p === Phase.Measure);
    this.ctx.timeline.phase(p);
    if (p === Phase.Measure) tr.reset();
    const th = this.plan.threads[this.threadId];
    if (th.kind !== 'cpu') return;
    if (p === Phase.Warmup || p === Phase.Measure) {
      // A measuring phase starts: this CPU's thread wakes the load generators placed on it.
      for (const t of this.plan.tasks) if (t.startsOnPhase && t.cpu === th.cpu) this.sched.wakeUp(t.id);
    }
    this.workload.onPhase?.(this, p);
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
}
