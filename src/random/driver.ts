/**
 * random.c's driver half: what the hard-IRQ handler does with a device interrupt
 * (handle_irq_event → add_interrupt_randomness), the hand-off to the deferral strategy in
 * force, and the deferred job the strategy runs (mix_interrupt_randomness, or seed 004's
 * driver work item), with the accounting that proves every accepted hand-off ran once.
 *
 * An interrupt reads one way: irqchip (src/hw/irqchip.ts) → entry (src/machine/runtime.ts)
 * → this driver → the strategy's handoff() → a kernel object (src/kernel/) → back here in
 * `runDeferred` → the fast pool (fastpool.ts) and the input pool (inputpool.ts).
 *
 * Shared words (src/hw/layout.ts): CPU_DEFERRED (hand-offs accepted and not yet run) and
 * CPUF_HANDOFF_NS (clock of the pending hand-off); C_ACTIVE, C_TRIGGER, C_TEST (control); with
 * the driver payload, each CPU's request ring (MachineRegions.requestRings).
 *
 * With the driver payload every interrupt is a request for the driver's work, and each request
 * is timed until the run that serves it starts (`request_to_start`): the one that queued the work
 * from CPUF_HANDOFF_NS, the ones that found it pending from the request ring. A request that
 * finds the work pending in the ~100 ns between a run's clear of CPU_DEFERRED and its drain of
 * the ring (possible only when another CPU runs the work: an unbound worker) is served by that
 * run but timed to the next one: overstated by a period, never understated.
 */

import type { DeferralStrategy, Deferred, Kernel } from '../api/types.js';
import { KernelBug } from '../errors.js';
import {
  C_ACTIVE,
  C_TEST,
  C_TRIGGER,
  CPU_DEFERRED,
  CPUF_HANDOFF_NS,
  CpuCounter,
  type MachineRegions,
  type RegionDecl,
  TestFlag,
  Where,
} from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import type { CpuContext } from '../kernel/context.js';
import { getTime, putTime } from '../shm/layout.js';
import { SpscRing } from '../shm/ring.js';
import { FAST_POOL_WORDS, FastPool, type FastPoolVariant, initFastPool, MIX_SKIPPED } from './fastpool.js';
import { INPUT_POOL_WORDS, InputPool } from './inputpool.js';

/** The deferred job a hand-off carries: random.c's mix (default), or a driver's work item (seed 004). */
export type PayloadOptions =
  | { kind: 'random_mix' }
  /**
   * Each device interrupt hands off one work item (unless one is pending) that busies the CPU for
   * `workNs`. Every request's wait until its work starts is timed (`request_to_start`); those
   * longer than `slowNs` (default 1 ms) are counted as `requests_slow`. `workSeqNs`: each run's
   * work instead, in order and cycled per thread (a measured sequence: bench:twin passes its
   * host waker's CPU per cycle, twin.c's CPUSEQ_FILE, whose spread decides the share of waits
   * beside a nice −20 hog; docs/twin.md).
   */
  | { kind: 'driver_work'; workNs: number; slowNs?: number; workSeqNs?: readonly number[] };

/** The driver's work for its `run`-th run (0-based): the sequence's value, cycled, or `workNs`. */
export function driverWorkAt(p: { workNs: number; workSeqNs?: ArrayLike<number> }, run: number): number {
  const s = p.workSeqNs;
  return Math.max(1, s && s.length > 0 ? s[run % s.length] : p.workNs);
}

/**
 * Driver requests (seed 004's driver payload) that found the work still pending, per CPU,
 * waiting for the run that serves them: 8192 holds 41 s of pending at 200 interrupts/s, 82 ms at
 * 100k/s. A full ring refuses the request's time, counted as `requests_untimed` (it waited at
 * least as long as the ring took to fill). Reserved only with the driver payload.
 */
export const REQUEST_RING_CAPACITY = 8192;
/** Words per request record: request time low 32 bits, request time high bits. */
export const REQUEST_RECORD_WORDS = 2;
/** A request record's one field: the request's time (two words, putTime). */
export const REQ_R_TIME = 0;

