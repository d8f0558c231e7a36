/**
 * Host stalls and V8 garbage collection on a CPU's thread (issue 28, item 1; docs/results.md,
 * "Host stalls and GC").
 *
 * A thread that owns a CPU passes preemption points (Runtime.poll, pollIrq) every few
 * microseconds while it runs; each reads the clock already. A gap between two of them longer than
 * the threshold is a **host stall**: time the emulated CPU did not run, because the host
 * descheduled its thread (steal, as a hypervisor's guest sees it), V8 collected garbage on it, or
 * the thread was otherwise held (a page fault, a lock whose holder was descheduled). Gaps the
 * thread takes on purpose are not counted: the detector is armed when the thread takes a CPU
 * (enterCpu) and disarmed when it hands it over (switchTo, leaveCpu) or the idle task halts or
 * polls (idle.ts).
 *
 * Hot path: {@link HostStalls.at} is a subtraction, a store and a compare on the clock value the
 * preemption point reads (it read it anyway, except when an interrupt flag was already set: one
 * read more there, before the interrupt's handling); no allocation. Everything else runs only
 * when a stall is detected:
 *   - the cross-check, from the thread's own scheduler statistics: run_delay (time runnable on a
 *     host run queue, /proc/thread-self/schedstat's second field) and nonvoluntary_ctxt_switches
 *     (/proc/thread-self/status), read through file descriptors opened once per thread; their
 *     change since the previous read. Where /proc is absent both are unknown (−1) and nothing is
 *     charged as steal;
 *   - the GCs V8 ran on this thread since the previous look (v8.GCProfiler: its callbacks run
 *     synchronously inside the collector; a PerformanceObserver's 'gc' entries are delivered on
 *     the thread's event loop, which a CPU thread never turns while the machine runs, so they
 *     would arrive after the run);
 *   - the records: a HostStall slice on the timeline (TlWhat.HostStall), a Gc slice when GCs ran
 *     in it, the counters host_stalls, host_stall_us, host_stalls_preempted, and the stage
 *     host_stall; the CPU's CPUF_STALL_END (read by tcp_lat and the driver payload for
 *     `--host-stalls mark|drop`);
 *   - the steal charge (`--host-steal`, off by default): min(gap, Δrun_delay) is steal, subtracted from the running
 *     task's clock as update_rq_clock_task() subtracts paravirt steal from rq->clock_task
 *     (kernel/sched/core.c, CONFIG_PARAVIRT_TIME_ACCOUNTING; KVM's steal is the vCPU thread's
 *     run_delay: record_steal_time(), arch/x86/kvm/x86.c). Scheduler.chargeSteal.
 *
 * Context: one per thread that can own a CPU; its own thread only.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { GCProfiler } from 'node:v8';
import { CPU_COUNTERS, CPUF_STALL_END, CpuCounter } from '../hw/layout.js';
import { TlWhat } from '../hw/timeline.js';
import { St } from '../hw/trace.js';
import type { CpuContext } from '../kernel/context.js';
import type { Scheduler } from '../kernel/sched/core.js';

/**
 * Default threshold: a gap between two preemption points above this is a host stall. Chosen from
 * the distribution of gaps measured by bench/stalls.ts (docs/results.md, "Host stalls and GC"):
 * the lab's own longest steps between preemption points (a 64 KiB segment's copy and checksum, a
 * deferred mix with the input-pool lock, the driver payload's 20 µs of work) stay below ~100 µs,
 * and a host time slice or a young-generation GC is 0.2 ms or more.
 */
export const HOST_STALL_THRESHOLD_NS = 200_000;

/** `--host-stalls`: what the latency distribution does with samples that overlapped a stall. */
export const HOST_STALL_MODES = ['keep', 'mark', 'drop'] as const;
export type HostStallMode = (typeof HOST_STALL_MODES)[number];
export const DEFAULT_HOST_STALL_MODE: HostStallMode = 'keep';
/** HostStallMode as a number on the hot path. */
export enum StallMode {
  Keep = 0,
  Mark = 1,
  Drop = 2,
}
export const stallModeOf = (m: HostStallMode | undefined): StallMode =>
  m === 'mark' ? StallMode.Mark : m === 'drop' ? StallMode.Drop : StallMode.Keep;

/** MachineOptions.hostStalls. */
export interface HostStallOptions {
  /** Default 'keep'. */
  mode?: HostStallMode;
  /** Default HOST_STALL_THRESHOLD_NS; +Infinity: detection off (the bench's baseline). */
  thresholdNs?: number;
  /** Charge the host's run delay over a stall as steal (default false; docs/twin.md). */
  steal?: boolean;
}

