/**
 * The narrow context every kernel subsystem works in: the shared views, where this thread
 * executes now (CPU, task, hardirq/softirq nesting), an injected clock, and the per-CPU counters.
 *
 * One CpuContext per thread that can own a CPU (CPU threads, kthreads). Per-CPU state lives in
 * shared memory (src/hw/layout.ts); this object holds only views and the thread's own
 * position, which is per thread because one thread executes on one CPU at a time. The
 * subsystems (softirq.ts, timer.ts, workqueue.ts, ...) take this context, never the whole
 * runtime, so that each can be built and tested on one thread with a fake clock
 * (test/kernel/).
 */
import {
  C_JIFFIES,
  C_STOP,
  CPU_COUNTERS,
  CPU_F64,
  CPU_WHERE,
  CPU_WORDS,
  CPUF_STALL_END,
  CpuCounter,
  type MachineRegions,
} from '../hw/layout.js';
import { Timeline } from '../hw/timeline.js';
import type { Tracer } from '../hw/trace.js';

/** Execution context as the kernel's preempt_count tells it. */
export type ContextName = 'hardirq' | 'softirq' | 'task';

export class CpuContext {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly nrCpus: number;
  private readonly ctl: number;

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
  /** This thread's timeline recorder (`--timeline`; src/hw/timeline.ts); off by default. */
  timeline: Timeline = Timeline.off();
  /** `--host-stalls` (src/machine/host-stall.ts, StallMode): 0 keep, 1 mark, 2 drop. */
  stallMode = 0;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly R: MachineRegions,
    nrCpus: number,
    readonly hz: number,
    /** The clock (ns since the run's epoch): src/clock.ts's nowNs in a machine, a fake in tests. */
    readonly now: () => number,
    readonly tracer: Tracer,
  ) {
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
    this.nrCpus = nrCpus;
    this.ctl = R.control;
  }

  /** jiffies, as the irq thread stored it at the last tick boundary. */
  jiffies(): number {
    return Atomics.load(this.i32, this.ctl + C_JIFFIES);
  }
  /** Index of per-CPU word `word` of CPU `cpu` (layout.ts, CPU_*). */
  cw(cpu: number, word: number): number {
    return this.R.cpu + cpu * CPU_WORDS + word;
  }
  /** f64 index of per-CPU double `word` of CPU `cpu` (layout.ts, CPUF_*). */
  cf(cpu: number, word: number): number {
    return this.R.cpuF64 / 2 + cpu * CPU_F64 + word;
  }
  /** Add `n` to per-CPU counter `counter` of the CPU this thread owns (none owned: dropped). */
  count(counter: number, n = 1): void {
    if (this.cpu >= 0) this.i32[this.R.cpu + this.cpu * CPU_WORDS + CPU_COUNTERS + counter] += n;
  }
  /** Add `n` to counter `counter` of CPU `cpu` (plain: the caller owns `cpu`, or is its only writer). */
  countOn(cpu: number, counter: number, n = 1): void {
    this.i32[this.R.cpu + cpu * CPU_WORDS + CPU_COUNTERS + counter] += n;
  }
  /**
   * Record `ns` into stage `s` for a sample (a tcp_lat exchange, a driver request) that started at
   * `t0` and involves CPUs `a` and `b`: if either had a host stall end after `t0`
   * (CPUF_STALL_END), it overlapped one: counted (samples_host_stalled) and, under `--host-stalls
   * mark`, recorded into `sHost` too, under `drop` into `sHost` only. No clock read, no allocation.
   */
  recordSample(s: number, sHost: number, ns: number, t0: number, a: number, b: number): void {
    const f64 = this.f64;
    if (f64[this.cf(a, CPUF_STALL_END)] > t0 || f64[this.cf(b, CPUF_STALL_END)] > t0) {
      this.count(CpuCounter.samples_host_stalled);
      if (this.stallMode !== 0) this.tracer.record(sHost, ns);
      if (this.stallMode === 2) return;
    }
    this.tracer.record(s, ns);
  }
  /** The machine is stopping (C_STOP). */
  stopping(): boolean {
    return Atomics.load(this.i32, this.ctl + C_STOP) !== 0;
  }
  contextName(): ContextName {
    return this.hardirq > 0 ? 'hardirq' : this.softirq > 0 ? 'softirq' : 'task';
  }
  /** Store what the owner is doing (CPU_WHERE, for the watchdog). Returns the previous value. */
  setWhere(cpu: number, where: number): number {
    const w = this.cw(cpu, CPU_WHERE);
    const prev = this.i32[w];
    this.i32[w] = where;
    return prev;
  }
}
