/**
 * The emulated machine's shared memory, seen from the main thread: plan and initialise every
 * region (src/machine/layout.ts), and read it back: counters, what is still in flight (the
 * drain's `busy()`), per-CPU state for the watchdog and fault reports.
 *
 * `MachineMemory.build(opts)` gives a machine's memory with no thread started: the kernel's
 * single-thread tests (test/kernel/) build a Runtime over it with a fake clock. `Machine`
 * (machine.ts) extends it with the threads.
 *
 * Context: main thread. Reads of words other threads write are Atomics loads (racy snapshots).
 */

import { RunQueues } from '../kernel/sched/rq.js';
import { FAST_POOL_FIELDS, FAST_POOL_WORDS, FastPool, initFastPool } from '../random/fastpool.js';
import { InputPool } from '../random/inputpool.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { ShmLock } from '../shm/lock.js';
import { MpscRing, SpscRing } from '../shm/ring.js';
import { type Workload, workloadOf } from '../workloads/index.js';
import { ARRIVAL_RECORD_WORDS, ARRIVAL_RING_CAPACITY, C_ACTIVE, C_FAULT, C_GEN_INFLIGHT, C_IRQ_CPU_NS, C_PHASE, C_TRIGGER, CPU_COUNTER_NAMES, CPU_COUNTERS, CPU_DEFERRED, CPU_F64, CPU_FLAGS, CPU_HEARTBEAT, CPU_NEXT_TIMER, CPU_NEXT_TIMER_ANY, CPU_OWNER, CPU_SOFTIRQ, CPU_WHERE, CPU_WORDS, CPUF_NIC_DUE, GLOBAL_COUNTER_NAMES, IRQ_RECORD_WORDS, IRQ_RING_CAPACITY, type MachineRegions, Phase, REQUEST_RECORD_WORDS, REQUEST_RING_CAPACITY, SOFTIRQ_NAMES, Where } from '../hw/layout.js';
import { MAX_OBJECTS, O_CPU, OBJ_WORDS } from '../kernel/objects.js';
import { POOL_WORDS } from '../kernel/workqueue.js';
import { TIMER_BASE_WORDS, timerNone } from '../kernel/timer.js';
import { assertLayoutSound, RECORD_FIELDS } from '../hw/layout-fields.js';
import { fairPolicyOf, type MachineOptions } from './options.js';
import { type MachinePlan, planMachineTasks } from './plan.js';
import { initTimelineRing } from '../hw/timeline.js';
import { planMachine } from './regions.js';

export type Counters = Record<string, number>;

export class MachineMemory {
  readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  /** The workload the machine runs (src/workloads/). */
  readonly workload: Workload;
  protected readonly bells: Doorbell[] = [];
  protected readonly inputPool: InputPool;
  protected readonly fastPools: FastPool[] = [];
  protected readonly rqs: RunQueues;

