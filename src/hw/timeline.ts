/**
 * The timeline recorder (`--timeline`): what each thread did and when, as fixed-size binary
 * records in a per-thread ring in shared memory (layout.ts, "Timeline rings"), for a per-CPU
 * trace that Perfetto and chrome://tracing open (src/report/timeline/timeline.ts builds it).
 *
 * Like ftrace's per-CPU ring buffer in overwrite mode: a flight recorder. Each thread writes only
 * its own ring and overwrites the oldest records; the main thread reads the tail after each trial
 * and keeps what falls in the trial's window. Records carry the emulated CPU they happened on
 * (a kworker thread that owns CPU 0 records CPU 0's interrupts), so the reader sorts the rings'
 * records onto one track per CPU.
 *
 * Cost: off (the default), every hook is a call and one boolean test (`on`), no clock read. On,
 * a hook writes 8 words and stores the head (Atomics.store): no allocation, no lock; a hook
 * with no timestamp at hand reads the clock once. Recording is on during the Measure and Drain
 * phases only (`phase()`), as the trace points are during Measure (trace.ts).
 *
 * Context: the writer (Timeline) is per thread, on that thread only; `readTimelineRing` is the
 * main thread's.
 */
import {
  CPU_F64,
  CPUF_HANDOFF_NS,
  type MachineRegions,
  Phase,
  TL_ARG,
  TL_ARG2,
  TL_AUX,
  TL_CPU,
  TL_HEADER_WORDS,
  TL_KIND,
  TL_RECORD_WORDS,
  TL_TS,
  TLH_CAPACITY,
  TLH_HEAD,
} from './layout.js';

/** What a record says about its event: a slice begins or ends, or an instant. */
export enum TlOp {
  Begin = 1,
  End = 2,
  Instant = 3,
}

/** What the event is; its TL_ARG / TL_ARG2 / TL_AUX as said. */
export enum TlWhat {
  /** One hard-IRQ entry (runtime.ts, interrupt()): ARG = the CPU's flags taken (CpuFlag). */
  Hardirq = 1,
  /** One interrupt record or arrival handled: ARG = irqchip Vector, ARG2 = its arg (irq number). */
  Irq = 2,
  /** The local timer tick (timer.ts, tick()). */
  Tick = 3,
  /** One softirq vector's actions: ARG = the vector (Softirq). */
  Softirq = 4,
  /** A task runs on the CPU: ARG = task id (Begin: it enters; End: it leaves, ARG2 = the next). */
  Task = 5,
  /** The strategy's hand-off call: ARG = strategy index; End: ARG2 = 1 accepted / 0 refused,
   *  AUX = the pending job's hand-off time (CPUF_HANDOFF_NS): the flow's identity. */
  Handoff = 6,
  /** The deferred job (driver.ts, runDeferred): ARG = the fast pool's CPU, AUX = its hand-off's
   *  time (the flow's end). */
  Work = 7,
  /** The idle task halted (idle.ts): a sleep in Atomics.wait. */
  Halt = 8,
  /** The irq generator's step (irq-thread.ts): publishing arrivals. */
  GenStep = 9,
  /** Instant: arrivals published for one CPU: ARG = the CPU, ARG2 = how many. */
  Refill = 10,
  /** Instant: a tick boundary the generator stored: ARG = jiffies. */
  Jiffy = 11,
  /** A host stall of this thread (a gap between two of its preemption points above the
   *  threshold; recorded when it ends, with the gap's start as its time): ARG = the thread's
   *  CPU or −1, ARG2 = involuntary context switches seen over the gap (−1 when unknown). */
  HostStall = 12,
  /** V8 garbage collection on this thread: ARG = the GC kind (PerformanceObserver 'gc' kind).
   *  Recorded with the host stall it fell in (src/machine/host-stall.ts): from the stall's start,
   *  as long as the GCs' summed cost (at most the stall); ARG2 = how many GCs. */
  Gc = 13,
  /** A tcp_lat exchange (client, tcp-lat.ts): Begin when it sends (ARG = the client's TX link
   *  word, ARG2 = the message's sequence, AUX = its RX link word), End when the whole reply is
   *  read (ARG = its RX link word, ARG2 = the sequence). */
  Exchange = 14,
  /** Instant (sent()): a message's last packet posted at TS (its send done; the link may still
   *  be busy with the packets before it) and arriving at AUX (the wire model's due): ARG = the
   *  sender's TX link word, ARG2 = the message's sequence. */
  MsgSent = 15,
  /** Instant (nicDue()): a NIC vector's hard IRQ taken at TS, due at AUX (its moderation's
   *  time; nic.ts vector()): ARG = the NAPI (NAPI_RX / NAPI_TX). */
  NicDue = 16,
  /** The input-pool lock's wait inside a deferred mix (driver.ts, as long as lastWaitNs measured;
   *  placed at the mix's end: the length is measured, the position within the work is not). */
  LockWait = 17,
  /** Instant (request()): a run of a driver's work started at TS on this CPU and served a
   *  request that had found it pending, made at AUX: ARG = the work's pool CPU. */
  Request = 18,
}