/**
 * random.c's shared regions (src/hw/layout.ts, RegionDecl): a fast pool per CPU
 * (src/random/fastpool.ts), the input pool (src/random/inputpool.ts) and, with the driver
 * payload, a request ring per CPU (REQUEST_* above).
 */
export function randomRegions(cpus: number, payload: PayloadOptions | undefined): Record<string, RegionDecl> {
  const out: Record<string, RegionDecl> = {
    fastPools: { words: FAST_POOL_WORDS * cpus, count: 1 },
    inputPool: { words: INPUT_POOL_WORDS, count: 1 },
  };
  if (payload?.kind === 'driver_work')
    out.requests = { words: SpscRing.wordsFor(REQUEST_RING_CAPACITY, REQUEST_RECORD_WORDS), count: cpus };
  return out;
}

/**
 * Initialise random.c's regions: each CPU's fast pool, the input pool, the request rings.
 * Returns each CPU's fast pool. Context: main thread, before any worker starts.
 */
export function initRandom(
  i32: Int32Array,
  R: MachineRegions,
  cpus: number,
  variant: FastPoolVariant,
  words: (base: number) => number,
): FastPool[] {
  const pools: FastPool[] = [];
  const base = R.parts.fastPools[0];
  for (let c = 0; c < cpus; c++) {
    initFastPool(i32, base + c * FAST_POOL_WORDS, variant, c);
    pools.push(new FastPool(i32, base + c * FAST_POOL_WORDS, variant));
  }
  InputPool.init(i32, R.parts.inputPool[0]);
  for (const b of R.parts.requests ?? []) SpscRing.init(i32, b, REQUEST_RING_CAPACITY, REQUEST_RECORD_WORDS, words(b));
  return pools;
}

/** instruction_pointer() analogue: a base address plus the irq number. */
const IP_BASE = 0xffff_8000_0100_0;
/** A driver request that waits longer than this for its work is slow: 1 ms, seed 004's scale. */
export const DEFAULT_SLOW_REQUEST_NS = 1_000_000;

export class RandomDriver {
  readonly fastPools: FastPool[] = [];
  readonly inputPool: InputPool;
  /** Per CPU: the deferred job handed to strategies (StrategySetup.deferred). */
  readonly deferred: Deferred[] = [];
  /** The strategies of the run, in order (C_ACTIVE indexes them). */
  readonly strategies: DeferralStrategy[] = [];
  /** The facade strategies are called with; set once it exists. */
  facade!: Kernel;
  /** An application task of CPU `cpu` is running or runnable (set by the runtime; none by default). */
  appRunnable: (cpu: number) => boolean = () => false;
  /** > 0: the hand-off payload is a driver work item of this many ns, not random.c's mix. */
  private readonly driverWorkNs: number;
  /** The driver payload's workNs and, when given, its per-run sequence (driverWorkAt). */
  private readonly driverWork: { workNs: number; workSeqNs?: Float64Array };
  /** This thread's driver runs so far (the sequence's index). */
  private driverRuns = 0;
  /** Per CPU, with the driver payload: requests that found the work pending (layout.ts). */
  private readonly requests: SpscRing[];
  /** A request that waits longer than this is counted as `requests_slow` (driver payload). */
  private readonly slowNs: number;
  private readonly ctl: number;

  constructor(
    private readonly ctx: CpuContext,
    variant: FastPoolVariant,
    payload: PayloadOptions | undefined,
    lockSpins: number,
    /**
     * The deferred job ran `ns` in task context as task `task` (a kworker's work item): what a
     * kthread is charged under `--kthread-charge work` (RunQueues.addWork, src/kernel/sched/rq.ts).
     */
    private readonly reportWork: (task: number, ns: number) => void = () => {},
  ) {
    this.ctl = ctx.R.control;
    this.driverWorkNs = payload?.kind === 'driver_work' ? Math.max(1, payload.workNs) : 0;
    this.driverWork =
      payload?.kind === 'driver_work' && payload.workSeqNs?.length
        ? { workNs: payload.workNs, workSeqNs: Float64Array.from(payload.workSeqNs) }
        : { workNs: this.driverWorkNs };
    this.requests = (ctx.R.parts.requests ?? []).map((base) => new SpscRing(ctx.i32, base));
    this.slowNs = payload?.kind === 'driver_work' ? (payload.slowNs ?? DEFAULT_SLOW_REQUEST_NS) : 0;
    for (let c = 0; c < ctx.nrCpus; c++) {
      this.fastPools.push(new FastPool(ctx.i32, ctx.R.parts.fastPools[0] + c * FAST_POOL_WORDS, variant));
      this.deferred.push(new DeferredMix(this, c));
    }
    this.inputPool = new InputPool(ctx.i32, ctx.R.parts.inputPool[0], lockSpins);
  }