  protected constructor(
    readonly opts: MachineOptions,
    readonly sab: SharedArrayBuffer,
    readonly R: MachineRegions,
    readonly plan: MachinePlan,
  ) {
    this.workload = workloadOf(opts);
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
    this.rqs = RunQueues.of(this.i32, this.f64, R, opts.cpus, opts.lockSpins, fairPolicyOf(opts), opts.hz);
    for (let t = 0; t < plan.threads.length; t++)
      this.bells.push(new Doorbell(this.i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    this.inputPool = new InputPool(this.i32, R.inputPool, opts.lockSpins);
  }

  /** Plan the regions of a machine with these options and allocate the buffer. */
  protected static layout(opts: MachineOptions): { plan: MachinePlan; sab: SharedArrayBuffer; R: MachineRegions } {
    assertLayoutSound({ ...RECORD_FIELDS, fastPool: FAST_POOL_FIELDS });
    const plan = planMachineTasks(opts);
    const { sab, regions } = planMachine({
      cpus: opts.cpus,
      tasks: plan.tasks.length,
      threads: plan.threads.length,
      pools: plan.pools.length,
      workloadRegions: workloadOf(opts).regions(),
      timelineRecords: opts.timelineRecords ?? 0,
      requestRings: opts.payload?.kind === 'driver_work',
    });
    return { plan, sab, R: regions };
  }

  /** A machine's memory, initialised, with no thread started (single-thread tests). */
  static build(opts: MachineOptions): MachineMemory {
    const { plan, sab, R } = MachineMemory.layout(opts);
    const m = new MachineMemory(opts, sab, R, plan);
    m.init();
    return m;
  }

  /** Lay out every region. Context: main thread, before any worker exists. */
  protected init(): void {
    const { i32, R, opts, plan } = this;
    const sizes = new Map(Object.values(R.map.regions).map((r) => [r.base, r.words]));
    const words = (base: number) => sizes.get(base);
    for (let c = 0; c < opts.cpus; c++) {
      const b = R.cpu + c * CPU_WORDS;
      i32[b + CPU_OWNER] = c; // the idle task
      i32[b + CPU_NEXT_TIMER] = timerNone(0);
      i32[b + CPU_NEXT_TIMER_ANY] = timerNone(0);
      this.f64[R.cpuF64 / 2 + c * CPU_F64 + CPUF_NIC_DUE] = Number.POSITIVE_INFINITY;
      this.rqs.initCpu(c);
      ShmLock.init(i32, R.timerBase + c * TIMER_BASE_WORDS);
      MpscRing.init(i32, R.irqRings[c], IRQ_RING_CAPACITY, IRQ_RECORD_WORDS, words(R.irqRings[c]));
      SpscRing.init(i32, R.arrivals[c], ARRIVAL_RING_CAPACITY, ARRIVAL_RECORD_WORDS, words(R.arrivals[c]));
      MpscRing.init(i32, R.irqWorkLists[c], MAX_OBJECTS, 1, words(R.irqWorkLists[c]));
      MpscRing.init(i32, R.taskletLists[2 * c], MAX_OBJECTS, 1, words(R.taskletLists[2 * c]));
      MpscRing.init(i32, R.taskletLists[2 * c + 1], MAX_OBJECTS, 1, words(R.taskletLists[2 * c + 1]));
      if (R.requestRings.length)
        SpscRing.init(i32, R.requestRings[c], REQUEST_RING_CAPACITY, REQUEST_RECORD_WORDS, words(R.requestRings[c]));
      initFastPool(i32, R.fastPools + c * FAST_POOL_WORDS, opts.fastPool.variant, c);
      this.fastPools.push(new FastPool(i32, R.fastPools + c * FAST_POOL_WORDS, opts.fastPool.variant));
    }
    for (const t of plan.tasks) this.rqs.initTask(t.id, t.cpu, t.policy, t.nice, t.rtPrio);
    for (let t = 0; t < plan.threads.length; t++) Doorbell.init(i32, R.bells + t * DOORBELL_WORDS);
    for (const p of plan.pools) {
      ShmLock.init(i32, R.pools + p.id * POOL_WORDS);
      MpscRing.init(i32, R.poolLists[p.id], MAX_OBJECTS, 1, words(R.poolLists[p.id]));
    }
    for (let o = 0; o < MAX_OBJECTS; o++) i32[R.objects + o * OBJ_WORDS + O_CPU] = -1; // on no CPU
    InputPool.init(i32, R.inputPool);
    for (const base of R.timeline) initTimelineRing(i32, base, opts.timelineRecords ?? 0);
    this.workload.init(i32, R.workload, words);
    i32[R.control + C_ACTIVE] = 0;
    i32[R.control + C_TRIGGER] = opts.fastPool.trigger;
    i32[R.control + C_PHASE] = Phase.Boot;
  }

  /** Counters summed over CPUs, plus the global ones, the doorbells', the lock's and the pools'. */
  counters(): Counters {
    const out: Counters = {};
    const i32 = this.i32;
    CPU_COUNTER_NAMES.forEach((name, k) => {
      let s = 0;
      for (let c = 0; c < this.opts.cpus; c++) s += Atomics.load(i32, this.R.cpu + c * CPU_WORDS + CPU_COUNTERS + k);
      out[name] = s;
    });
    GLOBAL_COUNTER_NAMES.forEach((name, k) => {
      out[name] = Atomics.load(i32, this.R.globalCounters + k);
    });
    let sent = 0;
    let avoided = 0;
    let spurious = 0;
    for (const b of this.bells) {
      const s = b.stats();
      sent += s.sent;
      avoided += s.avoided;
      spurious += s.spurious;
    }
    out.notifies_sent = sent;
    out.notifies_avoided = avoided;
    out.spurious_wakeups = spurious;
    const ip = this.inputPool;
    out.entropy_bits = ip.creditedBitsTotal;
    out.input_pool_mixes = ip.mixes;
    out.input_pool_lock_contended = ip.lockStats().contended;
    out.mixes_wrong_cpu = this.fastPools.reduce((a, f) => a + f.wrongCpu, 0);
    out.irq_thread_cpu_ns = this.f64[(this.R.control + C_IRQ_CPU_NS) / 2];
    return out;
  }

  /** One CPU's counters (the per-CPU ones only). */
  cpuCounters(cpu: number): Counters {
    const out: Counters = {};
    CPU_COUNTER_NAMES.forEach((name, k) => {
      out[name] = Atomics.load(this.i32, this.R.cpu + cpu * CPU_WORDS + CPU_COUNTERS + k);
    });
    return out;
  }

  /** Ticks at which `task` was running (its CPU share in slices). */
  ticks(task: number): number {
    return this.rqs.ticks(task);
  }

  /** Clock (ns since the run's epoch) at which the input pool first reached 256 bits, or -1. */
  inputPoolReadyAtNs(): number {
    return this.inputPool.readyAtNs;
  }

  /** Re-initialise the input pool and the fast pools' counts (between trials, while quiet). */
  resetEntropy(): void {
    InputPool.init(this.i32, this.R.inputPool);
    this.onlineCpus();
  }

  /**
   * random_online_cpu() on every CPU: zero each fast pool's count, MIX_INFLIGHT included. A
   * mix that ran on the wrong CPU leaves MIX_INFLIGHT set (random.c ignores it), which stops
   * that CPU's hand-offs until the CPU comes back online; tests that move work between CPUs
   * call this to keep hand-offs flowing. Racy against a running owner's count++ (a lost
   * increment at worst), like a hotplug event.
   */
  onlineCpus(): void {
    for (const f of this.fastPools) f.randomOnlineCpu();
  }

  /**
   * Each CPU's fast pool count word, MIX_INFLIGHT included: what a strategy leaves at the end of
   * a slice (read while quiet), given back at its next slice ({@link setFastPoolCounts}), so that
   * a strategy whose mixes run on the wrong CPU (unbound) stops its own hand-offs for the rest of
   * its trial, as in a whole trial, and not the next strategy's.
   */
  fastPoolCounts(): number[] {
    return this.fastPools.map((f) => f.countWord);
  }

  /** Put back counts from {@link fastPoolCounts}. Context: main thread, machine quiet. */
  setFastPoolCounts(counts: readonly number[]): void {
    this.fastPools.forEach((f, c) => {
      f.countWord = counts[c];
    });
  }

  /**
   * Is the machine quiet: no deferred mix pending, no work queued anywhere, no interrupt or
   * softirq pending, no workload message in flight? Returns what is still busy, or ''.
   */
  busy(): string {
    const i32 = this.i32;
    // The order of the loads matters: each stage of a job is published (Atomics) before the
    // stage that feeds it lets go, so reading upstream first cannot miss a job in between.
    // 1. Generators: none may still act on the measuring phase (C_GEN_INFLIGHT).
    if (Atomics.load(i32, this.R.control + C_GEN_INFLIGHT) !== 0) return 'a load generator is still generating';
    // 1b. The workload's own messages (e.g. a tcp_lat exchange in flight).
    const wl = this.workload.busy(i32, this.R.workload);
    if (wl) return wl;
    // 2. Queues: an interrupt record leaves its ring only after its handler ran (runtime.ts,
    //    drainIrqRing), so a hand-off it made is in CPU_DEFERRED below before the ring shows 0.
    for (let c = 0; c < this.opts.cpus; c++) {
      // Arrivals published ahead by the irq thread are delivered when due, drain or not.
      if (new SpscRing(i32, this.R.arrivals[c]).length() !== 0) return `device interrupts due on CPU ${c}`;
      if (new MpscRing(i32, this.R.irqRings[c]).length() !== 0) return `interrupts pending on CPU ${c}`;
      if (new MpscRing(i32, this.R.irqWorkLists[c]).length() !== 0) return `irq_work pending on CPU ${c}`;
    }
    for (const p of this.plan.pools)
      if (new MpscRing(i32, this.R.poolLists[p.id]).length() !== 0)
        return `work queued on pool ${p.id} (${p.kind}, CPU ${p.cpu})`;
    // 3. Per-CPU deferred jobs and softirqs.
    for (let c = 0; c < this.opts.cpus; c++) {
      const b = this.R.cpu + c * CPU_WORDS;
      if (Atomics.load(i32, b + CPU_DEFERRED) !== 0) return `a deferred mix handed off on CPU ${c} has not run`;
      if (Atomics.load(i32, b + CPU_SOFTIRQ) !== 0) return `softirqs pending on CPU ${c}`;
    }
    // 4. A job popped from its list is done only once it has been counted.
    const c = this.counters();
    if (c.mixes < c.handoffs) return `${c.handoffs - c.mixes} accepted hand-offs have not finished running`;
    if (c.works_run < c.works_queued)
      return `${c.works_queued - c.works_run} queued work items have not finished running`;
    return '';
  }

  /** A one-paragraph dump of every CPU and task, for fault reports and debugging. */
  debugState(): string {
    const i32 = this.i32;
    const lines: string[] = [];
    for (let c = 0; c < this.opts.cpus; c++) {
      const b = this.R.cpu + c * CPU_WORDS;
      lines.push(
        `cpu${c}: owner=${this.taskName(i32[b + CPU_OWNER])} flags=${i32[b + CPU_FLAGS]} softirq=${i32[b + CPU_SOFTIRQ]} deferred=${i32[b + CPU_DEFERRED]} where=${i32[b + CPU_WHERE]} hb=${i32[b + CPU_HEARTBEAT]} nr_running=${this.rqs.nrRunning(c)} curr=${this.taskName(this.rqs.curr(c))} bell=${this.bells[c].isSleeping() ? 'sleeping' : 'awake'}`,
      );
    }
    for (const t of this.plan.tasks)
      lines.push(
        `  ${t.name}: state=${this.rqs.state(t.id)} cpu=${this.rqs.taskCpu(t.id)} slices=${this.rqs.slices(t.id)}`,
      );
    return lines.join('\n');
  }

  /** What CPU `cpu`'s owner was doing, from its CPU_WHERE word (for the watchdog). */
  whereOf(cpu: number): { context: 'hardirq' | 'softirq' | 'task'; doing: string } {
    const v = Atomics.load(this.i32, this.R.cpu + cpu * CPU_WORDS + CPU_WHERE);
    if (v >= Where.Callback)
      return { context: 'task', doing: `in the callback of kernel object #${v - Where.Callback}` };
    if (v >= Where.Softirq)
      return { context: 'softirq', doing: `in softirq ${SOFTIRQ_NAMES[v - Where.Softirq] ?? v - Where.Softirq}` };
    if (v === Where.Handoff) return { context: 'hardirq', doing: "inside the strategy's hand-off" };
    if (v === Where.Hardirq) return { context: 'hardirq', doing: 'in a hard-IRQ handler' };
    return { context: 'task', doing: 'in task context' };
  }

  /** CPU `cpu`'s thread sleeps in its idle loop (its doorbell says so). */
  cpuThreadSleeping(cpu: number): boolean {
    return this.bells[cpu].isSleeping();
  }

  heartbeat(cpu: number): number {
    return Atomics.load(this.i32, this.R.cpu + cpu * CPU_WORDS + CPU_HEARTBEAT);
  }
  owner(cpu: number): number {
    return Atomics.load(this.i32, this.R.cpu + cpu * CPU_WORDS + CPU_OWNER);
  }
  taskName(task: number): string {
    return this.plan.tasks[task]?.name ?? `task ${task}`;
  }
  slices(task: number): number {
    return this.rqs.slices(task);
  }
  hasFaultFlag(): boolean {
    return Atomics.load(this.i32, this.R.control + C_FAULT) !== 0;
  }
}