/**
 * Records per thread for a window of `windowMs`: room for ~1500 records a millisecond (a CPU
 * thread under tcp_lat at 20k interrupts/s writes ~400 a ms), as a power of two, from 8192 to
 * 262144 (8 MiB a thread). A busier window than that is reported as truncated, not hidden.
 */
export function timelineRecordsFor(windowMs: number): number {
  const want = Math.max(8192, Math.min(262_144, windowMs * 1500));
  return 2 ** Math.ceil(Math.log2(want));
}

/** Initialise the ring at `base` (I: main thread, before the threads start). */
export function initTimelineRing(i32: Int32Array, base: number, capacity: number): void {
  i32[base + TLH_HEAD] = 0;
  i32[base + TLH_CAPACITY] = capacity;
}

/** One thread's recorder. `on` is the only thing a hook tests when recording is off. */
export class Timeline {
  /** Recording now (enabled, and the phase records). */
  on = false;
  /** Records written (this thread is the ring's only writer). */
  private head = 0;
  private readonly mask: number;
  private readonly enabled: boolean;

  constructor(
    private readonly i32: Int32Array,
    private readonly f64: Float64Array,
    /** Int32 index of the ring's header; -1: no ring (off). */
    private readonly base: number,
    private readonly now: () => number,
    /** f64 index of CPU 0's CPUF_HANDOFF_NS (a CPU's is CPU_F64 further per CPU). */
    private readonly handoffNs0 = 0,
  ) {
    this.enabled = base >= 0;
    this.mask = this.enabled ? i32[base + TLH_CAPACITY] - 1 : 0;
  }

  /** A recorder that never records (no --timeline, or a thread with no ring). */
  static off(): Timeline {
    return new Timeline(new Int32Array(0), new Float64Array(0), -1, () => 0);
  }

  /** The thread acts on phase `p`: record during Measure and the Drain that follows it. */
  phase(p: Phase): void {
    this.on = this.enabled && (p === Phase.Measure || p === Phase.Drain);
  }

  /** A slice begins on `cpu` at `t` (default: now). */
  begin(what: TlWhat, cpu: number, arg = 0, arg2 = 0, t?: number): void {
    if (this.on) this.put(TlOp.Begin, what, cpu, arg, arg2, t ?? this.now(), 0);
  }

  /** A slice ends on `cpu` at `t` (default: now). */
  end(what: TlWhat, cpu: number, arg = 0, arg2 = 0, t?: number): void {
    if (this.on) this.put(TlOp.End, what, cpu, arg, arg2, t ?? this.now(), 0);
  }

  /** A slice that ran from `t0` to now (or `t1`), recorded after the fact. */
  span(what: TlWhat, cpu: number, arg: number, t0: number, t1?: number): void {
    if (!this.on) return;
    this.put(TlOp.Begin, what, cpu, arg, 0, t0, 0);
    this.put(TlOp.End, what, cpu, arg, 0, t1 ?? this.now(), 0);
  }

  /** An instant event. */
  instant(what: TlWhat, cpu: number, arg: number, arg2: number, t: number): void {
    if (this.on) this.put(TlOp.Instant, what, cpu, arg, arg2, t, 0);
  }

  /** A tcp_lat exchange begins at `t` (TlWhat.Exchange Begin; AUX = its RX link word, which its End names). */
  exchange(cpu: number, txLink: number, rxLink: number, seq: number, t: number): void {
    if (this.on) this.put(TlOp.Begin, TlWhat.Exchange, cpu, txLink, seq, t, rxLink);
  }

  /** A NIC vector's hard IRQ taken at `t`, due (by its moderation) at `due` (TlWhat.NicDue). */
  nicDue(cpu: number, napi: number, t: number, due: number): void {
    if (this.on) this.put(TlOp.Instant, TlWhat.NicDue, cpu, napi, 0, t, due);
  }

  /** A request made at `at` that found `poolCpu`'s work pending, served by the run started at `t0` (TlWhat.Request). */
  request(cpu: number, poolCpu: number, t0: number, at: number): void {
    if (this.on) this.put(TlOp.Instant, TlWhat.Request, cpu, poolCpu, 0, t0, at);
  }