/** PerformanceObserver 'gc' kinds (perf_hooks.constants.NODE_PERFORMANCE_GC_*): TlWhat.Gc's ARG. */
export const GC_KIND: Readonly<Record<string, number>> = {
  Scavenge: 1,
  MinorMarkSweep: 1,
  MinorMarkCompact: 1,
  MarkSweepCompact: 4,
  IncrementalMarking: 8,
  ProcessWeakCallbacks: 16,
};

/** This thread's host scheduler statistics (/proc/thread-self), read at a stall only. */
export interface SchedStatsReader {
  /** Read now: true when both values are known. */
  read(): boolean;
  /** Cumulative ns spent runnable on a host run queue (schedstat's run_delay). */
  runDelayNs: number;
  /** Cumulative involuntary context switches. */
  nvcsw: number;
  close(): void;
}

const NEEDLE = Buffer.from('nonvoluntary_ctxt_switches:');

/** The /proc reader: two descriptors opened once, read at offset 0 (seq_file regenerates). */
export class ProcSchedStats implements SchedStatsReader {
  runDelayNs = -1;
  nvcsw = -1;
  private readonly buf = Buffer.alloc(4096);
  private stat = -1;
  private status = -1;
  constructor() {
    try {
      this.stat = openSync('/proc/thread-self/schedstat', 'r');
      this.status = openSync('/proc/thread-self/status', 'r');
    } catch {
      this.close();
    }
  }
  read(): boolean {
    if (this.stat < 0) return false;
    try {
      const b = this.buf;
      let n = readSync(this.stat, b, 0, b.length, 0);
      // "<cpu ns> <run_delay ns> <timeslices>\n": the second field.
      let i = 0;
      while (i < n && b[i] !== 32) i++;
      let v = 0;
      for (i++; i < n && b[i] >= 48 && b[i] <= 57; i++) v = v * 10 + (b[i] - 48);
      this.runDelayNs = v;
      n = readSync(this.status, b, 0, b.length, 0);
      const at = b.subarray(0, n).indexOf(NEEDLE);
      if (at < 0) return false;
      v = 0;
      for (i = at + NEEDLE.length; i < n && (b[i] === 32 || b[i] === 9); i++);
      for (; i < n && b[i] >= 48 && b[i] <= 57; i++) v = v * 10 + (b[i] - 48);
      this.nvcsw = v;
      return true;
    } catch {
      return false;
    }
  }
  close(): void {
    for (const fd of [this.stat, this.status]) if (fd >= 0) closeSync(fd);
    this.stat = -1;
    this.status = -1;
  }
}

/** The GCs this thread ran since the last look. */
export interface GcTake {
  count: number;
  /** Their summed duration (ns). */
  ns: number;
  /** The kind of the longest (GC_KIND), 0 when none. */
  kind: number;
}

/** GCs on this thread, from v8.GCProfiler (restarted at each look; allocates: off the hot path). */
export class GcProbe {
  private p: GCProfiler | undefined;
  constructor() {
    try {
      this.p = new GCProfiler();
      this.p.start();
    } catch {
      this.p = undefined;
    }
  }
  /** The GCs since the last take; each one's duration goes to `each` (ns). */
  take(each?: (ns: number) => void): GcTake {
    const out: GcTake = { count: 0, ns: 0, kind: 0 };
    const p = this.p;
    if (!p) return out;
    const data = p.stop() as { statistics?: { gcType: string; cost: number }[] } | undefined;
    p.start();
    let longest = 0;
    for (const s of data?.statistics ?? []) {
      const ns = s.cost * 1000; // cost: µs
      out.count++;
      out.ns += ns;
      each?.(ns);
      if (ns >= longest) {
        longest = ns;
        out.kind = GC_KIND[s.gcType] ?? 0;
      }
    }
    return out;
  }
  close(): void {
    try {
      this.p?.stop();
    } catch {}
    this.p = undefined;
  }
}

/** The steal charge the detector makes: Scheduler.chargeSteal. */
export type ChargeSteal = (cpu: number, from: number, to: number) => void;

export class HostStalls {
  /** Clock at the last preemption point while armed; NaN: disarmed (no gap is a stall). */
  private last = Number.NaN;
  readonly thresholdNs: number;
  readonly steal: boolean;
  readonly mode: StallMode;
  private runDelay0 = -1;
  private nvcsw0 = -1;

  constructor(
    private readonly ctx: CpuContext,
    opts: HostStallOptions | undefined,
    private readonly chargeSteal: ChargeSteal,
    /** The CPU whose counters this thread's GCs go to when it owns none (its home CPU, or −1). */
    private readonly homeCpu: number,
    /** The /proc reader and the GC probe (tests give fakes; a machine's thread: {@link start}). */
    private stats?: SchedStatsReader,
    private gc?: GcProbe,
  ) {
    this.thresholdNs = opts?.thresholdNs ?? HOST_STALL_THRESHOLD_NS;
    this.steal = opts?.steal ?? false;
    this.mode = stallModeOf(opts?.mode);
    this.baseline();
  }

