/**
 * Shared helpers for the emulated-machine benchmarks (bench/machine.ts, bench/strategies.ts,
 * bench/tracing.ts): machine options with bench defaults, one measured trial driven the way
 * src/harness/run.ts drives it (warm-up, Measure, Drain, collect, Pause), and formatting.
 *
 * Nothing here prints: the bench files do. Nothing here asserts on a timing.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Histogram } from 'hdr-histogram-js';
import { machineDefaults } from '../src/config/defaults.js';
import { MachineFaultError } from '../src/errors.js';
import type { Stage } from '../src/hw/trace.js';
import { type Counters, Machine, Phase } from '../src/machine/machine.js';
import type { MachineOptions, StrategyRef } from '../src/machine/options.js';
import { builtinRef } from '../src/strategies/ref.js';

export { Machine, Phase };

/** The fast pool's trigger during warm-ups (as src/harness/run.ts: every path compiled by V8). */
export const WARMUP_TRIGGER = 8;
/** How long deferred work may take to finish after a trial. */
export const DRAIN_TIMEOUT_MS = 5_000;

/** True when the module at `url` is the script node was started with. */
export function isMain(url: string): boolean {
  return !!process.argv[1] && url === pathToFileURL(process.argv[1]).href;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A built-in, labelled `name k=v,...` in the benchmarks' tables. */
export function builtin(
  name: string,
  options: Record<string, string | number | boolean> = {},
  label?: string,
): StrategyRef {
  const opts = Object.entries(options).map(([k, v]) => `${k}=${v}`);
  return builtinRef(name, options, label ?? (opts.length ? `${name} ${opts.join(',')}` : name));
}

/**
 * Machine options for the benchmarks: the machine defaults (src/config/defaults.ts: 2 CPUs,
 * HZ 250, random.c's trigger 1024, tracing on, `inline`) with no application, interrupts off
 * until a benchmark sets a rate (on CPU 0), and a 5 s watchdog; `o` overrides.
 */
export function machineOptions(o: Partial<MachineOptions> = {}): MachineOptions {
  const d = machineDefaults(o.cpus);
  return {
    ...d,
    watchdogMs: 5000,
    irq: { ...d.irq, rate: 0, pattern: 'constant', cpus: [0] },
    workload: { kind: 'irq_only' },
    ...o,
  };
}

/** Run `phase` for `ms`, failing at once on a machine fault. */
export async function runPhase(m: Machine, phase: Phase, ms: number, during?: () => void, everyMs = 5): Promise<void> {
  m.setPhase(phase);
  const fault = m.onFault().then(() => 'fault' as const);
  const end = Date.now() + ms;
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) break;
    const r = await Promise.race([sleep(during ? Math.min(everyMs, left) : left).then(() => 'ok' as const), fault]);
    if (r === 'fault') throw new MachineFaultError(m.fault!);
    during?.();
  }
}

/** Stop generating work, wait until everything deferred ran, collect (and reset) the histograms, pause. */
export async function endTrial(m: Machine): Promise<Partial<Record<Stage, Histogram>>> {
  m.setPhase(Phase.Drain);
  const busy = await m.drain(DRAIN_TIMEOUT_MS);
  if (busy) {
    const c = m.counters();
    throw new Error(
      `the machine did not drain within ${DRAIN_TIMEOUT_MS / 1000} s: ${busy} (irqs_dropped ${c.irqs_dropped} so far)\n${m.debugState()}`,
    );
  }
  const h = await m.collect();
  m.setPhase(Phase.Pause);
  return h;
}

export interface TrialResult {
  hist: Partial<Record<Stage, Histogram>>;
  /** Counter deltas over the Measure phase only (machine-wide). */
  counters: Counters;
  /** CPU 0's counter deltas over the Measure phase. */
  cpu0: Counters;
  /** Heartbeat (preemption points passed) deltas per CPU over the Measure phase. */
  heartbeats: number[];
  /** Length of the Measure phase, s (from the machine's clock). */
  seconds: number;
}

function diff(a: Counters, b: Counters): Counters {
  const out: Counters = {};
  for (const k of Object.keys(b)) out[k] = b[k] - (a[k] ?? 0);
  return out;
}

