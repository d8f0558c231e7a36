/**
 * The emulated machine's shared memory: every region and every word, with its legend.
 *
 * Legend (who writes / who reads / how), in the spirit of kernel/workqueue.c:
 *   I   written once by the main thread before workers start; read-only after.
 *   O   written only by the current owner of the CPU (plain or Atomics as stated). Ownership
 *       passes with an Atomics.store of OWNER paired with the next owner's Atomics.load, so the
 *       next owner sees everything the previous one wrote.
 *   R   read-modify-write with Atomics by any thread.
 *   L   plain, under the lock named beside it.
 *   M   written by the main thread with Atomics.store; read by workers with Atomics.load.
 *   Q   written by the irq thread with Atomics.store; read by anyone with Atomics.load.
 *   S   statistic: plain, written by one writer as stated; read by the main thread with
 *       Atomics.load (racy snapshots are acceptable: counters only grow).
 * The project-wide ordering rule is in src/shm/layout.ts.
 *
 * Doubles (times in ns, vruntimes) live in a Float64Array over the same buffer: a region's
 * f64 index is its Int32 base / 2 (regions are cache-line aligned, so 8-byte aligned).
 */

import { LINE_WORDS, type RegionMap } from '../shm/layout.js';

export * from './counters.js';
export * from './timeline-layout.js';

// ---------------------------------------------------------------------------------------------
// Capacities. Each one is an upper bound on objects that can be queued at once, so that a list
// holding them can never be full (a full worklist would otherwise lose a PENDING work item).
// ---------------------------------------------------------------------------------------------

/** Interrupt records a CPU's IRQ ring holds; a raise into a full ring is counted as dropped.
 *  8192 absorbs ~8 ms of a 1M/s
 *  stream while the host deschedules the CPU's thread for a time slice. */
export const IRQ_RING_CAPACITY = 8192;
/** Words per interrupt record: vector, arg, raise time low 32 bits, raise time high bits. */
export const IRQ_RECORD_WORDS = 4;
/** An interrupt record's fields: its vector, its argument, its raise time (two words, putTime). */
export const IRQ_R_VECTOR = 0;
export const IRQ_R_ARG = 1;
export const IRQ_R_TIME = 2;
/**
 * Device-interrupt arrivals a CPU's arrival ring holds: the irq thread publishes each CPU's
 * arrivals ARRIVAL_HORIZON_NS ahead (src/machine/irq-thread.ts); 16384 holds 4 ms of a 4M/s
 * stream. A full ring refuses the arrival, counted as dropped (irqs_dropped).
 */
export const ARRIVAL_RING_CAPACITY = 16384;
/** Words per arrival record: due time low 32 bits, due time high bits, irq number. */
export const ARRIVAL_RECORD_WORDS = 3;
/** An arrival record's fields: its due time (two words, putTime), its irq number. */
export const ARR_R_DUE = 0;
export const ARR_R_IRQ = 2;

// ---------------------------------------------------------------------------------------------
// Control: one region, written by the main thread.
// ---------------------------------------------------------------------------------------------
export const CONTROL_WORDS = 3 * LINE_WORDS;
export const C_PHASE = 0; // M: Phase below
export const C_EPOCH = 1; // M: collect epoch; a thread that sees a new value reports and resets
export const C_ACTIVE = 2; // M: index of the strategy in force (-1: none)
export const C_STOP = 3; // M: 1 = every thread leaves its loop
/** M: the fast pool's mix trigger (random.c: 1024) in force; the warm-up pass lowers it so that
 *  every hand-off and mix path is compiled by V8 before anything is measured. */
export const C_TRIGGER = 5;
/** M: test switches (TestFlag), for the strategy conformance suite; 0 in real runs. */
export const C_TEST = 6;
/**
 * R: load generators inside a generation step (the irq thread raising device interrupts, the
 * tcp_lat client sending, the cross_cpu producer pushing). A generator Atomics.add(+1)s it,
 * THEN loads C_PHASE and generates only in Warmup/Measure, then Atomics.sub(-1)s it. The main
 * thread stores Phase.Drain and then waits for this word to read 0: from then on no generator
 * can act on an older phase (seq-cst: a later +1 is followed by a load that sees Drain), so
 * whatever it pushed is already visible to the drain's checks.
 */
