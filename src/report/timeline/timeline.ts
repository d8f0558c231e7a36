/**
 * timeline.json (`--timeline`): the threads' timeline rings (src/hw/timeline.ts), read after
 * each trial, turned into a Chrome trace-event file (the JSON Object Format of the Trace Event
 * Format, which Perfetto UI and chrome://tracing open).
 *
 * The file: one process (pid) per trial window, named `point · strategy · round`; in it one
 * track (tid) per emulated CPU, whose complete events ('X') nest: the task on the CPU
 * (swapper/n, the workload's tasks, kworkers, ksoftirqd, hogs), inside it hard IRQs ('hardirq',
 * and per vector: `irq N`, `NIC rx`, `IPI`, `tick`), softirqs by vector (`NET_RX`, `TIMER`, ...),
 * the strategy's hand-off call, the deferred work, the idle task's halts; and one track for the
 * irq generator (its steps, the arrivals it published per CPU, the tick boundaries). A flow
 * arrow ('s' → 'f', one id per pair) joins each accepted hand-off to the start of its work.
 * Times are µs since the machine booted (each sweep point boots its own machine).
 *
 * The window: the last `windowMs` of each trial's measured phase and the drain after it (until
 * every deferred job has run). Slices that cross the window's start are cut at it. Nothing is
 * lost silently: records overwritten before they were read, windows the rings could not hold
 * whole, flow ends with no start in the window, and slices whose begin or end was missing are
 * counted in `otherData`.
 *
 * Context: main thread. The collector reads shared memory while the machine pauses between
 * trials; building and writing allocate freely.
 */
import { Vector } from '../../hw/irqchip.js';
import { CpuFlag, type MachineRegions, SOFTIRQ_NAMES } from '../../hw/layout.js';
import { readTimelineRing, TlOp, type TlRecord, TlWhat } from '../../hw/timeline.js';
import type { MachinePlan } from '../../machine/plan.js';

export const TIMELINE_JSON = 'timeline.json';

/** A Chrome trace event (the fields this file uses). */
export interface TraceEvent {
  name: string;
  ph: 'X' | 'B' | 'E' | 'i' | 's' | 'f' | 'M';
  pid: number;
  tid: number;
  /** µs. */
  ts?: number;
  /** µs ('X'). */
  dur?: number;
  cat?: string;
  /** Flow id ('s', 'f'). */
  id?: number;
  /** 'f': bind to the enclosing slice. */
  bp?: 'e';
  /** 'i': scope. */
  s?: 't' | 'p' | 'g';
  args?: Record<string, unknown>;
}

export interface TimelineFile {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ns';
  otherData: TimelineMeta;
}

/** What the file says about itself (its "metadata": Chrome's JSON format calls it otherData). */
export interface TimelineMeta {
  generator: string;
  windowMs: number;
  /** Records each thread's ring holds. */
  recordsPerThread: number;
  trials: number;
  /** Records overwritten in a ring before the main thread read them (most are older than the window: the rings are flight recorders). */
  recordsOverwritten: number;
  /** Trial windows (pid, thread) whose start the ring no longer held: their beginning is missing. */
  truncatedWindows: { pid: number; thread: string; keptFromUs: number }[];
  /** Work starts in a window whose hand-off is not in it (handed off before the window), and accepted hand-offs whose work start was not read: no arrow drawn. */
  unmatchedFlows: number;
  /** Slices closed or dropped because their begin or end was not recorded (cut by the window, or a lost record). */
  repairedSlices: number;
  note: string;
}

/** The machine a collector reads (a Machine, between trials). */
export interface TimelineSource {
  readonly sab: SharedArrayBuffer;
  readonly i32: Int32Array;
  readonly R: MachineRegions;
  readonly plan: MachinePlan;
}

/** One measured trial, as the harness tells it. */
export interface TrialWindow {
  point: number;
  label: string;
  round: number;
  /** The measured phase's start and end, ns on the machine's clock. */
  measureStartNs: number;
  measureEndNs: number;
}

const NOTE =
  'Chrome trace-event JSON (open in https://ui.perfetto.dev or chrome://tracing). One process per trial window; one track per emulated CPU and one for the irq generator; times in µs since the machine booted. Arrows: hand-off → the start of its deferred work.';

/** µs with ns resolution (rounding is monotonic, so nesting in ns is nesting in µs). */
const us = (ns: number): number => Math.round(ns) / 1000;

/** Collects each trial's window from the rings, and builds timeline.json at the end. */
export class TimelineCollector {
  private readonly events: TraceEvent[] = [];
  private readonly meta: TimelineMeta;
  private source: TimelineSource | undefined;
  private heads: number[] = [];
  private f64: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private pid = 0;

  constructor(
    readonly windowMs: number,
    recordsPerThread: number,
    generator: string,
  ) {
    this.meta = {
      generator,
      windowMs,
      recordsPerThread,
      trials: 0,
      recordsOverwritten: 0,
      truncatedWindows: [],
      unmatchedFlows: 0,
      repairedSlices: 0,
      note: NOTE,
    };
  }

