/**
 * Device interrupt arrivals recorded on a real machine, read for replay on the emulated CPUs.
 *
 * Two formats, told apart by the first line that is neither blank nor a `#` comment:
 *
 * - `perf script` output of the `irq:irq_handler_entry` tracepoint
 *   (`perf record -e irq:irq_handler_entry -a -- sleep 5; perf script > trace.txt`):
 *
 *       swapper     0 [003] 12345.678901: irq:irq_handler_entry: irq=45 name=mlx5_comp0@pci:0000:03:00.0
 *
 *   `COMM TID [CPU] SECONDS: EVENT: FIELDS`. COMM may hold spaces, TID may be `PID/TID`
 *   (`-F +pid`), SECONDS has 6 decimals (9 with `--ns`), and anything perf adds between the
 *   time and the event (a period) is passed over. FIELDS are the tracepoint's TP_printk,
 *   `irq=%d name=%s` (include/trace/events/irq.h; kernels before 2.6.37 printed `handler=`).
 *   Lines of other events (`irq:irq_handler_exit`, `irq:softirq_entry`, ...) are skipped and
 *   counted, so a trace recorded with several events can be replayed as it is.
 * - A plain CSV, `time_ns,cpu,irq`, one arrival per line, integers; the header line is optional.
 *
 * In both, arrivals must come in time order down the file: a time before the previous arrival's
 * is refused, naming both lines' times (a file joined from two recordings, or rows grouped by
 * CPU, would otherwise be merged into one silently). Equal times are fine: perf prints µs by
 * default, and two CPUs, or two handlers of one shared irq, take interrupts in the same µs.
 *
 * Host CPUs become emulated CPUs through a map (`3:0,5:1`: host CPU 3's arrivals on CPU 0,
 * host CPU 5's on CPU 1; host CPUs not in the map are dropped and counted), or, without one, in
 * order of first appearance (the host CPU whose first arrival is earliest becomes CPU 0, ...).
 *
 * The result ({@link IrqTracePlan}) holds, per emulated CPU, the arrival offsets in ns from the
 * trace's first arrival (all CPUs share that origin, so their interleaving is kept), sorted, as
 * a Float64Array, with each arrival's irq number beside it: what an interrupt generator replays.
 * `scale` stretches time (2 = half the rate, 0.5 = twice the rate); with `loop`, the trace
 * repeats every `periodNs` ({@link arrivalAt}).
 *
 * Pure: no file system (see {@link readIrqTrace} for the one function that reads), no machine.
 * Every problem with the input is an {@link IrqTraceError} naming the file and, where there is
 * one, the line: `trace.txt line 12: irq= must be a whole number (got "x")`.
 */

import { readFile } from 'node:fs/promises';

/** A replay stretched or squeezed beyond these factors is almost surely a mistake. */
export const MIN_SCALE = 0.001;
export const MAX_SCALE = 1000;

/** Most CPUs a host trace may name (the kernel's NR_CPUS on large x86-64 configurations). */
export const MAX_HOST_CPU = 8191;

/** Emulated CPUs deferlab runs at most (config: `cpus` 1..64). */
export const MAX_EMULATED_CPUS = 64;

export type IrqTraceFormat = 'perf' | 'csv';