  /**
   * handle_irq_event → add_interrupt_randomness(irq), and the hand-off when it says so (or, with
   * the driver payload, whenever the driver's work is not pending). `t`: the handler's start.
   * Context: hardirq on the owner of the current CPU.
   */
  interrupt(irq: number, t: number): void {
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const c = ctx.cpu;
    ctx.count(CpuCounter.interrupts);
    const mix = this.fastPools[c].addInterruptRandomness(
      irq,
      t,
      IP_BASE + irq,
      ctx.jiffies(),
      ctx.hz,
      Atomics.load(i32, this.ctl + C_TRIGGER),
    );
    if (this.driverWorkNs > 0) {
      // Driver payload: every interrupt queues the driver's work unless it is still pending;
      // a request that finds it pending waits for the run that is coming: its time goes into
      // the ring, for that run to time.
      if (Atomics.load(i32, ctx.cw(c, CPU_DEFERRED)) > 0) {
        this.waitForRun(c, t);
        return;
      }
    } else if (!mix) {
      return;
    }
    const dw = ctx.cw(c, CPU_DEFERRED);
    // The hand-off time of the pending job; not overwritten by a hand-off that will be refused.
    const pendingBefore = Atomics.add(i32, dw, 1);
    if (pendingBefore === 0) ctx.f64[ctx.cf(c, CPUF_HANDOFF_NS)] = t;
    const active = Math.max(Atomics.load(i32, this.ctl + C_ACTIVE), 0);
    const s = this.strategies[active];
    ctx.inStrategy = active;
    const t1 = ctx.tracer.on ? ctx.now() : 0;
    ctx.setWhere(c, Where.Handoff);
    ctx.timeline.begin(TlWhat.Handoff, c, active);
    const ok = this.callHandoff(s, c);
    ctx.timeline.handoffEnd(c, ok);
    ctx.setWhere(c, Where.Hardirq);
    if (ctx.tracer.on) ctx.tracer.record(St.HandoffCall, ctx.now() - t1);
    if (!ok) Atomics.sub(i32, dw, 1);
    ctx.count(ok ? CpuCounter.handoffs : CpuCounter.handoffs_refused);
    if (ok) ctx.count(this.appRunnable(c) ? CpuCounter.handoffs_app_busy : CpuCounter.handoffs_app_idle);
    // Refused with nothing pending: no job will run, and random.c's MIX_INFLIGHT stays set.
    if (!ok && pendingBefore === 0) ctx.count(CpuCounter.handoffs_lost);
    if (ok && (Atomics.load(i32, this.ctl + C_TEST) & TestFlag.DoubleHandoff) !== 0) this.secondHandoff(s, c);
    ctx.inStrategy = -1;
  }

  /** A request on CPU `c` at `t` that found the work pending: into the ring, or counted untimed. */
  private waitForRun(c: number, t: number): void {
    const ring = this.requests[c];
    const idx = ring?.claim() ?? -1;
    if (idx < 0) {
      this.ctx.count(CpuCounter.requests_untimed);
      return;
    }
    const i32 = this.ctx.i32;
    putTime(i32, idx + REQ_R_TIME, t);
    ring.publish(); // publishes the time; pairs with the run's peek()
  }