  /** Read the rings after trial `w` (drained) and keep its window. Context: main thread. */
  trialEnd(m: TimelineSource, w: TrialWindow): void {
    if (m.R.timeline.length === 0) return;
    if (m !== this.source) {
      // A new machine (sweep point): its rings start from 0.
      this.source = m;
      this.heads = m.R.timeline.map(() => 0);
      this.f64 = new Float64Array(m.sab);
    }
    const pid = ++this.pid;
    this.meta.trials++;
    const from = Math.max(w.measureStartNs, w.measureEndNs - this.windowMs * 1e6);
    const records: TlRecord[][] = [];
    m.R.timeline.forEach((base, t) => {
      const read = readTimelineRing(m.i32, this.f64, base, this.heads[t]);
      this.heads[t] = read.head;
      this.meta.recordsOverwritten += read.overwritten;
      const oldest = read.records[0]?.ts ?? Number.NEGATIVE_INFINITY;
      if (read.overwritten > 0 && oldest > from)
        this.meta.truncatedWindows.push({ pid, thread: m.plan.threads[t].name, keptFromUs: us(oldest) });
      records.push(read.records);
    });
    this.events.push(...buildTrial(m.plan, w, pid, from, records, this.meta));
  }

  /** The whole file. */
  file(): TimelineFile {
    return { traceEvents: this.events, displayTimeUnit: 'ns', otherData: this.meta };
  }
}

/** A slice open on a track. */
interface Frame {
  rec: TlRecord;
}

/** The records of one trial (per thread, in ring order) as trace events on process `pid`. */
export function buildTrial(
  plan: MachinePlan,
  w: TrialWindow,
  pid: number,
  from: number,
  perThread: TlRecord[][],
  meta: Pick<TimelineMeta, 'unmatchedFlows' | 'repairedSlices'>,
): TraceEvent[] {
  const n = plan.cpus;
  const genTid = n + 1;
  const tidOf = (cpu: number) => (cpu < 0 ? genTid : cpu + 1);
  // Per track, every thread's records, ordered by time (a thread's own records keep ring order).
  const tracks = new Map<number, { r: TlRecord; k: number }[]>();
  let k = 0;
  let last = w.measureEndNs;
  for (const recs of perThread) {
    for (const r of recs) {
      const tid = tidOf(r.cpu);
      const list = tracks.get(tid) ?? [];
      if (list.length === 0) tracks.set(tid, list);
      list.push({ r, k: k++ });
      if (r.ts > last) last = r.ts;
    }
  }
  const out: TraceEvent[] = [
    {
      name: 'process_name',
      ph: 'M',
      pid,
      tid: 0,
      args: { name: `point ${w.point} · ${w.label} · round ${w.round + 1}` },
    },
    { name: 'process_sort_index', ph: 'M', pid, tid: 0, args: { sort_index: pid } },
  ];
  for (let c = 0; c <= n; c++) {
    const tid = c < n ? c + 1 : genTid;
    out.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name: c < n ? `CPU ${c}` : 'irq generator' } });
    out.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
  }
  const flowStarts = new Map<string, { ts: number; tid: number }>();
  const flowEnds: { key: string; ts: number; tid: number }[] = [];
  const emit = (tid: number, b: TlRecord, endNs: number) => {
    if (endNs < from) return;
    const start = Math.max(b.ts, from);
    const ev: TraceEvent = {
      ...sliceName(plan, w, b),
      ph: 'X',
      pid,
      tid,
      ts: us(start),
      dur: (Math.round(endNs) - Math.round(start)) / 1000,
    };
    out.push(ev);
    if (b.what === TlWhat.Work) flowEnds.push({ key: `${b.arg}:${b.aux}`, ts: ev.ts!, tid });
  };
  for (const [tid, list] of tracks) {
    list.sort((a, b) => a.r.ts - b.r.ts || a.k - b.k);
    const stack: Frame[] = [];
    const closeAbove = (depth: number, t: number, repair = true) => {
      while (stack.length > depth) {
        emit(tid, stack.pop()!.rec, t);
        if (repair) meta.repairedSlices++;
      }
    };
    for (const { r } of list) {
      if (r.what === TlWhat.Exchange) continue; // spans tasks (the client sleeps in it): --explain's, not a slice
      if (r.op === TlOp.Instant) {
        if (r.ts >= from) out.push({ ...instantName(r), ph: 'i', s: 't', pid, tid, ts: us(r.ts) });
        continue;
      }
      if (r.op === TlOp.Begin) {
        // A task begins only on a CPU no task holds: whatever is open lost its end.
        if (r.what === TlWhat.Task) closeAbove(0, r.ts);
        stack.push({ rec: r });
        continue;
      }
      let at = stack.length - 1;
      while (at >= 0 && stack[at].rec.what !== r.what) at--;
      if (at < 0) {
        // Its begin is older than the records read: from the window's start, if nothing is open.
        if (stack.length === 0) emit(tid, { ...r, ts: from }, r.ts);
        meta.repairedSlices++;
        continue;
      }
      closeAbove(at + 1, r.ts);
      const b = stack.pop()!.rec;
      emit(tid, b, r.ts);
      if (r.what === TlWhat.Handoff && r.arg2 === 1 && b.ts >= from)
        flowStarts.set(`${r.cpu}:${r.aux}`, { ts: us(b.ts), tid });
    }
    closeAbove(0, last, false); // still running when the rings were read: cut there
  }
  let id = pid * 1_000_000;
  for (const e of flowEnds) {
    const s = flowStarts.get(e.key);
    if (!s) {
      meta.unmatchedFlows++;
      continue;
    }
    flowStarts.delete(e.key);
    id++;
    out.push({ name: 'handoff', cat: 'flow', ph: 's', id, pid, tid: s.tid, ts: s.ts });
    out.push({ name: 'handoff', cat: 'flow', ph: 'f', bp: 'e', id, pid, tid: e.tid, ts: e.ts });
  }
  meta.unmatchedFlows += flowStarts.size;
  out.push({
    name: 'measured phase ends (drain follows)',
    ph: 'i',
    s: 'p',
    pid,
    tid: genTid,
    ts: us(w.measureEndNs),
  });
  // Each track in time order, a parent before the slices it holds.
  const isMeta = (e: TraceEvent) => e.ph === 'M';
  const body = out.filter((e) => !isMeta(e));
  body.sort((a, b) => a.tid - b.tid || a.ts! - b.ts! || (b.dur ?? 0) - (a.dur ?? 0));
  return [...out.filter(isMeta), ...body];
}