export class IrqTraceError extends Error {
  override readonly name = 'IrqTraceError';
  readonly code = 'ERR_IRQ_TRACE';
  /** The file as given; `line` is 1-based, absent for a problem with the whole file. */
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    problem: string,
  ) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${problem}`);
  }
}

/** One emulated CPU's arrivals, sorted by time. */
export interface IrqTraceCpu {
  /** Arrival times, ns from the trace's first arrival (after `scale`). */
  readonly offsetsNs: Float64Array;
  /** The irq number of each arrival (same index). */
  readonly irqs: Int32Array;
  /** The host CPUs whose arrivals these are. */
  readonly hostCpus: readonly number[];
}

export interface IrqTracePlan {
  readonly file: string;
  readonly format: IrqTraceFormat;
  /** Index = emulated CPU; a CPU no host CPU maps to has no arrivals. */
  readonly cpus: readonly IrqTraceCpu[];
  /** Arrivals kept (on mapped CPUs). */
  readonly events: number;
  /** host CPU → emulated CPU, as used. */
  readonly mapping: ReadonlyArray<{ readonly host: number; readonly cpu: number }>;
  /** Arrivals on host CPUs the map does not name, per host CPU. */
  readonly dropped: ReadonlyArray<{ readonly host: number; readonly events: number }>;
  /** perf lines of other events, skipped. */
  readonly otherEvents: number;
  /** irq number → device name, as perf printed it (`name=`); empty for CSV. */
  readonly irqNames: ReadonlyMap<number, string>;
  /** First to last arrival, ns (after `scale`). */
  readonly spanNs: number;
  /**
   * The loop period, ns (after `scale`): the span plus one mean gap between arrivals, so the
   * first arrival of a repeat does not land on the last of the previous one.
   */
  readonly periodNs: number;
  readonly loop: boolean;
  readonly scale: number;
}

export interface IrqTraceOptions {
  /** Emulated CPUs (1..64): the map, or the order of appearance, must fit them. */
  readonly cpus: number;
  /** `3:0,5:1` or its parsed form; absent: by order of first appearance. */
  readonly map?: string | ReadonlyMap<number, number>;
  readonly loop?: boolean;
  /** Time stretch factor, {@link MIN_SCALE}..{@link MAX_SCALE}; default 1. */
  readonly scale?: number;
}

/** One arrival read from the file. */
interface Arrival {
  timeNs: number;
  hostCpu: number;
  irq: number;
}

// ---- the map -------------------------------------------------------------------------------

/**
 * Parse `HOST:CPU[,HOST:CPU...]` (`3:0,5:1`). Each host CPU at most once; several host CPUs may
 * share an emulated CPU (their arrivals merge). Returns the map, or what is wrong (a sentence
 * starting with "must", for `--irq-trace-map must ... (got "...")`).
 */
export function parseIrqTraceMap(
  spec: string,
  cpus: number = MAX_EMULATED_CPUS,
): { ok: true; map: Map<number, number> } | { ok: false; problem: string } {
  const map = new Map<number, number>();
  const parts = spec.split(',').map((p) => p.trim());
  if (spec.trim() === '') return { ok: false, problem: 'must not be empty; give HOST:CPU pairs, like 3:0,5:1' };
  for (const part of parts) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (!m)
      return {
        ok: false,
        problem: `must be HOST:CPU pairs separated by commas, like 3:0,5:1 (${JSON.stringify(part)} is not one)`,
      };
    const host = Number(m[1]);
    const cpu = Number(m[2]);
    if (host > MAX_HOST_CPU) return { ok: false, problem: `must name host CPUs from 0 to ${MAX_HOST_CPU} (${part})` };
    if (cpu >= cpus)
      return {
        ok: false,
        problem: `must map onto emulated CPUs 0 to ${cpus - 1} (${part}: the machine has ${cpus} CPUs)`,
      };
    if (map.has(host)) return { ok: false, problem: `must name each host CPU once (host CPU ${host} is given twice)` };
    map.set(host, cpu);
  }
  return { ok: true, map };
}

// ---- the two line formats -------------------------------------------------------------------

const EVENT = 'irq:irq_handler_entry';

/**
 * A perf script sample line: `COMM TID [CPU] SECONDS: EVENT: FIELDS`. COMM is greedy up to the
 * last `TID [CPU]` before the time, so a COMM with spaces or digits is read whole.
 */
const PERF_LINE =
  /^\s*(?:(.*?)\s+)?(\d+)(?:\/(\d+))?\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(?:\d+\s+)?([\w-]+:[\w-]+):\s*(.*)$/;

/** A perf line's `SECONDS.FRACTION` in integer ns, without floating-point error. */
function secondsToNs(whole: string, frac: string): number {
  return Number(whole) * 1e9 + Number(frac.slice(0, 9).padEnd(9, '0'));
}

const CSV_HEADER = /^\s*time_ns\s*,\s*cpu\s*,\s*irq\s*$/i;
const CSV_LIKE = /^\s*[^,]*,[^,]*,/;

const PERF_EXAMPLE = `like "swapper 0 [003] 12345.678901: ${EVENT}: irq=45 name=eth0-rx-0"`;

type LineResult =
  /** `time`: the arrival's time as the file gives it, with its unit, for messages (`5.000100 s`, `50 ns`). */
  | { kind: 'arrival'; arrival: Arrival; time: string; name?: string }
  | { kind: 'other' }
  | { kind: 'bad'; problem: string };

/** A `name=value` field of a tracepoint's printed fields; values hold no spaces except the last. */
function field(fields: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name}=(\\S*)`).exec(fields);
  return m ? m[1] : undefined;
}

