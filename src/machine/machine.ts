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
import { BootInterrupted, type MachineFault, MachineFaultError } from '../errors.js';
import {
  C_ACTIVE,
  C_EPOCH,
  C_PHASE,
  C_STOP,
  C_TEST,
  C_TRIGGER,
  CPU_FLAGS,
  CPU_WORDS,
  CpuFlag,
  type MachineRegions,
  Phase,
} from '../hw/layout.js';
import { addEncoded, type EncodedHistogram, histogramWasmBytes, STAGES, type Stage } from '../hw/trace.js';
import { compileStrategies } from '../strategies/compile.js';
import { spawnWorker } from '../threads/spawn.js';
import { takeHistogram } from './histogram-pool.js';
import {
  type HelpersLowered,
  type HostSchedstat,
  lowerHostHelpers,
  restoreHostHelpers,
  sumSchedstat,
  watchIdleHelpers,
} from './host-threads.js';
import { type Counters, MachineMemory } from './memory.js';
import type { MachineOptions } from './options.js';
import type { MachinePlan } from './plan.js';
import type { StartupData, ThreadHeap, WorkerMessage } from './protocol.js';

// The catalogue's classes (src/errors.ts), where callers have always imported them from.
export { BootInterrupted, MachineFaultError } from '../errors.js';

const ENTRY = {
  cpu: new URL('../../workers/cpu.js', import.meta.url),
  kthread: new URL('../../workers/kthread.js', import.meta.url),
  irq: new URL('../../workers/irq.js', import.meta.url),
};

/** How long threads may take to start (from TypeScript source each loads esbuild: ~0.3 s). */
export const BOOT_TIMEOUT_MS = 60_000;
/** More per thread beyond BOOT_TIMEOUT_THREADS: a 16-CPU machine has ~50 threads to start on a 2-core host. */
export const BOOT_TIMEOUT_PER_THREAD_MS = 2_000;
const BOOT_TIMEOUT_THREADS = 16;
/** How long stop() waits for terminated threads to end before leaving them to the process's exit. */
export const TERMINATE_WAIT_MS = 2_000;
/** How long one strategy's setup() may run on a thread (it only creates kernel objects). */
export const SETUP_TIMEOUT_MS = 10_000;

/** Old-generation heap limit of each machine thread (MiB). */
export const WORKER_HEAP_MB = 512;
/**
 * Young-generation limit of each machine thread (MiB). The threads allocate all the time: every
 * clock read (performance.now() on Node 20) leaves a short-lived heap number, ~80–100 MB/s on a
 * busy CPU thread, so the young generation's size sets how often each thread stops for a
 * scavenge. At 4 MiB (the value until 2026-12-06, chosen against a soak's RSS creep) the default
 * comparison's inline and workqueue (3 trials of 1 s, two runs each, alternated) spent 539–647 ms
 * per strategy in GC and had a p99.9 of 0.75–1.6 ms; at 16 MiB 144–257 ms and 0.23–0.27 ms; at 48
 * MiB 182–208 ms and 0.37–0.46 ms (docs/architecture.md, "Memory over a long run"). Little
 * survives a scavenge here, so a larger space means fewer pauses of about the same length. The
 * cost is resident memory: up to 16 MiB more per machine thread.
 */
export const WORKER_YOUNG_MB = 16;
/** How long the threads may take to report between trials. */
export const COLLECT_TIMEOUT_MS = 10_000;

export type { MachineFault } from '../errors.js';