const VECTOR_NAMES: Record<number, string> = {
  [Vector.Device]: 'irq',
  [Vector.Net]: 'NIC rx',
  [Vector.Ipi]: 'IPI',
  [Vector.NetTx]: 'NIC tx',
};

/** The flags an interrupt entry took, as words. */
function flagNames(f: number): string[] {
  const out: string[] = [];
  if (f & CpuFlag.IrqPending) out.push('irq ring');
  if (f & CpuFlag.Tick) out.push('tick');
  if (f & CpuFlag.IrqWork) out.push('self-IPI');
  return out;
}

function sliceName(plan: MachinePlan, w: TrialWindow, b: TlRecord): Pick<TraceEvent, 'name' | 'cat' | 'args'> {
  switch (b.what) {
    case TlWhat.Task: {
      const t = plan.tasks[b.arg];
      return { name: t?.name ?? `task ${b.arg}`, cat: 'task', args: { kind: t?.kind ?? '?' } };
    }
    case TlWhat.Hardirq:
      return { name: 'hardirq', cat: 'hardirq', args: { flags: flagNames(b.arg) } };
    case TlWhat.Irq:
      return b.arg === Vector.Device
        ? { name: `irq ${b.arg2}`, cat: 'hardirq', args: { irq: b.arg2 } }
        : { name: VECTOR_NAMES[b.arg] ?? `vector ${b.arg}`, cat: 'hardirq', args: { arg: b.arg2 } };
    case TlWhat.Tick:
      return { name: 'tick', cat: 'hardirq' };
    case TlWhat.Softirq:
      return { name: SOFTIRQ_NAMES[b.arg] ?? `softirq ${b.arg}`, cat: 'softirq' };
    case TlWhat.Handoff:
      return { name: `handoff: ${w.label}`, cat: 'handoff' };
    case TlWhat.Work:
      return { name: 'deferred work', cat: 'work', args: { fast_pool_cpu: b.arg } };
    case TlWhat.Halt:
      return { name: 'halt', cat: 'idle' };
    case TlWhat.GenStep:
      return { name: 'publish arrivals', cat: 'generator' };
    case TlWhat.HostStall:
      return { name: 'host stall', cat: 'host', args: { involuntary_switches: b.arg2 } };
    case TlWhat.Gc:
      return { name: 'V8 GC', cat: 'host', args: { kind: b.arg, count: b.arg2 } };
    case TlWhat.LockWait:
      return { name: 'input_pool.lock wait', cat: 'work' };
    default:
      return { name: `event ${b.what}`, cat: 'other' };
  }
}

function instantName(r: TlRecord): Pick<TraceEvent, 'name' | 'cat' | 'args'> {
  if (r.what === TlWhat.Refill) return { name: `arrivals → CPU ${r.arg}`, cat: 'generator', args: { count: r.arg2 } };
  if (r.what === TlWhat.Jiffy) return { name: 'tick boundary', cat: 'generator', args: { jiffies: r.arg } };
  if (r.what === TlWhat.MsgSent)
    return { name: 'message sent', cat: 'net', args: { seq: r.arg2, arrives_us: us(r.aux) } };
  if (r.what === TlWhat.NicDue) return { name: 'NIC IRQ taken', cat: 'net', args: { napi: r.arg, due_us: us(r.aux) } };
  return { name: `event ${r.what}`, cat: 'other' };
}