function perfLine(text: string): LineResult {
  const m = PERF_LINE.exec(text);
  if (!m)
    return {
      kind: 'bad',
      problem: `is not a perf script sample line (COMM TID [CPU] SECONDS: EVENT: FIELDS), ${PERF_EXAMPLE}`,
    };
  const [, , , , cpu, whole, frac, event, fields] = m;
  if (event !== EVENT) return { kind: 'other' };
  const irqText = field(fields, 'irq');
  if (irqText === undefined)
    return { kind: 'bad', problem: `${EVENT} without irq= (got ${JSON.stringify(fields)}), ${PERF_EXAMPLE}` };
  if (!/^\d+$/.test(irqText))
    return { kind: 'bad', problem: `irq= must be a whole number (got ${JSON.stringify(irqText)})` };
  const hostCpu = Number(cpu);
  if (hostCpu > MAX_HOST_CPU)
    return { kind: 'bad', problem: `the CPU must be from 0 to ${MAX_HOST_CPU} (got [${cpu}])` };
  const timeNs = secondsToNs(whole, frac);
  if (!Number.isSafeInteger(timeNs)) return { kind: 'bad', problem: `the time ${whole}.${frac} s is too large` };
  const name = field(fields, 'name') ?? field(fields, 'handler');
  return {
    kind: 'arrival',
    arrival: { timeNs, hostCpu, irq: Number(irqText) },
    time: `${whole}.${frac} s`,
    ...(name ? { name } : {}),
  };
}

function csvLine(text: string): LineResult {
  const cells = text.split(',').map((c) => c.trim());
  if (cells.length !== 3)
    return {
      kind: 'bad',
      problem: `has ${cells.length} ${cells.length === 1 ? 'field' : 'fields'}, not the 3 of time_ns,cpu,irq (${JSON.stringify(text.trim())})`,
    };
  const [t, c, i] = cells;
  const whole = (what: string, v: string, max: number): string | undefined =>
    /^\d+$/.test(v) && Number(v) <= max
      ? undefined
      : `${what} must be a whole number from 0 to ${max} (got ${JSON.stringify(v)})`;
  const bad =
    whole('time_ns', t, Number.MAX_SAFE_INTEGER) ?? whole('cpu', c, MAX_HOST_CPU) ?? whole('irq', i, 2 ** 31 - 1);
  if (bad) return { kind: 'bad', problem: bad };
  return { kind: 'arrival', arrival: { timeNs: Number(t), hostCpu: Number(c), irq: Number(i) }, time: `${t} ns` };
}

/** How to put a file of `format` back in time order, for the message refusing one that is not. */
const ORDER_FIX: Readonly<Record<IrqTraceFormat, string>> = {
  csv: 'sort the rows by time_ns (the header stays first)',
  perf: 'perf script prints samples in time order: give its output as it printed it, one recording per file',
};