/**
 * One trial: warm up for `warmupMs` (nothing recorded), measure for `measureMs`, drain, collect.
 * `during` is called every few ms of the Measure phase (from the main thread).
 */
export async function trial(
  m: Machine,
  warmupMs: number,
  measureMs: number,
  during?: () => void,
): Promise<TrialResult> {
  if (warmupMs > 0) await runPhase(m, Phase.Warmup, warmupMs);
  const c0 = m.counters();
  const p0 = m.cpuCounters(0);
  const hb0 = Array.from({ length: m.opts.cpus }, (_, c) => m.heartbeat(c));
  const t0 = m.nowNs();
  await runPhase(m, Phase.Measure, measureMs, during);
  const c1 = m.counters();
  const p1 = m.cpuCounters(0);
  const hb1 = Array.from({ length: m.opts.cpus }, (_, c) => m.heartbeat(c));
  const t1 = m.nowNs();
  const hist = await endTrial(m);
  return {
    hist,
    counters: diff(c0, c1),
    cpu0: diff(p0, p1),
    heartbeats: hb1.map((v, c) => (v - hb0[c]) | 0),
    seconds: (t1 - t0) / 1e9,
  };
}

/**
 * The warm-up pass: every strategy in turn with the trigger lowered, so that every hand-off and
 * mix path is compiled before anything counts; then the trigger goes back to `trigger`.
 */
export async function warmUp(m: Machine, msPerStrategy: number, trigger = m.opts.fastPool.trigger): Promise<void> {
  m.setTrigger(WARMUP_TRIGGER);
  for (let s = 0; s < m.opts.strategies.length; s++) {
    m.resetEntropy();
    m.setActiveStrategy(s);
    await runPhase(m, Phase.Warmup, msPerStrategy);
    await endTrial(m);
  }
  m.setActiveStrategy(0);
  m.setTrigger(trigger);
}

/** Boot, run `body`, always stop. */
export async function withMachine<T>(opts: MachineOptions, body: (m: Machine) => Promise<T>): Promise<T> {
  const m = await Machine.boot(opts);
  try {
    return await body(m);
  } finally {
    await m.stop();
  }
}

/** Merge histograms into `into` (allocating it from the first one's settings if absent). */
export function addInto(into: Histogram | undefined, h: Histogram | undefined): Histogram | undefined {
  if (!h) return into;
  if (!into) return h;
  into.add(h);
  return into;
}

// ---- formatting --------------------------------------------------------------------------

/** ns as µs with a precision that suits its size. */
export function us(ns: number): string {
  if (!Number.isFinite(ns)) return '-';
  const u = ns / 1000;
  return u < 10 ? u.toFixed(2) : u < 1000 ? u.toFixed(1) : u.toFixed(0);
}

/** "p50 / p99 µs (n)" of a histogram, or a dash. */
export function pcts(h: Histogram | undefined): { p50: number; p99: number; n: number; mean: number } {
  if (!h || h.totalCount === 0) return { p50: Number.NaN, p99: Number.NaN, n: 0, mean: Number.NaN };
  return { p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), n: h.totalCount, mean: h.mean };
}

/** A rate with a k/M suffix. */
export function rate(perS: number): string {
  if (!Number.isFinite(perS)) return '-';
  if (perS >= 1e6) return `${(perS / 1e6).toFixed(2)}M`;
  if (perS >= 1e3) return `${(perS / 1e3).toFixed(1)}k`;
  return perS.toFixed(0);
}

/** A table: header row and rows of cells, each column padded to its widest cell. */
export function table(header: string[], rows: string[][], indent = '  '): string[] {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    indent +
    r
      .map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** "N threads (M machine threads + main) on C cores". */
export function threadsLine(machineThreads: number, extra = ''): string {
  return `${machineThreads + 1} threads (${machineThreads} machine threads + main${extra}) on ${availableParallelism()} cores`;
}

/** Median of a list (NaN when empty): the project's one (src/report/statistics/order.ts). */
export { median } from '../src/report/statistics/order.js';
