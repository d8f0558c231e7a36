/**
 * The public strategy API: what a deferral strategy is, and the kernel primitives it may use.
 *
 * A strategy answers one question: the hard-IRQ handler (random.c's add_interrupt_randomness)
 * has decided the per-CPU fast pool must be mixed into the input pool; how does that mix get
 * run? Built-in strategies are written with nothing but this API.
 *
 * A strategy class is instantiated in every thread that may run its code (each emulated CPU's
 * thread and each kthread). Its `setup()` runs in each of them, in the same order, and must
 * create the same kernel objects in the same order everywhere (no randomness, no clock, no
 * thread-dependent branching in setup): objects are identified by creation order.
 */

/** Execution context of the caller, as the kernel's preempt_count tells it. */
export type ExecContext = 'hardirq' | 'softirq' | 'task';

/** `queueWorkOn(WORK_CPU_UNBOUND, ...)`: let the workqueue choose (the local CPU for bound ones). */
export const WORK_CPU_UNBOUND = -1;

/**
 * The softirq vectors, in the kernel's order (include/linux/interrupt.h), for `raiseSoftirq`:
 * `k.raiseSoftirq(Softirq.Tasklet)`. Declared once: the machine reads these too.
 */
export const Softirq = {
  Hi: 0,
  Timer: 1,
  NetTx: 2,
  NetRx: 3,
  Block: 4,
  IrqPoll: 5,
  Tasklet: 6,
  Sched: 7,
  Hrtimer: 8,
  Rcu: 9,
} as const;
/** A softirq vector number (0..9). */
export type SoftirqVector = (typeof Softirq)[keyof typeof Softirq];
/** The vectors' kernel names, by number (HI, TIMER, ...). */
export const SOFTIRQ_NAMES = [
  'HI',
  'TIMER',
  'NET_TX',
  'NET_RX',
  'BLOCK',
  'IRQ_POLL',
  'TASKLET',
  'SCHED',
  'HRTIMER',
  'RCU',
] as const;
export const NR_SOFTIRQS = SOFTIRQ_NAMES.length;

/** Names of the kernel's system workqueues (include/linux/workqueue.h). */
export type SystemWorkqueue =
  | 'system_wq' // bound, nice 0 (schedule_work_on)
  | 'system_highpri_wq' // bound, nice -20 (random.c before the fix)
  | 'system_unbound_wq' // WQ_UNBOUND, default affinity scope
  | 'system_bh_wq' // WQ_BH: runs from TASKLET softirq on the queueing CPU
  | 'system_bh_highpri_wq'; // WQ_BH | WQ_HIGHPRI: runs from HI softirq

export type AffinityScope = 'cpu' | 'smt' | 'cache' | 'numa' | 'system';

export interface WorkqueueAttrs {
  /** WQ_UNBOUND: served by workers bound to no CPU. */
  unbound?: boolean;
  /** WQ_HIGHPRI: workers at nice -20 (bound and BH queues). */
  highpri?: boolean;
  /** WQ_BH: run in softirq context on the queueing CPU. */
  bh?: boolean;
  /** Unbound only: which CPUs a worker may be placed on, relative to the queueing CPU. Default 'cache'. */
  affinityScope?: AffinityScope;
  /** Unbound only: never place a worker outside the scope (affinity_strict). Default false. */
  affinityStrict?: boolean;
}

/** Opaque handles to kernel objects created in setup. */
export interface Work {
  readonly kind: 'work';
  readonly id: number;
  readonly name: string;
}
export interface Tasklet {
  readonly kind: 'tasklet';
  readonly id: number;
  readonly name: string;
}
export interface Timer {
  readonly kind: 'timer';
  readonly id: number;
  readonly name: string;
  readonly deferrable: boolean;
}
export interface IrqWork {
  readonly kind: 'irq_work';
  readonly id: number;
  readonly name: string;
}
export interface Workqueue {
  readonly kind: 'workqueue';
  readonly id: number;
  readonly name: string;
  readonly attrs: Readonly<Required<WorkqueueAttrs>>;
}

/** The deferred job itself: mix CPU `cpu`'s fast pool into the input pool. Run it exactly once per accepted hand-off. */
export interface Deferred {
  /** The CPU whose fast pool is to be mixed (the CPU that took the interrupt). */
  readonly cpu: number;
  /** Do the mix now, in whatever context the caller is in. Context: any; takes input_pool.lock. */
  run(k: Kernel): void;
  /**
   * Do the mix now if input_pool.lock is free, else skip it: random.c's hard-IRQ mix before the
   * workqueue change (4a61bf7f9b18), `if (!spin_trylock(&input_pool.lock)) return;`. A skipped
   * mix leaves the fast pool's count as it was, so the next interrupt tries again. Counts as a run
   * of the job either way. Returns false when skipped. Context: any; never waits for the lock.
   */
  tryRun(k: Kernel): boolean;
}

/** A callback run by a work item, tasklet, timer or irq_work. `k.context` tells where it runs. */
export type Callback = (k: Kernel) => void;