/** The format of a file, from its first line that is neither blank nor a comment. */
export function detectFormat(firstLine: string): IrqTraceFormat {
  return CSV_HEADER.test(firstLine) || CSV_LIKE.test(firstLine) ? 'csv' : 'perf';
}

// ---- the plan ------------------------------------------------------------------------------

/**
 * Parse a trace's text into a replay plan. `file` names it in errors. Context: any thread; pure.
 * Throws: {@link IrqTraceError} for a malformed line (its number), an arrival earlier than the
 * one before it (its number and both times), no arrival at all, a host CPU the map cannot place,
 * a bad scale or a loop of one arrival.
 */
export function parseIrqTrace(text: string, file: string, opts: IrqTraceOptions): IrqTracePlan {
  const fail = (line: number | undefined, problem: string): never => {
    throw new IrqTraceError(file, line, problem);
  };
  const scale = opts.scale ?? 1;
  if (!(Number.isFinite(scale) && scale >= MIN_SCALE && scale <= MAX_SCALE))
    fail(undefined, `the time scale must be from ${MIN_SCALE} to ${MAX_SCALE} (got ${scale})`);
  if (!(Number.isInteger(opts.cpus) && opts.cpus >= 1 && opts.cpus <= MAX_EMULATED_CPUS))
    fail(undefined, `the emulated CPUs must be 1 to ${MAX_EMULATED_CPUS} (got ${opts.cpus})`);
  let map: ReadonlyMap<number, number> | undefined;
  if (typeof opts.map === 'string') {
    const parsed = parseIrqTraceMap(opts.map, opts.cpus);
    if (!parsed.ok) return fail(undefined, `the CPU map ${parsed.problem} (got ${JSON.stringify(opts.map)})`);
    map = parsed.map;
  } else map = opts.map;

  const arrivals: Arrival[] = [];
  const irqNames = new Map<number, string>();
  let format: IrqTraceFormat | undefined;
  let otherEvents = 0;
  let sawCsvHeader = false;
  /** The last arrival: its line (1-based), time and time as given, for the order check. */
  let previous: { line: number; timeNs: number; time: string } | undefined;
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    if (format === undefined) {
      format = detectFormat(line);
      if (format === 'csv' && CSV_HEADER.test(line)) {
        sawCsvHeader = true;
        continue;
      }
    } else if (format === 'csv' && CSV_HEADER.test(line)) {
      fail(
        n + 1,
        sawCsvHeader
          ? 'the header time_ns,cpu,irq is given twice'
          : 'the header time_ns,cpu,irq must be the first line',
      );
    }
    const r = format === 'csv' ? csvLine(line) : perfLine(line);
    if (r.kind === 'bad') fail(n + 1, r.problem);
    else if (r.kind === 'other') otherEvents++;
    else {
      if (previous && r.arrival.timeNs < previous.timeNs)
        fail(
          n + 1,
          `the time ${r.time} is before line ${previous.line}'s ${previous.time}: arrivals must be in time order ` +
            `(equal times are fine); ${ORDER_FIX[format]}`,
        );
      previous = { line: n + 1, timeNs: r.arrival.timeNs, time: r.time };
      arrivals.push(r.arrival);
      if (r.name && !irqNames.has(r.arrival.irq)) irqNames.set(r.arrival.irq, r.name);
    }
  }
  if (arrivals.length === 0) {
    const why =
      format === undefined
        ? 'is empty (only blank lines and comments)'
        : format === 'perf' && otherEvents > 0
          ? `holds ${otherEvents} perf samples but none of ${EVENT}; record with perf record -e ${EVENT}`
          : 'holds no interrupt arrival';
    fail(undefined, why);
  }

  // In time order already (checked above); lines of one timestamp keep the file's order.
  const hostOrder: number[] = [];
  for (const a of arrivals) if (!hostOrder.includes(a.hostCpu)) hostOrder.push(a.hostCpu);
  let mapping: Map<number, number>;
  if (map) mapping = new Map(map);
  else {
    if (hostOrder.length > opts.cpus) {
      fail(
        undefined,
        `has arrivals on ${hostOrder.length} host CPUs (${hostOrder.join(', ')}) but the machine has ${opts.cpus} CPUs; ` +
          `choose which to replay with a map like ${hostOrder
            .slice(0, opts.cpus)
            .map((h, i) => `${h}:${i}`)
            .join(',')}, or raise --cpus`,
      );
    }
    mapping = new Map(hostOrder.map((h, i) => [h, i]));
  }
  for (const cpu of mapping.values())
    if (cpu >= opts.cpus) fail(undefined, `the CPU map names CPU ${cpu}, but the machine has ${opts.cpus} CPUs`);

  const kept = arrivals.filter((a) => mapping.has(a.hostCpu));
  if (kept.length === 0) {
    fail(
      undefined,
      `has no arrival on the host CPUs the map names (${[...mapping.keys()].join(', ')}); ` +
        `its arrivals are on host CPUs ${hostOrder.join(', ')}`,
    );
  }
  const dropped = hostOrder
    .filter((h) => !mapping.has(h))
    .map((host) => ({ host, events: arrivals.filter((a) => a.hostCpu === host).length }));

  const t0 = kept[0].timeNs;
  const spanRaw = kept[kept.length - 1].timeNs - t0;
  if (opts.loop && (kept.length < 2 || spanRaw === 0))
    fail(undefined, 'cannot be looped: it needs at least 2 arrivals at different times');
  const periodRaw = kept.length > 1 ? spanRaw + spanRaw / (kept.length - 1) : 0;

  const perCpu: Arrival[][] = Array.from({ length: opts.cpus }, () => []);
  for (const a of kept) perCpu[mapping.get(a.hostCpu) as number].push(a);
  const cpus = perCpu.map(
    (list, cpu): IrqTraceCpu => ({
      offsetsNs: Float64Array.from(list, (a) => (a.timeNs - t0) * scale),
      irqs: Int32Array.from(list, (a) => a.irq),
      hostCpus: [...mapping].filter(([, c]) => c === cpu).map(([h]) => h),
    }),
  );
  return {
    file,
    format: format as IrqTraceFormat,
    cpus,
    events: kept.length,
    mapping: [...mapping].map(([host, cpu]) => ({ host, cpu })),
    dropped,
    otherEvents,
    irqNames,
    spanNs: spanRaw * scale,
    periodNs: periodRaw * scale,
    loop: Boolean(opts.loop),
    scale,
  };
}