export type { Counters } from './memory.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Machine extends MachineMemory {
  private readonly workers: Worker[] = [];
  private readonly exited: Promise<void>[] = [];
  private reports = new Map<number, Extract<WorkerMessage, { type: 'report' }>>();
  private reportWaiter: (() => void) | undefined;
  private faultWaiters: ((f: MachineFault) => void)[] = [];
  private epoch = 0;
  private stopped = false;
  fault: MachineFault | undefined;
  wasm = false;
  clockErrorNs = 0;
  readonly objectsSignature: string[][] = [];
  /** Linux thread ids of the CPU and kthread threads (host-threads.ts), for the oversubscription counters. */
  private readonly hostTids: number[] = [];
  /** The irq thread's Linux thread id (-1: not reported): a machine thread, never reniced. */
  private irqTid = -1;
  /**
   * `--host-helpers nice` or `idle`: how many of the process's other threads were lowered at boot
   * (lowerHostHelpers; count -1: /proc unreadable), and to what; undefined when not asked.
   */
  hostHelpers: HelpersLowered | undefined;
  /** watchIdleHelpers over hostHelpers' idled threads, while the machine runs. */
  private idleWatch: { stop(): void } | undefined;
  private readonly schedstat: HostSchedstat = { runNs: 0, waitNs: 0 };

  private constructor(
    opts: MachineOptions,
    sab: SharedArrayBuffer,
    R: MachineRegions,
    plan: MachinePlan,
    readonly epochNs: number,
  ) {
    super(opts, sab, R, plan);
  }

  /** Build the shared memory and start every thread; resolves when all are ready. */
  static async boot(opts: MachineOptions, signal?: AbortSignal): Promise<Machine> {
    const { plan, sab, R } = MachineMemory.layout(opts);
    const epochNs = newEpoch();
    initClock(epochNs, opts.tdf ?? 1);
    const m = new Machine(opts, sab, R, plan, epochNs);
    m.init();
    await m.start(signal);
    return m;
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
    const compiled = await compileStrategies(this.opts.strategies);
    for (const th of this.plan.threads) {
      const data: StartupData = {
        sab: this.sab,
        regions: this.R,
        plan: this.plan,
        opts: this.opts,
        threadId: th.id,
        epochNs: this.epochNs,
        histogramWasm: histogramWasmBytes(),
        compiled,
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
          if (th.kind === 'irq' && m.tid !== undefined && m.tid >= 0) this.irqTid = m.tid;
          if (th.kind !== 'irq') {
            if (m.tid !== undefined && m.tid >= 0) this.hostTids.push(m.tid);
            this.objectsSignature[m.thread] = m.objects;
            if (m.objectNames.length > this.objectNames.length) this.objectNames = m.objectNames;
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
    const bootMs =
      BOOT_TIMEOUT_MS + Math.max(0, this.plan.threads.length - BOOT_TIMEOUT_THREADS) * BOOT_TIMEOUT_PER_THREAD_MS;
    const timer = setTimeout(
      () => rejectReady(new Error(`machine threads did not start within ${bootMs / 1000} s`)),
      bootMs,
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
    const helpers = this.opts.hostHelpers;
    if (helpers === 'nice' || helpers === 'idle') {
      this.hostHelpers = lowerHostHelpers([...this.hostTids, this.irqTid], helpers);
      // Idled helpers that starve stall V8's collector on a CPU thread: raise them (HOST_HELPER_IDLE).
      if (this.hostHelpers.idled.length) this.idleWatch = watchIdleHelpers(this.hostHelpers);
    }
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

  /**
   * The counters, plus what the host did with the machine's threads since boot (summed over the
   * CPU and kthread threads, from their schedstat): `host_thread_run_ns` on a core and
   * `host_thread_wait_ns` runnable but waiting for one. Their ratio is what oversubscribing the
   * host's cores cost. Context: main thread, between phases (one /proc read per thread: not for
   * polling loops, which take counters()).
   */
  countersWithHost(): Counters {
    const out = this.counters();
    const sum = sumSchedstat(this.hostTids, this.schedstat);
    out.host_thread_run_ns = sum.runNs;
    out.host_thread_wait_ns = sum.waitNs;
    return out;
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

  /** Ask every thread for its histograms (and reset them); merged per stage (takeHistogram: give them back with releaseHistograms when done). */
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
        merged[stage] ??= takeHistogram();
        addEncoded(merged[stage], encoded);
      }
    }
    return merged;
  }

  /** Each machine thread's V8 memory (bytes), as of its last report, by thread name. */
  threadHeaps(): { thread: string; heap: ThreadHeap }[] {
    return [...this.reports.values()].map((r) => ({
      thread: this.plan.threads[r.thread]?.name ?? `#${r.thread}`,
      heap: r.heap,
    }));
  }

  /**
   * Wait until the machine is quiet (or the timeout passes, or a fault). Returns '' when quiet,
   * else the last busy reason.
   *
   * Quiet is two sweeps of busy() in a row that find nothing, with no activity (memory.ts,
   * activity()) from the end of the first to the end of the second. One sweep is not enough:
   * busy() reads upstream stages first, but some downstream stages feed upstream ones (NET_RX
   * sends an ACK, a NIC event, after the sweep has read the NICs and before it reads the
   * softirqs, by then done), and a sweep the host descheduled halfway widens that window from
   * microseconds to milliseconds (the drain test on a loaded host: 2 NIC interrupts handled after
   * "quiet"). Anything that ran after the first sweep's end moved the count; anything left
   * pending then is seen by the second sweep.
   */
  async drain(timeoutMs: number): Promise<string> {
    const t0 = Date.now();
    let quietAt = -1; // activity() when the previous sweep found nothing busy, else -1
    for (;;) {
      if (this.fault) throw new MachineFaultError(this.fault);
      const b = this.busy();
      const now = b === '' ? this.activity() : -1;
      if (b === '' && now === quietAt) return '';
      quietAt = now;
      if (Date.now() - t0 > timeoutMs)
        return b || 'the machine was still active between two checks that found it quiet';
      await sleep(2);
    }
  }

  /** Stop every thread and join them; terminates any that do not leave within `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.idleWatch?.stop();
    restoreHostHelpers(this.hostHelpers);
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