/** What `setup()` receives: object creation. Context: thread start-up, before any interrupt. */
export interface StrategySetup {
  readonly nrCpus: number;
  readonly hz: number;
  /** The options given on the command line or in the config (`name:key=value`). */
  readonly options: Readonly<Record<string, string | number | boolean>>;
  /** The per-CPU deferred job (random.c's `fast_pool->mix` payload) for CPU `cpu`. */
  deferred(cpu: number): Deferred;
  /** INIT_WORK. */
  createWork(name: string, fn: Callback): Work;
  /** tasklet_setup. */
  createTasklet(name: string, fn: Callback): Tasklet;
  /** timer_setup; `deferrable` is TIMER_DEFERRABLE. */
  createTimer(name: string, fn: Callback, opts?: { deferrable?: boolean }): Timer;
  /** init_irq_work. */
  createIrqWork(name: string, fn: Callback): IrqWork;
  /** One of the kernel's system workqueues. */
  workqueue(name: SystemWorkqueue): Workqueue;
  /** alloc_workqueue. */
  allocWorkqueue(name: string, attrs: WorkqueueAttrs): Workqueue;
}

/** Read-only view of one CPU, for strategies that adapt to load. Racy snapshots. */
export interface CpuView {
  /** Nothing runnable: the CPU sits in its idle loop. */
  readonly idle: boolean;
  /** Runnable tasks queued on the CPU, the running one included. */
  readonly nrRunning: number;
  /** Softirq bits raised and not yet run. */
  readonly softirqPending: number;
  /** Interrupt records waiting in the CPU's IRQ ring. */
  readonly irqBacklog: number;
}

/**
 * The kernel as a strategy sees it at run time. Every method checks the caller's context the
 * way the kernel would; calling something that may sleep from hardirq or softirq context is a
 * bug reported like the kernel's might_sleep() ("BUG: sleeping function called from invalid
 * context"), and ends the run.
 */
export interface Kernel {
  /** smp_processor_id(): the CPU the caller runs on. */
  readonly cpu: number;
  readonly nrCpus: number;
  readonly context: ExecContext;
  /** jiffies (advances HZ times a second). */
  readonly jiffies: number;
  readonly hz: number;
  /** The shared monotonic clock, in ns. */
  nowNs(): number;
  /** View of CPU `cpu` (read-only). */
  cpuView(cpu: number): CpuView;

  /** queue_work_on: false (and nothing queued) when `work` is already pending. Context: any. */
  queueWorkOn(cpu: number, wq: Workqueue, work: Work): boolean;
  /** queue_work: queue_work_on(WORK_CPU_UNBOUND, ...). */
  queueWork(wq: Workqueue, work: Work): boolean;
  /** work_pending. */
  workPending(work: Work): boolean;

  /** tasklet_schedule on the local CPU: false when already scheduled. Context: any. */
  taskletSchedule(t: Tasklet): boolean;
  /** tasklet_hi_schedule on the local CPU: false when already scheduled. */
  taskletHiSchedule(t: Tasklet): boolean;

  /** add_timer_on: arm `timer` on `cpu` to expire at jiffy `expires`. The timer must not be pending. */
  addTimerOn(timer: Timer, cpu: number, expires: number): void;
  /** mod_timer on the local CPU: true when the timer was pending. */
  modTimer(timer: Timer, expires: number): boolean;
  /** timer_pending. */
  timerPending(timer: Timer): boolean;
  /** del_timer: true when the timer was pending. */
  delTimer(timer: Timer): boolean;

  /** irq_work_queue: run `iw` in hardirq context on this CPU soon; false if already pending. */
  irqWorkQueue(iw: IrqWork): boolean;
  /** irq_work_queue_on: queue on `cpu` and send it an IPI; false if already pending. */
  irqWorkQueueOn(iw: IrqWork, cpu: number): boolean;

  /** raise_softirq on the local CPU (vector 0..9, kernel order: HI, TIMER, NET_TX, NET_RX, ...). */
  raiseSoftirq(nr: SoftirqVector): void;

  /** might_sleep(): throws the kernel's BUG when called from hardirq or softirq context. */
  mightSleep(): void;
}

/**
 * A deferral strategy. Two required things, like the LMAX Disruptor's WaitStrategy: a
 * description of its trade-off, and `handoff`.
 */
export interface DeferralStrategy {
  /**
   * Create the kernel objects the strategy needs. Context: every thread, at start-up, in the
   * same order; must be deterministic. Optional.
   */
  setup?(s: StrategySetup): void;
  /**
   * The hard-IRQ handler hands off the mix of `d.cpu`'s fast pool. Arrange for `d.run(k)` to be
   * called exactly once, or run it now. Return false only when the job was already pending
   * (it will still run once). Context: hardirq on CPU `d.cpu`; must not sleep.
   */
  handoff(k: Kernel, d: Deferred): boolean;
  /** Called in every thread when the run ends. Optional. */
  teardown?(): void;
}

/** Where a strategy's work runs, as its class declares it; checked by the conformance suite. */
export interface StrategyClaims {
  /** 'same' (default): runs on the hand-off's CPU (random.c refuses any other). 'any': may not. */
  readonly cpu?: 'same' | 'any';
  /** The one context the work runs in; 'any' (default) when it varies. */
  readonly context?: ExecContext | 'any';
}

/** What a strategy module exports (default export or a named class). */
export interface StrategyClass {
  new (options: Readonly<Record<string, string | number | boolean>>): DeferralStrategy;
  /** One sentence: the trade-off. Shown in the run's report.html and results.json (`deferlab list` shows the built-ins' only). */
  readonly description?: string;
  /** Where the work runs; checked by the conformance suite. Default { cpu: 'same', context: 'any' }. */
  readonly claims?: StrategyClaims;
}