  /** The run of CPU `poolCpu`'s work that started at `t0` serves every request waiting in the ring. */
  private serveRequests(poolCpu: number, t0: number): void {
    const ctx = this.ctx;
    const ring = this.requests[poolCpu];
    if (!ring) return;
    const i32 = ctx.i32;
    for (let idx = ring.peek(); idx >= 0; idx = ring.peek()) {
      const t = getTime(i32, idx + REQ_R_TIME);
      if (ctx.timeline.on) ctx.timeline.request(ctx.cpu, poolCpu, t0, t);
      this.requestServed(t0 - t, poolCpu, t);
      ring.release();
    }
  }

  /** One request's wait until the run that serves it started, timed and judged against slowNs. */
  private requestServed(waitedNs: number, poolCpu: number, t: number): void {
    // --host-stalls: a host stall on the request's CPU or the serving one since `t`?
    this.ctx.recordSample(St.RequestToStart, St.RequestToStartHost, waitedNs, t, poolCpu, this.ctx.cpu);
    if (waitedNs > this.slowNs) this.ctx.count(CpuCounter.requests_slow);
  }

  /** The strategy's hand-off for CPU `c`'s mix; anything but a boolean back is a fault. */
  private callHandoff(s: DeferralStrategy, c: number): boolean {
    let ok: unknown;
    try {
      ok = s.handoff(this.facade, this.deferred[c]);
    } catch (e) {
      // Say which method threw (the fault line names the strategy, the CPU and the context);
      // a kernel BUG the strategy's call ran into says what it is itself.
      if (e instanceof Error && !(e instanceof KernelBug)) {
        try {
          e.message += THROWN_IN_HANDOFF;
        } catch {
          // a frozen error keeps its message
        }
      }
      throw e;
    }
    if (ok !== true && ok !== false) throw new Error(badHandoffReturn(ok));
    return ok;
  }

  /** Conformance: hand off again at once (see TestFlag.DoubleHandoff). */
  private secondHandoff(s: DeferralStrategy, c: number): void {
    const ctx = this.ctx;
    const dw = ctx.cw(c, CPU_DEFERRED);
    if (Atomics.load(ctx.i32, dw) > 0) {
      if (this.callHandoff(s, c)) ctx.count(CpuCounter.handoffs_while_pending_accepted);
      return;
    }
    ctx.f64[ctx.cf(c, CPUF_HANDOFF_NS)] = ctx.now();
    Atomics.add(ctx.i32, dw, 1);
    const ok = this.callHandoff(s, c);
    if (!ok) Atomics.sub(ctx.i32, dw, 1);
    ctx.count(ok ? CpuCounter.handoffs : CpuCounter.handoffs_refused);
    if (!ok) ctx.count(CpuCounter.handoffs_lost); // nothing was pending: the refusal loses the job
  }