export const C_GEN_INFLIGHT = 7;
/**
 * R: CPU threads whose idle task is polling now (cpuidle's poll state, src/machine/idle.ts). An
 * idle task Atomics.add(+1)s it before it polls and polls only if the result is at most the
 * host's cores, so that polling threads never outnumber the cores; Atomics.sub(-1) when it stops.
 * Own line: idle entries write it often, and line 0 is read by every thread.
 */
export const C_IDLE_POLLERS = 2 * LINE_WORDS;
/**
 * Q (a double at f64 index (control + C_IRQ_CPU_NS) / 2, two words): the irq thread's own CPU
 * time in ns (/proc/thread-self/schedstat), stored by the irq thread at most every
 * IRQ_CPU_SAMPLE_NS and at each phase change; read by the main thread (a racy snapshot). What
 * the emulator's interrupt generator costs the host, reported with every trial.
 */
export const C_IRQ_CPU_NS = 2 * LINE_WORDS + 2;

export enum TestFlag {
  /** Each accepted hand-off is followed at once by a second one: while the first is still
   *  pending it must return false and add no run; once it has run it is a new hand-off. */
  DoubleHandoff = 1,
}
export const C_JIFFIES = LINE_WORDS; // Q: jiffies, stored at each tick boundary (own line: read by all)
export const C_FAULT = LINE_WORDS + 1; // R: first fault flag (compareExchange 0 → 1 by the faulting thread)

export enum Phase {
  Boot = 0,
  /** Strategy in force, workload running, nothing recorded. */
  Warmup = 1,
  /** Strategy in force, workload running, histograms recording. */
  Measure = 2,
  /** No new work generated; ticks go to every CPU (NOHZ off) so pending deferred work finishes. */
  Drain = 3,
  /** Idle between trials. */
  Pause = 4,
}

/** Enter a generation step on the control region at `ctl` (C_GEN_INFLIGHT): true when the
 *  phase, read after entering, generates load (then leave with Atomics.sub once what was
 *  generated is pushed); false when it does not (already left). */
export function genEnter(i32: Int32Array, ctl: number): boolean {
  Atomics.add(i32, ctl + C_GEN_INFLIGHT, 1);
  const p = Atomics.load(i32, ctl + C_PHASE);
  if (p === Phase.Warmup || p === Phase.Measure) return true;
  Atomics.sub(i32, ctl + C_GEN_INFLIGHT, 1);
  return false;
}

/** Leave a generation step entered with genEnter (everything generated is pushed by now). */
export function genExit(i32: Int32Array, ctl: number): void {
  Atomics.sub(i32, ctl + C_GEN_INFLIGHT, 1);
}

// ---------------------------------------------------------------------------------------------
// Per-CPU words. CPU_WORDS Int32 words per CPU, 7 cache lines.
// ---------------------------------------------------------------------------------------------
export const CPU_WORDS = 7 * LINE_WORDS;
/** R: pending-event bits (CpuFlag). Raisers Atomics.or; the owner clears with Atomics.and
 *  BEFORE handling (so a raise during handling is never lost). Own line: everyone writes it. */
export const CPU_FLAGS = 0;
/** O: task id that owns the CPU. Atomics.store by the current owner on hand-off (publishes
 *  everything it wrote); Atomics.load by everyone. */
export const CPU_OWNER = LINE_WORDS;
/** R: invariant word: +1 when a thread starts executing as owner, −1 when it stops. Any value
 *  other than 0 or 1 is two owners at once, reported as a fault. */
export const CPU_ON_CPU = LINE_WORDS + 1;
/** O (Atomics): pending softirq bits (Softirq). Only the CPU's owner raises and clears them. */
export const CPU_SOFTIRQ = LINE_WORDS + 2;
/** L timer base lock: earliest `expires` among pending non-deferrable timers (none: timerNone(),
 *  half the jiffies range ahead); written with Atomics.store under the lock; Atomics.load by the
 *  irq thread (NOHZ wake-up). */