/**
 * The time of CPU `cpu`'s `k`-th arrival (0-based), ns from the replay's start: with `loop`,
 * the trace repeats every `periodNs`, so k runs on for ever; without, `Infinity` past the last.
 * Context: the generator's loop; allocates nothing.
 */
export function arrivalAt(plan: IrqTracePlan, cpu: number, k: number): number {
  const offsets = plan.cpus[cpu].offsetsNs;
  const n = offsets.length;
  if (n === 0) return Number.POSITIVE_INFINITY;
  if (k < n) return offsets[k];
  if (!plan.loop) return Number.POSITIVE_INFINITY;
  return offsets[k % n] + Math.floor(k / n) * plan.periodNs;
}

/** The irq number of CPU `cpu`'s `k`-th arrival (looping as {@link arrivalAt} does). */
export function irqAt(plan: IrqTracePlan, cpu: number, k: number): number {
  const irqs = plan.cpus[cpu].irqs;
  return irqs[k % irqs.length];
}

/**
 * Read and parse a trace file. `file` is shown as given in errors; `path` is where to read it
 * (resolved by the caller). Throws {@link IrqTraceError} when it cannot be read too.
 */
export async function readIrqTrace(file: string, path: string, opts: IrqTraceOptions): Promise<IrqTracePlan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a directory, not a trace file'
          : `cannot be read (${code ?? (e as Error).message})`;
    throw new IrqTraceError(file, undefined, why);
  }
  return parseIrqTrace(text, file, opts);
}