  /**
   * A machine's CPU or kthread thread starts watching (thread-main.ts, before its loop): the
   * /proc descriptors and the GC profile, unless detection is off (threshold +∞). Not in the
   * Runtime's constructor: a Runtime built on the main thread (the switch calibration, tests)
   * opens nothing. Pair with {@link close}.
   */
  start(): void {
    if (this.thresholdNs === Number.POSITIVE_INFINITY) return;
    this.stats ??= new ProcSchedStats();
    this.gc ??= new GcProbe();
    this.baseline();
  }

  private baseline(): void {
    if (this.stats?.read()) {
      this.runDelay0 = this.stats.runDelayNs;
      this.nvcsw0 = this.stats.nvcsw;
    }
  }

  /** A preemption point of the running thread, the clock at `now`. The hot path. */
  at(now: number): void {
    const gap = now - this.last;
    this.last = now;
    if (gap > this.thresholdNs) this.stalled(now - gap, now);
  }

  /** The thread took a CPU at `now` (enterCpu): gaps count from here. */
  arm(now: number): void {
    this.last = now;
  }

  /**
   * The idle task starts waiting at `now` (idle.ts: a poll or a halt; the clock it read anyway):
   * the gap up to here is checked (an interrupt taken from idle ran in it), then no gap counts
   * until the next preemption point.
   */
  idle(now: number): void {
    this.at(now);
    this.last = Number.NaN;
  }

  /** The thread stops running a task on purpose (hand-off, halt, idle poll): no gap until armed. */
  disarm(): void {
    this.last = Number.NaN;
  }

  /** The gap from `t0` to `t1` on the CPU this thread owns was a stall. */
  private stalled(t0: number, t1: number): void {
    const ctx = this.ctx;
    const c = ctx.cpu;
    const gap = t1 - t0;
    let dnv = -1;
    let steal = 0;
    const st = this.stats;
    if (st?.read()) {
      if (this.runDelay0 >= 0) {
        dnv = st.nvcsw - this.nvcsw0;
        steal = Math.min(gap, Math.max(0, st.runDelayNs - this.runDelay0));
      }
      this.runDelay0 = st.runDelayNs;
      this.nvcsw0 = st.nvcsw;
    }
    const g = this.takeGc();
    ctx.count(CpuCounter.host_stalls);
    ctx.count(CpuCounter.host_stall_us, Math.round(gap / 1000));
    if (dnv > 0) ctx.count(CpuCounter.host_stalls_preempted);
    ctx.tracer.record(St.HostStall, gap);
    ctx.f64[ctx.cf(c, CPUF_STALL_END)] = t1; // O: plain; readers: layout.ts, CPUF_STALL_END
    const tl = ctx.timeline;
    tl.begin(TlWhat.HostStall, c, c, dnv, t0);
    tl.end(TlWhat.HostStall, c, c, dnv, t1);
    if (g.count > 0) {
      tl.begin(TlWhat.Gc, c, g.kind, g.count, t0);
      tl.end(TlWhat.Gc, c, g.kind, g.count, t0 + Math.min(gap, g.ns));
    }
    if (steal > 0) {
      ctx.count(CpuCounter.host_steal_us, Math.round(steal / 1000));
      if (this.steal) this.chargeSteal(c, t1 - steal, t1);
    }
    // The look itself (the /proc reads, the GC profile) is the lab's time, not the next gap's.
    this.last = ctx.now();
  }

  /** GCs since the last look: into the `gc` stage (while recording) and the GC counters. */
  takeGc(): GcTake {
    if (!this.gc) return { count: 0, ns: 0, kind: 0 };
    const ctx = this.ctx;
    const g = this.gc.take((ns) => ctx.tracer.record(St.Gc, ns));
    const c = ctx.cpu >= 0 ? ctx.cpu : this.homeCpu;
    if (g.count > 0 && c >= 0) {
      // Atomics: the threads homed on one CPU (its CPU thread, its kthreads) all add here.
      Atomics.add(ctx.i32, ctx.cw(c, CPU_COUNTERS) + CpuCounter.gc_pauses, g.count);
      Atomics.add(ctx.i32, ctx.cw(c, CPU_COUNTERS) + CpuCounter.gc_us, Math.round(g.ns / 1000));
    }
    return g;
  }

  /** The thread is done: close the /proc descriptors, stop the GC profile. */
  close(): void {
    this.stats?.close();
    this.gc?.close();
  }
}

/** The detector of a thread whose scheduler is `sched`; sets the context's `--host-stalls` mode. */
export function hostStallsOf(
  ctx: CpuContext,
  opts: HostStallOptions | undefined,
  sched: Scheduler,
  homeCpu: number,
): HostStalls {
  const h = new HostStalls(ctx, opts, (cpu, from, to) => sched.chargeSteal(cpu, from, to), homeCpu);
  ctx.stallMode = h.mode;
  return h;
}