export const CPU_NEXT_TIMER = LINE_WORDS + 3;
/** L timer base lock: the same over all pending timers, deferrable ones included. */
export const CPU_NEXT_TIMER_ANY = LINE_WORDS + 4;
/** R: hand-offs of this CPU's fast-pool mix accepted and not yet run (normally 0 or 1:
 *  MIX_INFLIGHT allows one at a time). Atomics.add(+1) by the hand-off (hardirq on this CPU)
 *  before it calls the strategy, −1 again if the strategy refuses; Atomics.sub by the run.
 *  A run that takes it below 0 ran without a hand-off: a duplicate. */
export const CPU_DEFERRED = LINE_WORDS + 5;
/** O: jiffies of the last tick this CPU processed. */
export const CPU_LAST_TICK = LINE_WORDS + 6;
/** O: nesting of softirq processing (0 = not in do_softirq). */
export const CPU_IN_SOFTIRQ = LINE_WORDS + 7;
/** R: 1 while an irq_work IPI to this CPU is outstanding: senders Atomics.exchange(1) and
 *  send an IPI only when it was 0; the IPI handler stores 0 before it drains the list. */
export const CPU_IPI_PENDING = LINE_WORDS + 9;
/** O (plain ++): preemption points passed; the watchdog reads it (Atomics.load) to tell a
 *  running owner from one stuck in a strategy. */
export const CPU_HEARTBEAT = LINE_WORDS + 10;
/** O (plain store): what the owner is doing, for the watchdog's report (Where below). */
export const CPU_WHERE = LINE_WORDS + 11;
/** S (O writes): per-CPU counters, CpuCounter below; lines 2 to 6. */
export const CPU_COUNTERS = 2 * LINE_WORDS;

/** Per-CPU doubles (f64 index from the per-CPU f64 region). */
export const CPU_F64 = 16; // two lines a CPU (slots 0-9 used)
/** O: clock (ns) at which the outgoing owner handed the CPU over; the incoming owner records
 *  the context-switch cost from it. Written before the OWNER store that publishes it. */
export const CPUF_SWITCH_NS = 0;
/** R (ordered by the strategy's publish): clock at the last hand-off of this CPU's mix. */
export const CPUF_HANDOFF_NS = 1;
/** L rq lock: run-time of real-time tasks in the current throttling period. */
export const CPUF_RT_TIME = 2;
/** L rq lock: start of the current RT throttling period. */
export const CPUF_RT_PERIOD = 3;
/** L rq lock: CFS's min_vruntime (update_min_vruntime: never decreases); where a waking or new
 *  task is placed (src/kernel/sched/cfs.ts). Unused under EEVDF. */
export const CPUF_MIN_VRUNTIME = 4;
/** L rq lock: EEVDF's avg_vruntime when the queue last emptied (where a task is placed on an
 *  empty queue). Unused under CFS. */
export const CPUF_V_HINT = 5;
/** O: when this CPU's NIC raises its next interrupt (ns; +Infinity: none; src/net/nic.ts). Read
 *  by the owner's preemption points and idle task, and (plain, racy) by the main thread's drain
 *  check (Machine.busy: quiet only at +Infinity; nic.ts takeIrq raises NET_RX, an Atomics store,
 *  before it writes this, so a drain that reads +Infinity then sees that softirq pending).
 *  Initialised to +Infinity (no NIC). */
export const CPUF_NIC_DUE = 6;
/** O: clock (ns) when this CPU's pending NET_RX was first left to ksoftirqd (irq exit's
 *  ksoftirqd_running() rule, or __do_softirq's wakeup_softirqd); 0: none waiting. Written and read
 *  only by the CPU's owner (src/kernel/softirq.ts), so plain; ksoftirqd's run records the wait
 *  (stage net_rx_ksoftirqd_wait) and zeroes it. */
export const CPUF_NET_RX_LEFT_NS = 7;
/** O (plain store, by the thread that owns the CPU, when it detects a host stall on it:
 *  src/machine/host-stall.ts): the clock (ns) at the end of the CPU's last host stall; 0: none.
 *  Read plainly by any CPU's owner (tcp_lat at a reply, the driver payload when it serves a
 *  request) to tell whether a sample overlapped a stall (`--host-stalls`): end > its start. An
 *  aligned double is stored whole; a reader that sees the old value misses a stall that ended an
 *  instant before (a stall still in progress is not seen either: docs/results.md). */
