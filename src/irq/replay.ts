/**
 * A recorded interrupt trace made ready for a run (`--irq-trace FILE`): read and parsed once on
 * the main thread (trace-file.ts), its per-CPU arrays moved onto one SharedArrayBuffer so that
 * the machine's threads share them instead of each receiving a copy, and summarised for the
 * results (`meta.irqTrace`).
 *
 * The replay itself runs in the irq thread (src/machine/irq-thread.ts): it publishes the trace's
 * arrivals ahead into the per-CPU arrival rings, as the generator publishes its own. Offset 0 of
 * the trace is the start of each trial, that is of its warm-up (when the generator starts too):
 * every trial, and so every strategy, meets the same arrivals at the same offsets, and the
 * measured phase sees the trace from `warmupMs` on.
 */
import { arrivalAt, type IrqTraceOptions, type IrqTracePlan, irqAt, readIrqTrace } from './trace-file.js';

/** `--irq-trace FILE` and its companions, as resolved (src/config/schema.ts, `irq.trace`). */
export interface IrqTraceConfig {
  /** The file as the user gave it (messages and the report show this). */
  readonly file: string;
  /** Absolute path to read. */
  readonly path: string;
  /** `--irq-trace-map` (`3:0,5:1`), or null: host CPUs in order of first appearance. */
  readonly map: string | null;
  /** `--irq-trace-loop`: repeat the trace for ever. */
  readonly loop: boolean;
  /** `--irq-trace-scale`: time stretch factor (2 = half the rate). */
  readonly scale: number;
}

/** What results.json keeps about a replayed trace (`meta.irqTrace`); the report's lines read it. */
export interface IrqTraceMeta {
  readonly file: string;
  readonly format: 'perf' | 'csv';
  /** Arrivals replayed per pass of the trace, all CPUs. */
  readonly events: number;
  /** Arrivals per pass, per emulated CPU (index = CPU). */
  readonly perCpu: readonly number[];
  /** host CPU → emulated CPU, as used (from the map, or by order of first appearance). */
  readonly mapping: ReadonlyArray<{ readonly host: number; readonly cpu: number }>;
  /** Arrivals dropped because the map does not name their host CPU. */
  readonly dropped: number;
  /** First to last arrival, ns, after `scale`. */
  readonly spanNs: number;
  /** The loop period, ns, after `scale`. */
  readonly periodNs: number;
  readonly loop: boolean;
  readonly scale: number;
  /** Whether the map was given (`--irq-trace-map`) or the host CPUs were placed by order. */
  readonly mapGiven: boolean;
}

/**
 * Read, parse and share a trace for a machine of `cpus` CPUs. Context: main thread, once per
 * run. Throws: IrqTraceError (trace-file.ts) for a missing or unreadable file, a malformed line
 * (with its number), no arrival, or a map the machine cannot take.
 */
export async function loadIrqTrace(trace: IrqTraceConfig, cpus: number): Promise<IrqTracePlan> {
  const opts: IrqTraceOptions = {
    cpus,
    loop: trace.loop,
    scale: trace.scale,
    ...(trace.map === null ? {} : { map: trace.map }),
  };
  return shareIrqTrace(await readIrqTrace(trace.file, trace.path, opts));
}

/**
 * The same plan with every CPU's offsets and irq numbers on one SharedArrayBuffer: posted to a
 * worker (workerData), typed arrays on shared memory are shared, not copied. Context: any.
 */
export function shareIrqTrace(plan: IrqTracePlan): IrqTracePlan {
  const total = plan.cpus.reduce((n, c) => n + c.offsetsNs.length, 0);
  const sab = new SharedArrayBuffer(total * (Float64Array.BYTES_PER_ELEMENT + Int32Array.BYTES_PER_ELEMENT));
  const offsets = new Float64Array(sab, 0, total);
  const irqs = new Int32Array(sab, total * Float64Array.BYTES_PER_ELEMENT, total);
  let at = 0;
  const cpus = plan.cpus.map((c) => {
    const n = c.offsetsNs.length;
    offsets.set(c.offsetsNs, at);
    irqs.set(c.irqs, at);
    const shared = { offsetsNs: offsets.subarray(at, at + n), irqs: irqs.subarray(at, at + n), hostCpus: c.hostCpus };
    at += n;
    return shared;
  });
  return { ...plan, cpus };
}

/** The summary results.json keeps. Context: main thread; pure. */
export function irqTraceMeta(plan: IrqTracePlan, trace: IrqTraceConfig): IrqTraceMeta {
  return {
    file: trace.file,
    format: plan.format,
    events: plan.events,
    perCpu: plan.cpus.map((c) => c.offsetsNs.length),
    mapping: plan.mapping.map((m) => ({ ...m })),
    dropped: plan.dropped.reduce((n, d) => n + d.events, 0),
    spanNs: plan.spanNs,
    periodNs: plan.periodNs,
    loop: plan.loop,
    scale: plan.scale,
    mapGiven: trace.map !== null,
  };
}

/**
 * The replay's cursor, in the irq thread: per emulated CPU, which arrival of the trace is next,
 * and the clock time the current stretch of arrivals started at (its offset 0). The irq thread
 * asks for due times and irq numbers in order and publishes them ahead, as it does the
 * generator's. Context: the irq thread only; allocates nothing after construction.
 */
export class TraceReplay {
  /** The emulated CPUs the trace has arrivals for. */
  readonly targets: readonly number[];
  /** Per CPU: the index of its next arrival in the (looped) trace. */
  private readonly k: Float64Array;
  private origin = 0;

  constructor(private readonly plan: IrqTracePlan) {
    this.targets = plan.cpus.flatMap((c, cpu) => (c.offsetsNs.length > 0 ? [cpu] : []));
    this.k = new Float64Array(plan.cpus.length);
  }

  /** A stretch of arrivals starts at clock `now` (a trial's warm-up): every CPU from the top. */
  start(now: number): void {
    this.origin = now;
    this.k.fill(0);
  }

  /** Clock time CPU `cpu`'s next arrival is due; +Infinity once a trace without loop ran out. */
  due(cpu: number): number {
    return this.origin + arrivalAt(this.plan, cpu, this.k[cpu]);
  }

  /** The irq number of CPU `cpu`'s next arrival (as recorded). */
  irq(cpu: number): number {
    return irqAt(this.plan, cpu, this.k[cpu]);
  }

  /** Move past CPU `cpu`'s next arrival; returns the one after's due time. */
  advance(cpu: number): number {
    this.k[cpu]++;
    return this.due(cpu);
  }

  /** Skip CPU `cpu`'s arrivals due before `now` (the thread fell behind); returns how many. */
  skipBefore(cpu: number, now: number): number {
    let n = 0;
    while (this.due(cpu) < now) {
      this.k[cpu]++;
      n++;
    }
    return n;
  }
}
