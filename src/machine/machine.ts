/**
 * The emulated machine, seen from the main thread: allocate and initialise the shared memory,
 * start every thread, drive phases, collect histograms and counters, stop and join.
 *
 * The main thread is the operator: it is never on a measured path and never blocks (no
 * Atomics.wait, no machine lock); it waits with timers and messages.
 */
import { cpus as hostCpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { Histogram } from 'hdr-histogram-js';
import { initClock, newEpoch, nowNs } from '../clock.js';
import { BootInterrupted, MachineFaultError } from '../errors.js';
import { FastPool, initFastPool } from '../random/fastpool.js';
import { InputPool } from '../random/inputpool.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { ShmLock } from '../shm/lock.js';
import { MpscRing, SpscRing } from '../shm/ring.js';
import { spawnWorker } from '../threads/spawn.js';
import { XCPU_POLICY_WORD, xcpuFlagWord } from '../workloads/cross-cpu.js';
import { initWorkload, workloadRegions } from '../workloads/index.js';
import {
  C_ACTIVE,
  C_EPOCH,
  C_FAULT,
  C_GEN_INFLIGHT,
  C_PHASE,
  C_STOP,
  C_TEST,
  C_TRIGGER,
  CPU_COUNTER_NAMES,
  CPU_COUNTERS,
  CPU_DEFERRED,
  CPU_FLAGS,
  CPU_HEARTBEAT,
  CPU_NEXT_TIMER,
  CPU_NEXT_TIMER_ANY,
  CPU_OWNER,
  CPU_SOFTIRQ,
  CPU_WHERE,
  CPU_WORDS,
  CpuFlag,
  GLOBAL_COUNTER_NAMES,
  IRQ_RECORD_WORDS,
  IRQ_RING_CAPACITY,
  MAX_OBJECTS,
  type MachineRegions,
  P_NR_WORKERS,
  Phase,
  POOL_WORDS,
  planMachine,
  SOFTIRQ_NAMES,
  TIMER_BASE_WORDS,
  Where,
} from './layout.js';
import type { MachineOptions } from './options.js';
import { type MachinePlan, planMachineTasks } from './plan.js';
import type { StartupData, ThreadHeap, WorkerMessage } from './protocol.js';
import { RunQueues } from './sched.js';
import { addEncoded, type EncodedHistogram, newHistogram, STAGES, type Stage } from './trace.js';

// The catalogue's classes (src/errors.ts), where callers have always imported them from.
export { BootInterrupted, MachineFaultError } from '../errors.js';

const ENTRY = {
  cpu: new URL('../../workers/cpu.js', import.meta.url),
  kthread: new URL('../../workers/kthread.js', import.meta.url),
  irq: new URL('../../workers/irq.js', import.meta.url),
};

/** How long threads may take to start (from TypeScript source each loads esbuild: ~0.3 s). */
export const BOOT_TIMEOUT_MS = 60_000;
/** How long stop() waits for terminated threads to end before leaving them to the process's exit. */
export const TERMINATE_WAIT_MS = 2_000;
/** How long one strategy's setup() may run on a thread (it only creates kernel objects). */
export const SETUP_TIMEOUT_MS = 10_000;

/** Old-generation heap limit of each machine thread (MiB). */
export const WORKER_HEAP_MB = 512;
/**
 * Young-generation limit of each machine thread (MiB). V8's default lets each isolate's
 * semi-spaces grow to several MiB and keeps the pages it shrinks away from in a pool; with 11
 * isolates that alone made a 10-minute soak's RSS creep by ~15% (bench/soak.ts). The threads
 * allocate little once warm (reports between trials), so a small young generation costs only
 * more frequent, shorter scavenges, and RSS levels off within the first minute.
 */
export const WORKER_YOUNG_MB = 4;
/** How long the threads may take to report between trials. */
export const COLLECT_TIMEOUT_MS = 10_000;

export interface MachineFault {
  thread: string;
  message: string;
  cpu: number;
  task: string;
  context: string;
  strategy?: string;
  kind: 'bad-input' | 'fault' | 'exit' | 'watchdog';
  stack?: string;
}

export type Counters = Record<string, number>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Machine {
  readonly i32: Int32Array;
  readonly plan: MachinePlan;
  private readonly workers: Worker[] = [];
  private readonly exited: Promise<void>[] = [];
  private readonly bells: Doorbell[] = [];
  private readonly inputPool: InputPool;
  private readonly fastPools: FastPool[] = [];
  private readonly rqs: RunQueues;
  private reports = new Map<number, Extract<WorkerMessage, { type: 'report' }>>();
  private reportWaiter: (() => void) | undefined;
  private faultWaiters: ((f: MachineFault) => void)[] = [];
  private epoch = 0;
  private stopped = false;
  fault: MachineFault | undefined;
  wasm = false;
  clockErrorNs = 0;
  readonly objectsSignature: string[][] = [];

  private constructor(
    readonly opts: MachineOptions,
    readonly sab: SharedArrayBuffer,
    readonly R: MachineRegions,
    plan: MachinePlan,
    readonly epochNs: number,
  ) {
    this.plan = plan;
    this.i32 = new Int32Array(sab);
    this.rqs = RunQueues.of(this.i32, new Float64Array(sab), R, opts.cpus, opts.lockSpins);
    for (let t = 0; t < plan.threads.length; t++)
      this.bells.push(new Doorbell(this.i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    this.inputPool = new InputPool(this.i32, R.inputPool, opts.lockSpins);
  }

  /** Build the shared memory and start every thread; resolves when all are ready. */
  static async boot(opts: MachineOptions, signal?: AbortSignal): Promise<Machine> {
    const plan = planMachineTasks(opts);
    const wl = workloadRegions(opts);
    const { sab, regions } = planMachine({
      cpus: opts.cpus,
      tasks: plan.tasks.length,
      threads: plan.threads.length,
      pools: plan.pools.length,
      workloadRegions: wl,
    });
    const epochNs = newEpoch();
    initClock(epochNs);
    const m = new Machine(opts, sab, regions, plan, epochNs);
    m.init();
    await m.start(signal);
    return m;
  }

  /** Lay out every region. Context: main thread, before any worker exists. */
  private init(): void {
    const { i32, R, opts, plan } = this;
    const sizes = new Map(Object.values(R.map.regions).map((r) => [r.base, r.words]));
    const words = (base: number) => sizes.get(base);
    for (let c = 0; c < opts.cpus; c++) {
      const b = R.cpu + c * CPU_WORDS;
      i32[b + CPU_OWNER] = c; // the idle task
      i32[b + CPU_NEXT_TIMER] = 0x3fffffff;
      i32[b + CPU_NEXT_TIMER_ANY] = 0x3fffffff;
      this.rqs.initCpu(c);
      ShmLock.init(i32, R.timerBase + c * TIMER_BASE_WORDS);
      MpscRing.init(i32, R.irqRings[c], IRQ_RING_CAPACITY, IRQ_RECORD_WORDS, words(R.irqRings[c]));
      MpscRing.init(i32, R.irqWorkLists[c], MAX_OBJECTS, 1, words(R.irqWorkLists[c]));
      MpscRing.init(i32, R.taskletLists[2 * c], MAX_OBJECTS, 1, words(R.taskletLists[2 * c]));
      MpscRing.init(i32, R.taskletLists[2 * c + 1], MAX_OBJECTS, 1, words(R.taskletLists[2 * c + 1]));
      initFastPool(i32, R.fastPools + c * 16, opts.fastPool.variant, c);
      this.fastPools.push(new FastPool(i32, R.fastPools + c * 16, opts.fastPool.variant));
    }
    for (const t of plan.tasks) this.rqs.initTask(t.id, t.cpu, t.policy, t.nice, t.rtPrio);
    for (let t = 0; t < plan.threads.length; t++) Doorbell.init(i32, R.bells + t * DOORBELL_WORDS);
    for (const p of plan.pools) {
      ShmLock.init(i32, R.pools + p.id * POOL_WORDS);
      i32[R.pools + p.id * POOL_WORDS + P_NR_WORKERS] = p.workers.length;
      MpscRing.init(i32, R.poolLists[p.id], MAX_OBJECTS, 1, words(R.poolLists[p.id]));
    }
    for (let o = 0; o < MAX_OBJECTS; o++) i32[R.objects + o * 4 + 2] = -1; // O_CPU: on no CPU
    InputPool.init(i32, R.inputPool);
    initWorkload(i32, R.workload, opts, words);
    i32[R.control + C_ACTIVE] = 0;
    i32[R.control + C_TRIGGER] = opts.fastPool.trigger;
    i32[R.control + C_PHASE] = Phase.Boot;
  }

  private async start(signal?: AbortSignal): Promise<void> {
    const ready = new Set<number>();
    /** Per thread: the strategy whose setup() it is running, and since when (ms). */
    const inSetup = new Map<number, { strategy: number; since: number }>();
    let resolveReady!: () => void;
    let rejectReady!: (e: Error) => void;
    const allReady = new Promise<void>((res, rej) => {
      resolveReady = res;
      rejectReady = rej;
    });
    for (const th of this.plan.threads) {
      const data: StartupData = {
        sab: this.sab,
        regions: this.R,
        plan: this.plan,
        opts: this.opts,
        threadId: th.id,
        epochNs: this.epochNs,
      };
      const w = spawnWorker(ENTRY[th.kind], {
        workerData: data,
        name: th.name,
        stdout: false,
        stderr: false,
        // A strategy that allocates without bound ends its thread with ERR_WORKER_OUT_OF_MEMORY
        // (reported as such) instead of taking the host's memory.
        resourceLimits: {
          maxOldGenerationSizeMb: WORKER_HEAP_MB,
          maxYoungGenerationSizeMb: WORKER_YOUNG_MB,
        },
      });
      this.workers.push(w);
      w.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') {
          ready.add(m.thread);
          if (th.kind !== 'irq') {
            this.objectsSignature[m.thread] = m.objects;
            this.wasm = m.wasm;
            this.clockErrorNs = Math.max(this.clockErrorNs, m.clockErrorNs);
          }
          if (ready.size === this.plan.threads.length) resolveReady();
        } else if (m.type === 'setup') {
          if (m.strategy < 0) inSetup.delete(m.thread);
          else inSetup.set(m.thread, { strategy: m.strategy, since: Date.now() });
        } else if (m.type === 'report') {
          this.reports.set(m.thread, m);
          if (this.reportWaiter && this.reports.size >= this.reportingThreads()) this.reportWaiter();
        } else if (m.type === 'fault') {
          const f: MachineFault = {
            thread: m.threadName,
            message: m.message,
            cpu: m.cpu,
            task: m.task,
            context: m.context,
            strategy: m.strategy,
            kind: m.kind,
            stack: m.stack,
          };
          this.raiseFault(f);
          rejectReady(new MachineFaultError(f));
        }
      });
      w.on('error', (e) => {
        const oom = (e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        const f: MachineFault = {
          thread: th.name,
          message: `thread ${th.name} ${oom ? 'ran out of memory' : 'crashed'}: ${e.message}`,
          cpu: th.cpu,
          task: th.name,
          context: 'thread',
          kind: 'exit',
          stack: e.stack,
        };
        this.raiseFault(f);
        rejectReady(new MachineFaultError(f));
      });
      this.exited.push(
        new Promise<void>((res) =>
          w.on('exit', (code) => {
            if (!this.stopped) {
              const f: MachineFault = {
                thread: th.name,
                message: `thread ${th.name} exited unexpectedly (exit code ${code})`,
                cpu: th.cpu,
                task: th.name,
                context: 'thread',
                kind: 'exit',
              };
              this.raiseFault(f);
              rejectReady(new MachineFaultError(f));
            }
            res();
          }),
        ),
      );
    }
    const timer = setTimeout(
      () => rejectReady(new Error(`machine threads did not start within ${BOOT_TIMEOUT_MS / 1000} s`)),
      BOOT_TIMEOUT_MS,
    );
    // A strategy's setup() that does not return: name it (and the threads stuck in it).
    const setupWatch = setInterval(() => {
      const now = Date.now();
      const stuck = [...inSetup.entries()].filter(([, s]) => now - s.since > SETUP_TIMEOUT_MS);
      if (!stuck.length) return;
      const ref = this.opts.strategies[stuck[0][1].strategy];
      const who = ref?.url ? fileURLToPath(ref.url) : (ref?.label ?? 'a strategy');
      const threads = stuck.map(([t]) => this.plan.threads[t]?.name ?? `#${t}`);
      const on =
        threads.length === 1
          ? threads[0]
          : `${threads.length} threads (${threads.slice(0, 3).join(', ')}${threads.length > 3 ? ', ...' : ''})`;
      rejectReady(
        new MachineFaultError({
          thread: threads[0],
          message: `${who}: setup() did not return within ${SETUP_TIMEOUT_MS / 1000} s on ${on} (an endless loop or a blocking wait in setup()?)`,
          cpu: -1,
          task: 'setup',
          context: 'setup',
          ...(ref ? { strategy: ref.label } : {}),
          kind: 'bad-input',
        }),
      );
    }, 250);
    const onAbort = () => rejectReady(new BootInterrupted('interrupted while the machine was starting'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await allReady;
    } catch (e) {
      clearTimeout(timer);
      clearInterval(setupWatch);
      signal?.removeEventListener('abort', onAbort);
      await this.stop(e instanceof MachineFaultError || e instanceof BootInterrupted ? 200 : undefined);
      throw e;
    }
    clearTimeout(timer);
    clearInterval(setupWatch);
    signal?.removeEventListener('abort', onAbort);
    const sigs = this.objectsSignature.filter((s) => s !== undefined);
    const differs = (sigs[0] ?? []).findIndex((_, i) => new Set(sigs.map((s) => s[i])).size > 1);
    if (differs >= 0) {
      await this.stop();
      const ref = this.opts.strategies[differs];
      const who = ref ? (ref.url ? fileURLToPath(ref.url) : ref.label) : 'the machine';
      throw new MachineFaultError({
        thread: 'main',
        message: `${who}: setup() failed: it created different kernel objects in different threads: setup must be deterministic (no randomness, clock or thread-dependent branches)`,
        cpu: -1,
        task: 'setup',
        context: 'setup',
        ...(ref ? { strategy: ref.label } : {}),
        kind: 'bad-input',
      });
    }
  }

  /** The current clock (ns since the run's epoch). */
  nowNs(): number {
    return nowNs();
  }

  /** Report a fault found by the operator (the watchdog): ends the run like a thread's fault. */
  injectFault(f: MachineFault): void {
    this.raiseFault(f);
  }

  private raiseFault(f: MachineFault): void {
    if (this.fault || this.stopped) return;
    this.fault = f;
    for (const w of this.faultWaiters) w(f);
    this.faultWaiters = [];
  }

  /** Resolves with the first fault (never resolves if none happens). */
  onFault(): Promise<MachineFault> {
    if (this.fault) return Promise.resolve(this.fault);
    return new Promise((res) => this.faultWaiters.push(res));
  }

  private reportingThreads(): number {
    return this.plan.threads.filter((t) => t.kind !== 'irq').length;
  }

  /** Get every thread's attention: set Control on every CPU, ring every doorbell. */
  private poke(): void {
    for (let c = 0; c < this.opts.cpus; c++)
      Atomics.or(this.i32, this.R.cpu + c * CPU_WORDS + CPU_FLAGS, CpuFlag.Control);
    for (const b of this.bells) b.ring();
  }

  setPhase(p: Phase): void {
    Atomics.store(this.i32, this.R.control + C_PHASE, p);
    this.poke();
  }

  /** Set the fast pool's mix trigger in force (the warm-up lowers it). */
  setTrigger(n: number): void {
    Atomics.store(this.i32, this.R.control + C_TRIGGER, n);
  }

  /** Set the test switches (TestFlag bits); conformance only. */
  setTestFlags(bits: number): void {
    Atomics.store(this.i32, this.R.control + C_TEST, bits);
  }

  setActiveStrategy(i: number): void {
    Atomics.store(this.i32, this.R.control + C_ACTIVE, i);
  }

  /** Ask every thread for its histograms (and reset them); merged per stage. */
  async collect(): Promise<Partial<Record<Stage, Histogram>>> {
    this.reports.clear();
    this.epoch++;
    Atomics.store(this.i32, this.R.control + C_EPOCH, this.epoch);
    const done = new Promise<void>((res) => {
      this.reportWaiter = res;
    });
    this.poke();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((res) => {
      timer = setTimeout(() => res('timeout'), COLLECT_TIMEOUT_MS);
    });
    const r = await Promise.race([
      done.then(() => 'ok' as const),
      timeout,
      this.onFault().then(() => 'fault' as const),
    ]);
    clearTimeout(timer);
    this.reportWaiter = undefined;
    if (r === 'fault') throw new MachineFaultError(this.fault!);
    if (r === 'timeout') {
      const missing = this.plan.threads.filter((t) => t.kind !== 'irq' && !this.reports.has(t.id)).map((t) => t.name);
      throw new MachineFaultError({
        thread: missing.join(', '),
        message: `threads did not report within ${COLLECT_TIMEOUT_MS / 1000} s: ${missing.join(', ')} (a strategy or task may be stuck without passing a preemption point)`,
        cpu: -1,
        task: missing[0] ?? '?',
        context: 'collect',
        kind: 'watchdog',
      });
    }
    const merged: Partial<Record<Stage, Histogram>> = {};
    for (const rep of this.reports.values()) {
      if (rep.epoch !== this.epoch) continue;
      for (const [stage, encoded] of Object.entries(rep.stages) as [Stage, EncodedHistogram][]) {
        merged[stage] ??= newHistogram(false); // the encoding is portable: merge as JS, 64-bit counts
        addEncoded(merged[stage], encoded);
      }
    }
    return merged;
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
    return out;
  }

  /** cross_cpu only: switch the IPI policy between trials (see src/workloads/cross-cpu.ts). */
  setCrossCpuPolicy(policy: 'always' | 'if-idle'): void {
    const base = this.R.workload['xcpu:state'];
    if (base === undefined) throw new Error('setCrossCpuPolicy: the workload is not cross_cpu');
    Atomics.store(this.i32, base + XCPU_POLICY_WORD, policy === 'if-idle' ? 1 : 0);
    // Idle consumers must accept IPIs under either policy.
    const w = this.opts.workload;
    if (w.kind === 'cross_cpu') for (const c of w.consumers) Atomics.store(this.i32, xcpuFlagWord(base, c), 1);
  }

  /** Each machine thread's V8 memory (bytes), as of its last report, by thread name. */
  threadHeaps(): { thread: string; heap: ThreadHeap }[] {
    return [...this.reports.values()].map((r) => ({
      thread: this.plan.threads[r.thread]?.name ?? `#${r.thread}`,
      heap: r.heap,
    }));
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
   * Is the machine quiet: no deferred mix pending, no work queued anywhere, no interrupt or
   * softirq pending, no workload message in flight? Returns what is still busy, or ''.
   */
  busy(): string {
    const i32 = this.i32;
    // The order of the loads matters: each stage of a job is published (Atomics) before the
    // stage that feeds it lets go, so reading upstream first cannot miss a job in between.
    // 1. Generators: none may still act on the measuring phase (C_GEN_INFLIGHT).
    if (Atomics.load(i32, this.R.control + C_GEN_INFLIGHT) !== 0) return 'a load generator is still generating';
    // 1b. The workload's own messages: a tcp_lat exchange ends when the client consumes the
    //     reply, in NET_RX after the reply's interrupt was handled (and its hand-off published).
    const w = this.opts.workload;
    if (w.kind === 'tcp_lat') {
      const req = new SpscRing(i32, this.R.workload['tcp:ring0']);
      const rep = new SpscRing(i32, this.R.workload['tcp:ring1']);
      if (req.produced() !== rep.consumed()) return 'a tcp_lat message is in flight';
    }
    if (w.kind === 'cross_cpu') {
      for (const c of w.consumers)
        if (new MpscRing(i32, this.R.workload[`xcpu:ring${c}`]).length() !== 0)
          return `cross_cpu items queued for CPU ${c}`;
    }
    // 2. Queues: an interrupt record leaves its ring only after its handler ran (runtime.ts,
    //    drainIrqRing), so a hand-off it made is in CPU_DEFERRED below before the ring shows 0.
    for (let c = 0; c < this.opts.cpus; c++) {
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

  /** Wait until busy() is '' (or the timeout passes, or a fault). Returns the last busy reason. */
  async drain(timeoutMs: number): Promise<string> {
    const t0 = Date.now();
    for (;;) {
      if (this.fault) throw new MachineFaultError(this.fault);
      const b = this.busy();
      if (b === '' || Date.now() - t0 > timeoutMs) return b;
      await sleep(2);
    }
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

  /** Stop every thread and join them; terminates any that do not leave within `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // After a fault a thread may be stuck for good (a strategy looping in hardirq): do not wait long.
    if (this.fault) graceMs = Math.min(graceMs, 250);
    Atomics.store(this.i32, this.R.control + C_STOP, 1);
    this.poke();
    const all = Promise.all(this.exited);
    const r = await Promise.race([all.then(() => 'ok' as const), sleep(graceMs).then(() => 'late' as const)]);
    if (r === 'late') {
      // terminate() waits for the thread to reach a point where V8 can stop it; a thread deep in
      // a garbage-collection storm (a strategy filling its heap) may never get there. Do not
      // wait for it for ever: the run is reported, and the process ends with it.
      const terminated = Promise.all(this.workers.map((w) => w.terminate())).then(() => all);
      const t = await Promise.race([
        terminated.then(() => 'ok' as const),
        sleep(TERMINATE_WAIT_MS).then(() => 'stuck' as const),
      ]);
      if (t === 'stuck') for (const w of this.workers) w.unref();
    }
  }

  static hostInfo() {
    const c = hostCpus();
    return { cpuModel: c[0]?.model ?? 'unknown', hostCores: c.length };
  }
}

export { Phase, STAGES };
