/**
 * The emulated machine's shared memory, seen from the main thread: plan and initialise every
 * region (src/hw/layout.ts), and read it back: counters, what is still in flight (the
 * drain's `busy()`), per-CPU state for the watchdog and fault reports.
 *
 * `MachineMemory.build(opts)` gives a machine's memory with no thread started: the kernel's
 * single-thread tests (test/kernel/) build a Runtime over it with a fake clock. `Machine`
 * (machine.ts) extends it with the threads.
 *
 * Context: main thread. Reads of words other threads write are Atomics loads (racy snapshots).
 */

import {
  ARRIVAL_RECORD_WORDS,
  ARRIVAL_RING_CAPACITY,
  C_ACTIVE,
  C_FAULT,
  C_GEN_INFLIGHT,
  C_IRQ_CPU_NS,
  C_PHASE,
  C_TRIGGER,
  CPU_COUNTER_NAMES,
  CPU_COUNTERS,
  CPU_DEFERRED,
  CPU_F64,
  CPU_FLAGS,
  CPU_HEARTBEAT,
  CPU_OWNER,
  CPU_SOFTIRQ,
  CPU_WHERE,
  CPU_WORDS,
  CPUF_NIC_DUE,
  CPUF_RT_UNTHROTTLE,
  CpuCounter,
  CpuFlag,
  GLOBAL_COUNTER_NAMES,
  GlobalCounter,
  IRQ_RECORD_WORDS,
  IRQ_RING_CAPACITY,
  type MachineRegions,
  Phase,
  SOFTIRQ_NAMES,
  Where,
} from '../hw/layout.js';
import { assertLayoutSound, RECORD_FIELDS } from '../hw/layout-fields.js';
import { initTimelineRing } from '../hw/timeline.js';
import type { KernelMemory } from '../kernel/mechanism.js';
import { initKernel, kernelBusy, kernelRecords, kernelRegions } from '../kernel/registry.js';
import { DEFAULT_KTHREAD_CHARGE, RunQueues } from '../kernel/sched/rq.js';
import { initRandom, randomRegions } from '../random/driver.js';
import { FAST_POOL_FIELDS, type FastPool } from '../random/fastpool.js';
import { InputPool } from '../random/inputpool.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { MpscRing, SpscRing } from '../shm/ring.js';
import { type Workload, workloadOf } from '../workloads/index.js';
import { fairPolicyOf, type MachineOptions } from './options.js';
import { type MachinePlan, planMachineTasks } from './plan.js';
import { planMachine } from './regions.js';

export type Counters = Record<string, number>;

/** The per-CPU counters {@link MachineMemory.activity} sums. */
const ACTIVITY_CPU_COUNTERS: readonly number[] = [
  CpuCounter.interrupts,
  CpuCounter.ipis_received,
  CpuCounter.irq_entries,
  CpuCounter.handoffs,
  CpuCounter.mixes,
  CpuCounter.works_queued,
  CpuCounter.works_run,
  CpuCounter.tasklets_run,
  CpuCounter.timers_run,
  CpuCounter.irq_works_run,
  CpuCounter.bh_works_run,
  CpuCounter.napi_polls,
  CpuCounter.net_rx_packets,
  CpuCounter.nic_tx_packets,
  CpuCounter.nic_tx_completions,
  CpuCounter.tcp_acks_sent,
  CpuCounter.tcp_backlog_runs,
];
/** The global counters it sums. */
const ACTIVITY_GLOBAL_COUNTERS: readonly number[] = [
  GlobalCounter.irqs_raised,
  GlobalCounter.app_messages,
  GlobalCounter.items_produced,
  GlobalCounter.items_consumed,
];