export const CPUF_STALL_END = 8;
/** L rq lock (plain store under it, by src/kernel/sched/rt.ts rtPeriod): while this CPU's RT
 *  tasks are throttled, the clock (ns) at which their period ends; +Infinity when not throttled.
 *  The kernel ends a throttle from sched_rt_period_timer, an hrtimer that NOHZ does not stop
 *  (kernel/sched/rt.c), where the lab's rtPeriod runs at the tick: so the irq thread reads this
 *  plainly (an aligned double is stored whole) and ticks an idle CPU once it has passed
 *  (src/machine/irq-thread.ts). Without it a throttled hog on an idle, tickless CPU stayed
 *  throttled until something else ticked it. Initialised to +Infinity. */
export const CPUF_RT_UNTHROTTLE = 9;

/** Values of CPU_WHERE (with an object or softirq number added where said). */
export enum Where {
  Task = 0,
  Hardirq = 1,
  Softirq = 100, // + vector
  /** A kernel object's callback, run in task context (a work item in its kworker), + object id. */
  Callback = 1000,
  /** ... in softirq context (a tasklet, a timer, a WQ_BH work item), + object id. */
  CallbackSoftirq = 2000,
  /** ... in hardirq context (an irq_work), + object id. Object ids are below MAX_OBJECTS (256). */
  CallbackHardirq = 3000,
  Handoff = 3,
}

/** Pending-event bits of CPU_FLAGS. */
export enum CpuFlag {
  IrqPending = 1,
  NeedResched = 2,
  Tick = 4,
  /** Self-IPI for irq_work queued on the local CPU (arch_irq_work_raise). */
  IrqWork = 8,
  /** A thread should look at the control region (stop, collect). */
  Control = 16,
  /** A packet was posted to this CPU's NIC (src/net/): the owner recomputes when its NIC fires.
   *  Set by any sender (Atomics.or), cleared by the owner; the drain (Machine.busy) waits for it
   *  to clear, since until then CPUF_NIC_DUE may not yet show the interrupt it leads to. */
  NicPost = 64,
}

// Softirq vectors and their names: declared once in the plugin API (src/api/types.ts).
export { NR_SOFTIRQS, SOFTIRQ_NAMES, Softirq } from '../api/types.js';

// Per-CPU and global counters: ./counters.ts (re-exported here).

export enum TaskState {
  Sleeping = 0,
  Runnable = 1,
  Dead = 2,
}
export enum SchedPolicy {
  Normal = 0,
  Fifo = 1,
  RoundRobin = 2,
  Idle = 3,
}

// Timeline rings (--timeline): ./timeline-layout.ts (re-exported here).

// ---------------------------------------------------------------------------------------------
// The regions of a machine: where each lies in the buffer (planned by src/machine/regions.ts).
// ---------------------------------------------------------------------------------------------

/**
 * A shared region that a part of the machine declares (a kernel mechanism, random.c): `count`
 * blocks of `words` Int32 words each, reserved by the machine's planner (src/machine/regions.ts)
 * in cache-line-aligned blocks; the part finds each block's base in MachineRegions.parts under
 * the region's name. Who writes and reads its words is documented where the part declares them.
 */
export interface RegionDecl {
  readonly words: number;
  readonly count: number;
}

/** Where each region lies in the buffer (Int32 word indexes). */
export interface MachineRegions {
  map: RegionMap;
  control: number;
  globalCounters: number;
  cpu: number; // CPU_WORDS × cpus
  cpuF64: number; // Int32 base of CPU_F64 doubles × cpus
  bells: number; // DOORBELL_WORDS × threads
  irqRings: number[]; // an MPSC ring per CPU
  arrivals: number[]; // an SPSC ring per CPU: device-interrupt arrivals (irq thread → owner)
  /** The regions the machine's parts declared (RegionDecl), by name: each block's base. */
  parts: Record<string, readonly number[]>;
  workload: Record<string, number>;
  timeline: number[]; // a timeline ring per thread (--timeline), else empty
}