  /**
   * The deferred payload for `poolCpu`'s hand-off, measured. `trylock`: skip the mix when
   * input_pool.lock is held (Deferred.tryRun); returns false when it was skipped.
   * Context: whatever the strategy chose.
   */
  runDeferred(poolCpu: number, trylock = false): boolean {
    let mixed = true;
    let stolen = 0;
    let workNs = 0;
    const ctx = this.ctx;
    const i32 = ctx.i32;
    const t0 = ctx.now();
    ctx.timeline.workBegin(ctx.cpu, poolCpu, t0);
    if (Atomics.sub(i32, ctx.cw(poolCpu, CPU_DEFERRED), 1) <= 0) {
      Atomics.add(i32, ctx.cw(poolCpu, CPU_DEFERRED), 1); // keep the count honest for the rest
      ctx.count(CpuCounter.mixes_duplicate);
    }
    const waited = t0 - ctx.f64[ctx.cf(poolCpu, CPUF_HANDOFF_NS)];
    ctx.tracer.record(St.HandoffToStart, waited);
    if (this.driverWorkNs > 0) {
      // The request that queued the work, then those that found it pending.
      this.requestServed(waited, poolCpu, t0 - waited);
      this.serveRequests(poolCpu, t0);
      // The driver's work: busy for workNs. A gap between two clock reads of the spin longer
      // than SPIN_GAP_NS is the host taking the thread (each turn reads the clock: ~0.1 µs), not
      // work: it is left out of what the job reports as run (steal, as a guest's kernel leaves a
      // vCPU's preemption out of clock_task with CONFIG_PARAVIRT_TIME_ACCOUNTING).
      let last = t0;
      workNs = driverWorkAt(this.driverWork, this.driverRuns++);
      for (let now = ctx.now(); now - t0 < workNs; now = ctx.now()) {
        if (now - last > SPIN_GAP_NS) stolen += now - last;
        last = now;
      }
    } else {
      const bits = this.fastPools[poolCpu].mixInterruptRandomness(ctx.cpu, ctx.jiffies(), this.inputPool, t0, trylock);
      if (bits === MIX_SKIPPED) {
        mixed = false;
        ctx.count(CpuCounter.mixes_trylock_skipped);
      }
    }
    // In a task (a kworker), the job's charge under --kthread-charge work: the mix from the job's
    // start to its end; the driver's work, workNs busy from the job's start, at most workNs less
    // what the host took inside its loop (a host stall before the loop, while the job timed its
    // requests, would otherwise be charged as work: seen, 3.4 ms). The lab's bookkeeping after
    // the payload (counters, trace, timeline) is not charged.
    const inTask = ctx.hardirq === 0 && ctx.softirq === 0;
    // Read only when someone uses it (a mix in the hard IRQ with tracing off reads no clock here).
    const tPayload = inTask || ctx.tracer.on ? ctx.now() : t0;
    if (inTask) {
      const ran = tPayload - t0 - stolen;
      this.reportWork(ctx.task, this.driverWorkNs > 0 ? Math.min(ran, workNs) : ran);
    }
    if (ctx.cpu !== poolCpu) ctx.count(CpuCounter.mixes_remote);
    ctx.count(
      ctx.hardirq > 0 ? CpuCounter.mixes_hardirq : ctx.softirq > 0 ? CpuCounter.mixes_softirq : CpuCounter.mixes_task,
    );
    const w = this.inputPool.lastWaitNs;
    if (w > 0) ctx.tracer.record(St.LockWait, w);
    if (w > 0 && ctx.timeline.on) ctx.timeline.span(TlWhat.LockWait, ctx.cpu, 0, ctx.now() - w);
    ctx.count(CpuCounter.mixes);
    ctx.timeline.end(TlWhat.Work, ctx.cpu, poolCpu);
    if (ctx.tracer.on) ctx.tracer.record(St.Work, tPayload - t0);
    // The application waited for this run: its task is runnable here (preempted or queued).
    if (this.appRunnable(ctx.cpu)) ctx.count(CpuCounter.deferred_us_app_waiting, Math.round((ctx.now() - t0) / 1000));
    return mixed;
  }
}

/**
 * A gap between two clock reads of the driver's busy loop above which the time is the host's,
 * not the work's: 20 µs, a hundred turns of the loop, and a tenth of the host-stall threshold
 * (src/machine/host-stall.ts) since the loop has no preemption point to be watched by.
 */
const SPIN_GAP_NS = 20_000;

/** The per-CPU deferred mix handed to strategies. */
class DeferredMix implements Deferred {
  constructor(
    private readonly driver: RandomDriver,
    readonly cpu: number,
  ) {}
  run(_k: Kernel): void {
    this.driver.runDeferred(this.cpu);
  }
  tryRun(_k: Kernel): boolean {
    return this.driver.runDeferred(this.cpu, true);
  }
}

/** Appended to an error a strategy's handoff() threw. */
const THROWN_IN_HANDOFF = " (thrown by the strategy's handoff())";

/** The message for a hand-off that returned something other than a boolean. */
function badHandoffReturn(v: unknown): string {
  if (typeof (v as { then?: unknown })?.then === 'function')
    return 'handoff() returned a Promise: strategies run synchronously inside the emulated CPU, whose loop never yields to the event loop while the machine runs (async, await, setTimeout and Promise callbacks never resume); do the work with the kernel API and return true or false';
  const got = v === undefined ? 'undefined (no return value)' : typeof v === 'string' ? JSON.stringify(v) : String(v);
  return `handoff() returned ${got}, not a boolean: return true when the mix was queued (it will run once), false when it was already pending (as queue_work_on does)`;
}