export class MachineMemory {
  readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  /** The workload the machine runs (src/workloads/). */
  readonly workload: Workload;
  protected readonly bells: Doorbell[] = [];
  protected readonly inputPool: InputPool;
  protected readonly fastPools: FastPool[] = [];
  protected readonly rqs: RunQueues;
  /** Every kernel object's `kind "name"` in id order, from the CPU threads' ready messages (whereOf). */
  protected objectNames: readonly string[] = [];

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
    this.inputPool = new InputPool(this.i32, R.parts.inputPool[0], opts.lockSpins);
  }

  /** Plan the regions of a machine with these options and allocate the buffer. */
  protected static layout(opts: MachineOptions): { plan: MachinePlan; sab: SharedArrayBuffer; R: MachineRegions } {
    assertLayoutSound({ ...RECORD_FIELDS, ...kernelRecords(), fastPool: FAST_POOL_FIELDS });
    const plan = planMachineTasks(opts);
    const shape = { cpus: opts.cpus, tasks: plan.tasks.length, pools: plan.pools.length };
    const { sab, regions } = planMachine({
      cpus: opts.cpus,
      threads: plan.threads.length,
      parts: { ...kernelRegions(shape), ...randomRegions(opts.cpus, opts.payload) },
      workloadRegions: workloadOf(opts).regions(),
      timelineRecords: opts.timelineRecords ?? 0,
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

  /** The machine's memory as the kernel's mechanisms see it (src/kernel/mechanism.ts). */
  protected kernelMemory(): KernelMemory {
    const sizes = new Map(Object.values(this.R.map.regions).map((r) => [r.base, r.words]));
    const { i32, f64, R, plan, opts } = this;
    return {
      i32,
      f64,
      R,
      plan,
      cpus: opts.cpus,
      hz: opts.hz,
      lockSpins: opts.lockSpins,
      fair: fairPolicyOf(opts),
      kthreadCharge: opts.kthreadCharge ?? DEFAULT_KTHREAD_CHARGE,
      words: (base) => sizes.get(base) ?? 0,
      count: (name) => {
        const k = CpuCounter[name];
        let s = 0;
        for (let c = 0; c < opts.cpus; c++) s += Atomics.load(i32, R.cpu + c * CPU_WORDS + CPU_COUNTERS + k);
        return s;
      },
    };
  }

  /** Lay out every region. Context: main thread, before any worker exists. */
  protected init(): void {
    const { i32, R, opts, plan } = this;
    const km = this.kernelMemory();
    const words = km.words;
    for (let c = 0; c < opts.cpus; c++) {
      i32[R.cpu + c * CPU_WORDS + CPU_OWNER] = c; // the idle task
      this.f64[R.cpuF64 / 2 + c * CPU_F64 + CPUF_NIC_DUE] = Number.POSITIVE_INFINITY;
      this.f64[R.cpuF64 / 2 + c * CPU_F64 + CPUF_RT_UNTHROTTLE] = Number.POSITIVE_INFINITY;
      MpscRing.init(i32, R.irqRings[c], IRQ_RING_CAPACITY, IRQ_RECORD_WORDS, words(R.irqRings[c]));
      SpscRing.init(i32, R.arrivals[c], ARRIVAL_RING_CAPACITY, ARRIVAL_RECORD_WORDS, words(R.arrivals[c]));
    }
    for (let t = 0; t < plan.threads.length; t++) Doorbell.init(i32, R.bells + t * DOORBELL_WORDS);
    initKernel(km);
    this.fastPools.push(...initRandom(i32, R, opts.cpus, opts.fastPool.variant, words));
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

  /**
   * A sum of the counters that move whenever a stage of the pipeline busy() checks does work (an
   * interrupt handled, a NAPI poll, a packet or ACK sent, a hand-off, a work item, a tasklet,
   * timer or irq_work run, a message or interrupt generated); not ticks, softirq entries, context
   * switches or idle periods, which go on in a quiet machine. Monotonic while the machine runs.
   * The drain compares it across two quiet sweeps (Machine.drain). Context: main thread, Atomics loads.
   */
  activity(): number {
    const i32 = this.i32;
    let s = 0;
    for (let c = 0; c < this.opts.cpus; c++) {
      const base = this.R.cpu + c * CPU_WORDS + CPU_COUNTERS;
      for (const k of ACTIVITY_CPU_COUNTERS) s += Atomics.load(i32, base + k);
    }
    for (const k of ACTIVITY_GLOBAL_COUNTERS) s += Atomics.load(i32, this.R.globalCounters + k);
    return s;
  }

  /** One CPU's counters (the per-CPU ones only). */
  cpuCounters(cpu: number): Counters {
    const out: Counters = {};
    CPU_COUNTER_NAMES.forEach((name, k) => {
      out[name] = Atomics.load(this.i32, this.R.cpu + cpu * CPU_WORDS + CPU_COUNTERS + k);
    });
    return out;
  }

  /** The CPU `task` is on or last ran on (T_CPU; racy). */
  taskCpu(task: number): number {
    return this.rqs.taskCpu(task);
  }

  /** Ticks at which `task` was running (its CPU share in slices). */
  ticks(task: number): number {
    return this.rqs.ticks(task);
  }

  /** The run time the scheduler has charged `task` (sum_exec_runtime, ns; racy). */
  sumExec(task: number): number {
    return this.rqs.sumExec(task);
  }

  /** Clock (ns since the run's epoch) at which the input pool first reached 256 bits, or -1. */
  inputPoolReadyAtNs(): number {
    return this.inputPool.readyAtNs;
  }

  /** Re-initialise the input pool and the fast pools' counts (between trials, while quiet). */
  resetEntropy(): void {
    InputPool.init(this.i32, this.R.parts.inputPool[0]);
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
    // 1c. A NIC's vectors: an event its CPU has not looked at yet (NicPost), or an interrupt due
    //     later (its moderation timer, for events the rest of busy() no longer sees).
    //     takeIrq raises NET_RX before it recomputes CPUF_NIC_DUE, so a due read as +∞ here means
    //     the softirq it raised is visible to step 4 (a plain f64 read, after its Atomics raise).
    for (let c = 0; c < this.opts.cpus; c++) {
      if ((Atomics.load(i32, this.R.cpu + c * CPU_WORDS + CPU_FLAGS) & CpuFlag.NicPost) !== 0)
        return `a NIC event on CPU ${c} has not been looked at`;
      if (this.f64[this.R.cpuF64 / 2 + c * CPU_F64 + CPUF_NIC_DUE] !== Number.POSITIVE_INFINITY)
        return `a NIC interrupt is due on CPU ${c}`;
    }
    // 2. Queues: an interrupt record leaves its ring only after its handler ran (runtime.ts,
    //    drainIrqRing), so a hand-off it made is in CPU_DEFERRED below before the ring shows 0.
    const hw = this.irqsPending();
    if (hw) return hw;
    // 3. Per-CPU deferred jobs (random.c's hand-offs).
    for (let c = 0; c < this.opts.cpus; c++)
      if (Atomics.load(i32, this.R.cpu + c * CPU_WORDS + CPU_DEFERRED) !== 0)
        return `a deferred mix handed off on CPU ${c} has not run`;
    // 4. The kernel's mechanisms: queued work, pending softirqs, and jobs popped but not yet
    //    counted (src/kernel/registry.ts).
    const k = kernelBusy(this.kernelMemory());
    if (k) return k;
    const c = this.counters();
    if (c.mixes < c.handoffs) return `${c.handoffs - c.mixes} accepted hand-offs have not finished running`;
    return '';
  }

  /**
   * Interrupts not yet handled on any CPU: arrivals due (delivered when due, drain or not) and
   * records in the IRQ rings. '' when none. Context: main thread, racy loads.
   */
  irqsPending(): string {
    const i32 = this.i32;
    for (let c = 0; c < this.opts.cpus; c++) {
      if (new SpscRing(i32, this.R.arrivals[c]).length() !== 0) return `device interrupts due on CPU ${c}`;
      if (new MpscRing(i32, this.R.irqRings[c]).length() !== 0) return `interrupts pending on CPU ${c}`;
    }
    return '';
  }

  /** What of the kernel is still in flight, hand-offs aside (the conformance suite's check). */
  kernelBusy(): string {
    return this.irqsPending() || kernelBusy(this.kernelMemory());
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
    if (v >= Where.Callback) {
      const [context, base] =
        v >= Where.CallbackHardirq
          ? (['hardirq', Where.CallbackHardirq] as const)
          : v >= Where.CallbackSoftirq
            ? (['softirq', Where.CallbackSoftirq] as const)
            : (['task', Where.Callback] as const);
      return {
        context,
        doing: `in the callback of ${this.objectNames[v - base] ?? `kernel object #${v - base}`}`,
      };
    }
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
  /** The host thread that hosts `task` (`cpu0`, `kworker/0:0H`, ...), as a crashed thread's fault names it. */
  threadNameOf(task: number): string {
    const t = this.plan.tasks[task]?.thread;
    return t === undefined ? `task ${task}` : (this.plan.threads[t]?.name ?? `thread ${t}`);
  }
  slices(task: number): number {
    return this.rqs.slices(task);
  }
  hasFaultFlag(): boolean {
    return Atomics.load(this.i32, this.R.control + C_FAULT) !== 0;
  }
}