  /** A message's last packet posted at `t`, arriving at `due` (TlWhat.MsgSent). */
  sent(cpu: number, link: number, seq: number, t: number, due: number): void {
    if (this.on) this.put(TlOp.Instant, TlWhat.MsgSent, cpu, link, seq, t, due);
  }

  /** The hand-off call on `cpu` returned `ok`: the job it handed off is named by the CPU's
   *  CPUF_HANDOFF_NS (a flow's start). */
  handoffEnd(cpu: number, ok: boolean): void {
    if (this.on) this.put(TlOp.End, TlWhat.Handoff, cpu, 0, ok ? 1 : 0, this.now(), this.handoffNs(cpu));
  }

  /** The deferred job of `poolCpu`'s pending hand-off starts at `t` on `cpu` (a flow's end). */
  workBegin(cpu: number, poolCpu: number, t: number): void {
    if (this.on) this.put(TlOp.Begin, TlWhat.Work, cpu, poolCpu, 0, t, this.handoffNs(poolCpu));
  }

  /** CPUF_HANDOFF_NS of `cpu`: the clock at its pending job's hand-off. */
  private handoffNs(cpu: number): number {
    return this.f64[this.handoffNs0 + cpu * CPU_F64];
  }

  /** Write one record, then publish it (the TLH_HEAD store). Never allocates. */
  private put(op: TlOp, what: TlWhat, cpu: number, arg: number, arg2: number, t: number, aux: number): void {
    const i32 = this.i32;
    const h = this.head;
    const r = this.base + TL_HEADER_WORDS + (h & this.mask) * TL_RECORD_WORDS;
    i32[r + TL_KIND] = (what << 2) | op;
    i32[r + TL_CPU] = cpu;
    i32[r + TL_ARG] = arg;
    i32[r + TL_ARG2] = arg2;
    this.f64[(r + TL_TS) >> 1] = t;
    this.f64[(r + TL_AUX) >> 1] = aux;
    this.head = h + 1;
    Atomics.store(i32, this.base + TLH_HEAD, h + 1); // publishes the record (layout.ts, TLH_HEAD)
  }
}

/** Thread `thread`'s recorder over the machine's rings (off when the machine has none). */
export function timelineOf(
  i32: Int32Array,
  f64: Float64Array,
  R: MachineRegions,
  thread: number,
  now: () => number,
): Timeline {
  if (R.timeline.length === 0) return Timeline.off();
  return new Timeline(i32, f64, R.timeline[thread], now, R.cpuF64 / 2 + CPUF_HANDOFF_NS);
}

/** One record as the main thread reads it. */
export interface TlRecord {
  op: TlOp;
  what: TlWhat;
  cpu: number;
  arg: number;
  arg2: number;
  /** ns since the run's epoch. */
  ts: number;
  aux: number;
  /** Position in its ring (records since boot): orders a thread's records with equal times. */
  seq: number;
}

/** What one read of a ring gives. */
export interface RingRead {
  records: TlRecord[];
  /** The head read: pass it as `from` next time. */
  head: number;
  /** Records written since `from` that were overwritten before this read could copy them. */
  overwritten: number;
}

/**
 * Read the records of the ring at `base` written since record `from` (a previous read's head).
 * Racy by design: the writer may go on writing; records it may have overwritten while they were
 * copied are dropped and counted (layout.ts, TLH_HEAD). Context: main thread; allocates.
 */
export function readTimelineRing(i32: Int32Array, f64: Float64Array, base: number, from: number): RingRead {
  const cap = i32[base + TLH_CAPACITY];
  const head = Atomics.load(i32, base + TLH_HEAD);
  const start = Math.max(from, head - cap);
  const records: TlRecord[] = [];
  for (let s = start; s < head; s++) {
    const r = base + TL_HEADER_WORDS + (s & (cap - 1)) * TL_RECORD_WORDS;
    const kind = i32[r + TL_KIND];
    records.push({
      op: kind & 3,
      what: kind >> 2,
      cpu: i32[r + TL_CPU],
      arg: i32[r + TL_ARG],
      arg2: i32[r + TL_ARG2],
      ts: f64[(r + TL_TS) >> 1],
      aux: f64[(r + TL_AUX) >> 1],
      seq: s,
    });
  }
  // Anything older than (head now − capacity) may have been overwritten while it was copied.
  const safe = Atomics.load(i32, base + TLH_HEAD) - cap;
  const kept = safe > start ? records.filter((r) => r.seq >= safe) : records;
  return { records: kept, head, overwritten: Math.max(0, Math.min(head, Math.max(start, safe)) - from) };
}
