/**
 * The summary table: per point, one row per strategy with what qperf would report (one-way
 * latency) and what it cost (wakeups, context switches, entropy delivered).
 *
 * {@link summaryTable} builds a table model that both the terminal ({@link renderTable}) and
 * report.html render, so the two never disagree. Nothing here prints: the CLI does.
 */

import { autoIdlePolicy } from '../config/defaults.js';
import { plural } from '../text.js';
import { calibrationLine } from './host-calibration.js';
import { comparisonFor } from './stats.js';
import type {
  ComparableMetric,
  Comparison,
  PointResult,
  RunResults,
  StageName,
  StrategyResult,
  Summary,
} from './types.js';
import { STAGE_NAMES } from './types.js';

/** The stage shown when a workload has no application one-way latency (e.g. irq_only). */
export const FALLBACK_STAGE: StageName = 'handoff_to_start';

/** Rate columns: counter name → column title. */
const RATE_COLUMNS: ReadonlyArray<readonly [counter: string, title: string]> = [
  ['handoffs', 'hand-offs/s'],
  // Switches into a kworker, unbound worker or ksoftirqd: the cost of deferring, measured (the
  // all-switches column is mostly tcp_lat's own ping-pong).
  ['kthread_switches', 'kthread sw/s'],
  ['wakeups', 'wakeups/s'],
  ['ctx_switches', 'ctx switches/s'],
  ['entropy_bits', 'entropy bits/s'],
];

export type Marker = 'worse' | 'better' | '~' | 'baseline' | 'noise floor' | '';

/** The default terminal table fits this many columns (`--wide`: every column, however wide). */
export const TABLE_WIDTH = 120;

/**
 * Where a column shows in the terminal table: `always`; a priority (1 first) for the columns
 * added, in that order, while the table still fits {@link TABLE_WIDTH}; or `wide` (only under
 * `--wide`). HTML, CSV and JSON always have everything.
 */
export type ColumnShow = 'always' | number | 'wide';

export interface SummaryRow {
  label: string;
  isBaseline: boolean;
  /** Cells after the label, in `header` order (header[0] is the label column). */
  cells: string[];
  /** Δ-mean comparison on the table's stage; undefined for the baseline or without data. */
  comparison?: Comparison;
  marker: Marker;
}

export interface SummaryTable {
  /** The latency stage the table shows: `one_way`, or {@link FALLBACK_STAGE} when no strategy has it. */
  stage: StageName;
  /** Set when `stage` is not `one_way`: says why, for the header. */
  stageNote?: string;
  baseline: string;
  header: string[];
  /** Shorter titles for the default terminal table (units said in its caption), `header` order. */
  shortHeader: string[];
  /** Column alignment, `header` order. */
  align: Array<'left' | 'right'>;
  /** Which columns the default terminal table shows, `header` order. */
  show: ColumnShow[];
  rows: SummaryRow[];
  /** One line explaining the Δ column. */
  deltaNote: string;
  /**
   * Lines shown under the table, each complete: `warning: ...` when strategies measured nothing,
   * `note: ...` when a strategy's trials differ wildly in size (the Δ and the mean then disagree).
   */
  notes: string[];
}

/** What the table needs to know about the run beyond one point (from `RunResults.meta`). */
export interface TableContext {
  /** `tcp_lat`, `irq_only`, ... */
  workload?: string;
  cpus?: number;
  trialMs?: number;
  hostCores?: number;
  /** False when the run recorded counters only (`--no-tracing`): no latency at all. */
  tracing?: boolean;
  /** The A/A control's label (`--control`), if the run had one. */
  control?: string;
}

/** The {@link TableContext} of a run, from its metadata (`meta.options` is the resolved config). */
export function tableContext(results: Pick<RunResults, 'meta'> & { control?: string }): TableContext {
  const o = (results.meta.options ?? {}) as {
    workload?: unknown;
    cpus?: unknown;
    trialMs?: unknown;
    tracing?: unknown;
  };
  const w = o.workload;
  const kind =
    typeof w === 'string'
      ? w
      : typeof (w as { kind?: unknown })?.kind === 'string'
        ? (w as { kind: string }).kind
        : undefined;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  return {
    ...(kind ? { workload: kind } : {}),
    ...(num(o.cpus) !== undefined ? { cpus: num(o.cpus) } : {}),
    ...(num(o.trialMs) !== undefined ? { trialMs: num(o.trialMs) } : {}),
    ...(num(results.meta.hostCores) !== undefined ? { hostCores: results.meta.hostCores } : {}),
    ...(typeof o.tracing === 'boolean' ? { tracing: o.tracing } : {}),
    ...(typeof results.control === 'string' ? { control: results.control } : {}),
  };
}

/** A trial is flagged when it sent fewer than this fraction of the median trial's messages. */
export const SHORT_TRIAL_FRACTION = 0.25;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const listOf = (xs: readonly string[]): string =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/**
 * `note:` lines, one per strategy whose trials differ wildly in messages sent (`app_messages`):
 * a trial under {@link SHORT_TRIAL_FRACTION} of the median trial. The pooled mean weighs such a
 * trial by its few messages, the paired Δ as a whole trial: the two can then disagree.
 */
export function shortTrialNotes(point: PointResult): string[] {
  const out: string[] = [];
  for (const s of point.strategies) {
    const counts = s.trials
      .map((t) => ({ n: t.index + 1, msgs: t.counters.app_messages }))
      .filter((t): t is { n: number; msgs: number } => typeof t.msgs === 'number' && Number.isFinite(t.msgs));
    if (counts.length < 2) continue;
    const med = median(counts.map((c) => c.msgs));
    if (!(med > 0)) continue;
    const short = counts.filter((c) => c.msgs < SHORT_TRIAL_FRACTION * med);
    if (!short.length) continue;
    const which = `${short.length === 1 ? 'trial' : 'trials'} ${listOf(short.map((c) => String(c.n)))} of ${s.trials.length}`;
    out.push(
      `note: ${s.label} ${which} sent ${listOf(short.map((c) => String(c.msgs)))} messages against a median of ` +
        `${Math.round(med)} (a host stall?); Δ is averaged per trial, mean is pooled`,
    );
  }
  return out;
}

/**
 * A `warning:` line naming the strategies that ran trials but recorded no application latency
 * (one_way) sample, while others did; undefined when there are none.
 */
export function noSamplesWarning(point: PointResult, ctx: TableContext = {}): string | undefined {
  if (ctx.tracing === false) return undefined; // nothing was traced: TRACING_OFF_NOTE says so
  if (!point.strategies.some((s) => hasStage(s, 'one_way'))) return undefined;
  const empty = point.strategies.filter((s) => s.trials.length > 0 && !hasStage(s, 'one_way')).map((s) => s.label);
  if (!empty.length) return undefined;
  const window = ctx.trialMs !== undefined ? `${ctx.trialMs} ms measured per trial` : 'measured window';
  const machine =
    ctx.cpus !== undefined
      ? ` for ${ctx.cpus} emulated CPUs${ctx.hostCores !== undefined ? ` on ${ctx.hostCores} host cores` : ''}`
      : '';
  return (
    `warning: no application latency (one_way) sample from ${listOf(empty)}: ` +
    `the ${window} may be too short${machine}; raise --duration`
  );
}

/** Under the table of a run with tracing off: why every latency cell is '-'. */
export const TRACING_OFF_NOTE = '(tracing off (--no-tracing): no latencies were recorded; the counters are complete)';

/** A word for a shell command line: quoted when it holds anything a shell would read. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/["$`\\]/g, '\\$&')}"`;
}

/** `deferlab check-strategy` for a strategy of the results: its file (or name) and its options. */
function checkCommand(s: StrategyResult): string {
  const keys = Object.keys(s.options ?? {}).sort();
  const options = keys.length ? `:${keys.map((k) => `${k}=${String(s.options[k])}`).join(',')}` : '';
  return `deferlab check-strategy ${shellWord(`${s.kind === 'file' && s.file ? s.file : s.name}${options}`)}`;
}

/**
 * `warning:` lines, one per strategy that refused hand-offs while nothing was pending for that
 * CPU (counter `handoffs_lost`): each such job is lost, and random.c's fast pool stays in flight,
 * so that CPU gives no more entropy. Results without the counter (older files) give none.
 */
export function handoffsLostWarnings(point: PointResult): string[] {
  const out: string[] = [];
  for (const s of point.strategies) {
    const n = s.counters?.handoffs_lost;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) continue;
    const jobs =
      n === 1
        ? 'hand-off while nothing was pending: that job was lost'
        : 'hand-offs while nothing was pending: those jobs were lost';
    out.push(`warning: ${s.label} refused ${n} ${jobs} (its CPU stops giving entropy); run '${checkCommand(s)}'`);
  }
  return out;
}

const hasStage = (s: StrategyResult, stage: StageName): boolean => (s.merged[stage]?.summary.count ?? 0) > 0;

/** Policy: show one_way when any strategy has it; else the hand-off delay; else the first stage measured. */
export function tableStage(point: PointResult): StageName {
  if (point.strategies.some((s) => hasStage(s, 'one_way'))) return 'one_way';
  if (point.strategies.some((s) => hasStage(s, FALLBACK_STAGE))) return FALLBACK_STAGE;
  return STAGE_NAMES.find((st) => point.strategies.some((s) => hasStage(s, st))) ?? 'one_way';
}

/** ns → µs with 2 decimals. */
export function fmtUs(ns: number): string {
  return Number.isFinite(ns) ? (ns / 1000).toFixed(2) : '-';
}

function fmtSignedUs(ns: number): string {
  if (!Number.isFinite(ns)) return '?';
  const s = (ns / 1000).toFixed(2);
  return ns >= 0 && !s.startsWith('-') ? `+${s}` : s;
}

export function fmtRate(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1);
}

/** "+1.23 [+0.40, +2.06]" in µs; without an interval, says so. */
export function fmtDelta(c: Comparison): string {
  const d = fmtSignedUs(c.diff);
  if (!Number.isFinite(c.ciLow) || !Number.isFinite(c.ciHigh)) return `${d} [no CI: n<2]`;
  return `${d} [${fmtSignedUs(c.ciLow)}, ${fmtSignedUs(c.ciHigh)}]`;
}

/** A share of the baseline as a percentage: `5.8%` below 10, `12%` from 10. */
export function fmtPct(x: number): string {
  if (!Number.isFinite(x)) return '?%';
  const p = Math.abs(x * 100);
  return `${p < 10 ? p.toFixed(1) : p.toFixed(0)}%`;
}

export function markerOf(c: Comparison | undefined): Marker {
  if (!c) return '';
  return c.verdict === 'regression' ? 'worse' : c.verdict === 'improvement' ? 'better' : '~';
}

/**
 * The verdict cell: `worse`, `better`, or for "within noise" `~` with the smallest effect the
 * comparison could have seen (`~ could see ±0.40 (5.8%)`, µs and % of the baseline), or why it
 * is noise (`~ inside noise floor`, with --control). Plain `~` without an interval.
 */
export function verdictText(c: Comparison | undefined): string {
  const marker = markerOf(c);
  if (!c || marker !== '~') return marker;
  if (c.insideFloor) return '~ inside noise floor';
  const mde = c.detectable;
  if (mde === undefined || !Number.isFinite(mde)) return '~';
  return `~ could see ±${fmtUs(mde)} (${fmtPct(mde / c.baseline)})`;
}

/** One column of the summary table. */
interface Column {
  title: string;
  /** Title in the default terminal table, whose caption gives the unit. */
  short?: string;
  align: 'left' | 'right';
  show: ColumnShow;
  cell(s: StrategyResult, row: { sum?: Summary; comparison?: Comparison; role: Role }): string;
}

type Role = 'baseline' | 'control' | 'candidate';

/** A tail Δ column: `+9.20 [+2.10, +16.30] worse`. */
function tailDelta(
  point: PointResult,
  baselineLabel: string,
  stage: StageName,
  metric: ComparableMetric,
  title: string,
): Column {
  return {
    title: `Δ ${title} µs [95% CI]`,
    align: 'right',
    show: 'wide',
    cell: (s, { role }) => {
      if (role === 'baseline') return '';
      const c = comparisonFor(point, baselineLabel, s, stage, metric);
      return c ? `${fmtDelta(c)} ${role === 'control' ? 'floor' : markerOf(c)}` : '-';
    },
  };
}

function columnsOf(point: PointResult, baselineLabel: string, stage: StageName): Column[] {
  const name = stage === 'one_way' ? 'one-way' : stage;
  const latency = (key: keyof Summary, title: string, show: ColumnShow, short = title): Column => ({
    title: `${title} µs`,
    short,
    align: 'right',
    show,
    cell: (_s, { sum }) => (sum ? fmtUs(sum[key]) : '-'),
  });
  const rate = (counter: string, title: string, show: ColumnShow): Column => ({
    title,
    align: 'right',
    show,
    cell: (s) => fmtRate(s.rates[counter]),
  });
  const rateShow: Record<string, ColumnShow> = { kthread_switches: 1, handoffs: 3, entropy_bits: 4 };
  return [
    { title: 'strategy', align: 'left', show: 'always', cell: (s) => s.label },
    latency('mean', `${name} mean`, 'always', 'mean'),
    latency('p50', 'p50', 2),
    latency('p90', 'p90', 'wide'),
    latency('p99', 'p99', 'always'),
    latency('p99_9', 'p99.9', 'always'),
    latency('max', 'max', 'wide'),
    {
      title: 'Δ mean µs [95% CI]',
      short: 'Δ mean [95% CI]',
      align: 'right',
      show: 'always',
      cell: (_s, { comparison, role }) => (role === 'baseline' ? '' : comparison ? fmtDelta(comparison) : '-'),
    },
    {
      title: '',
      align: 'left',
      show: 'always',
      cell: (_s, { comparison, role }) =>
        role === 'baseline' ? 'baseline' : role === 'control' ? 'noise floor' : verdictText(comparison),
    },
    ...RATE_COLUMNS.map(([counter, title]) => rate(counter, title, rateShow[counter] ?? 'wide')),
    tailDelta(point, baselineLabel, stage, 'p50', 'p50'),
    tailDelta(point, baselineLabel, stage, 'p99', 'p99'),
    tailDelta(point, baselineLabel, stage, 'p99_9', 'p99.9'),
  ];
}

/**
 * The table model of one point. `ctx` (see {@link tableContext}) lets the notes say why a column
 * is empty. Context: main thread; pure.
 */
export function summaryTable(point: PointResult, baselineLabel: string, ctx: TableContext = {}): SummaryTable {
  const stage = tableStage(point);
  const name = stage === 'one_way' ? 'one-way' : stage;
  const columns = columnsOf(point, baselineLabel, stage);
  const rows = point.strategies.map((s): SummaryRow => {
    const role: Role = s.label === baselineLabel ? 'baseline' : s.label === ctx.control ? 'control' : 'candidate';
    const sum = hasStage(s, stage) ? s.merged[stage]!.summary : undefined;
    const comparison = role === 'baseline' ? undefined : comparisonFor(point, baselineLabel, s, stage, 'mean');
    const marker: Marker = role === 'baseline' ? 'baseline' : role === 'control' ? 'noise floor' : markerOf(comparison);
    return {
      label: s.label,
      isBaseline: role === 'baseline',
      comparison,
      marker,
      cells: columns.slice(1).map((c) => c.cell(s, { sum, comparison, role })),
    };
  });
  const control = ctx.control ? point.strategies.find((s) => s.label === ctx.control) : undefined;
  const table: SummaryTable = {
    stage,
    baseline: baselineLabel,
    header: columns.map((c) => c.title),
    shortHeader: columns.map((c) => c.short ?? c.title),
    align: columns.map((c) => c.align),
    show: columns.map((c) => c.show),
    rows,
    deltaNote:
      `Δ mean: strategy − baseline "${baselineLabel}" ${name} mean, averaged over interleaved trial pairs ` +
      '(the mean column pools all samples instead, so the two can disagree), with a 95% paired-t interval; ' +
      '"worse"/"better" only when the interval excludes 0' +
      (control ? ' and the difference lies outside the A/A noise floor' : '') +
      ', "~" = within noise; "could see ±X (Y%)": the smallest difference this comparison would likely have called ' +
      '(80% power), in µs and % of the baseline.',
    notes: [],
  };
  if (ctx.tracing === false) table.notes.push(TRACING_OFF_NOTE);
  else if (stage !== 'one_way') {
    table.stageNote =
      ctx.workload === 'tcp_lat'
        ? `no tcp_lat message completed in the measured window: one_way is empty; showing ${stage} instead; a longer --duration may let messages finish`
        : `no one_way latency in this workload: showing ${stage} instead`;
  }
  const warning = noSamplesWarning(point, ctx);
  if (warning) table.notes.push(warning);
  table.notes.push(...handoffsLostWarnings(point));
  table.notes.push(...shortTrialNotes(point));
  if (control) table.notes.push(...noiseFloorNotes(point, baselineLabel, control, stage));
  return table;
}

/**
 * With an A/A control: the run's measured noise floor (the control's Δ on the mean and the tail),
 * and a warning when the control itself differs from the baseline (its interval excludes 0): the
 * run's noise is then larger than its intervals say.
 */
export function noiseFloorNotes(
  point: PointResult,
  baselineLabel: string,
  control: StrategyResult,
  stage: StageName,
): string[] {
  const parts: string[] = [];
  const off: string[] = [];
  for (const [metric, title] of [
    ['mean', 'mean'],
    ['p50', 'p50'],
    ['p99', 'p99'],
    ['p99_9', 'p99.9'],
  ] as const) {
    const c = comparisonFor(point, baselineLabel, control, stage, metric);
    if (!c) continue;
    parts.push(`${title} ${fmtDelta(c)}`);
    if (c.verdict !== 'within-noise') off.push(title);
  }
  if (!parts.length) return [];
  const out = [`noise floor (A/A: ${control.label} − ${baselineLabel}, µs): ${parts.join(', ')}`];
  if (off.length) {
    out.push(
      `warning: the A/A control differs from its baseline on ${listOf(off)}: this run's noise exceeds its intervals ` +
        '(host load, drift); no verdict inside the floor is called, but consider more trials (--until)',
    );
  }
  return out;
}

/**
 * `tail: workqueue p99.9 +9.20 [+2.10, +16.30] worse`: one line per strategy whose tail (p50,
 * p99, p99.9) comparison calls a difference; for the default table, which has no tail Δ columns.
 */
export function tailVerdictNotes(
  point: PointResult,
  baselineLabel: string,
  stage: StageName,
  control?: string,
): string[] {
  const out: string[] = [];
  for (const s of point.strategies) {
    if (s.label === baselineLabel || s.label === control) continue;
    const called: string[] = [];
    for (const [metric, title] of [
      ['p50', 'p50'],
      ['p99', 'p99'],
      ['p99_9', 'p99.9'],
    ] as const) {
      const c = comparisonFor(point, baselineLabel, s, stage, metric);
      if (c && c.verdict !== 'within-noise') called.push(`${title} ${fmtDelta(c)} ${markerOf(c)}`);
    }
    if (called.length) out.push(`tail: ${s.label} ${called.join(', ')} (µs)`);
  }
  return out;
}

/** Make a user string safe for a terminal: control characters (ESC, CR, ...) shown as \xNN. */
export function termSafe(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return s.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A point's parameters as `msg_size=4096 rate=1000`, or `` without a sweep. */
export function pointTitle(point: PointResult): string {
  return Object.entries(point.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

function renderGrid(header: string[], align: SummaryTable['align'], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const fmt = (cells: string[]): string =>
    cells
      .map((c, i) => (align[i] === 'left' ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)];
}

/** `64 B`, `4 KiB`, `1 MiB`. */
function bytesText(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

/** `20k`, `1.5k`, `1M`, `200`: events per second, as the flags take them. */
function rateText(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1000 && n % 100 === 0) return `${n / 1000}k`;
  return String(n);
}

/** `1 s`, `1.5 s`, `200 ms`. */
function msText(ms: number): string {
  return ms >= 1000 && ms % 100 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * What was measured, in one line, from the resolved config in `meta.options`:
 * `tcp_lat 64 B between CPU 0 and CPU 1; 2 CPUs, HZ 250, kernel 6.9, idle haltpoll, kthreads on own
 * threads; background interrupts 20k/s per CPU
 * (poisson) on CPUs 0,1; random.c trigger 1024; 5 trials of 1 s (+ 200 ms warm-up) per strategy,
 * interleaved`. A swept setting says `per point` (each point's title gives its value). When a
 * scenario replaced the workload (`meta.workload`), that text stands for the workload, the
 * interrupts and the trigger. Undefined when the options say nothing usable.
 */
export function setupLine(results: Pick<RunResults, 'meta' | 'points'>): string | undefined {
  const o = (results.meta.options ?? {}) as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const obj = (x: unknown) => (x && typeof x === 'object' ? (x as Record<string, unknown>) : {});
  const swept = typeof obj(o.sweep).param === 'string' ? (obj(o.sweep).param as string) : undefined;
  const parts: string[] = [];
  const custom = typeof results.meta.workload === 'string' ? results.meta.workload : undefined;

  const w = obj(o.workload);
  const kind = typeof o.workload === 'string' ? o.workload : typeof w.kind === 'string' ? w.kind : undefined;
  if (custom) parts.push(custom);
  else if (kind === 'tcp_lat') {
    const size =
      swept === 'msg_size'
        ? 'msg_size per point'
        : num(w.msgSize) !== undefined
          ? bytesText(w.msgSize as number)
          : undefined;
    const client = num(w.clientCpu);
    const server = num(w.serverCpu);
    const cpus = client !== undefined && server !== undefined ? ` between CPU ${client} and CPU ${server}` : '';
    parts.push(`tcp_lat${size ? ` ${size}` : ''}${cpus}`);
  } else if (kind === 'irq_only') parts.push('irq_only: background interrupts only, no application');
  else if (kind) parts.push(kind);

  const cpus = num(o.cpus);
  const hz = num(o.hz);
  const kernel = typeof o.kernel === 'string' ? `kernel ${o.kernel}` : '';
  const hostCores = num(results.meta.hostCores);
  const idle =
    o.idle === 'auto' && cpus !== undefined && hostCores !== undefined
      ? `idle ${autoIdlePolicy(cpus, hostCores)} (auto)`
      : typeof o.idle === 'string'
        ? `idle ${o.idle}`
        : '';
  const kthreads =
    typeof o.kthreads === 'string' ? `kthreads on ${o.kthreads === 'cpu' ? 'CPU threads' : 'own threads'}` : '';
  const machine = [
    cpus !== undefined ? plural(cpus, 'CPU') : '',
    hz !== undefined ? `HZ ${hz}` : '',
    kernel,
    idle,
    kthreads,
  ].filter(Boolean);
  if (machine.length) parts.push(machine.join(', '));

  const irq = obj(o.irq);
  const rate = num(irq.rate);
  if (!custom && (rate !== undefined || swept === 'irq_rate')) {
    if (rate === 0 && swept !== 'irq_rate') parts.push('no background interrupts');
    else {
      const burst = num(irq.burstSize);
      const pattern =
        irq.pattern === 'bursts' && burst !== undefined
          ? ` (bursts of ${burst})`
          : typeof irq.pattern === 'string'
            ? ` (${irq.pattern})`
            : '';
      const where = Array.isArray(irq.cpus)
        ? ` on ${irq.cpus.length === 1 ? 'CPU' : 'CPUs'} ${irq.cpus.join(',')}`
        : irq.cpus === 'all'
          ? ' on all CPUs'
          : '';
      const at = swept === 'irq_rate' ? 'at irq_rate per point' : `${rateText(rate as number)}/s`;
      parts.push(`background interrupts ${at} per CPU${pattern}${where}`);
    }
  }
  const trigger = num(obj(o.fastPool).trigger);
  if (!custom && swept === 'trigger') parts.push('random.c trigger per point');
  else if (!custom && trigger !== undefined) parts.push(`random.c trigger ${trigger}`);

  const trials = num(o.trials);
  const trialMs = num(o.trialMs);
  const warmupMs = num(o.warmupMs);
  if (trials !== undefined && trialMs !== undefined) {
    const count = results.points[0]?.strategies.length ?? (Array.isArray(o.strategies) ? o.strategies.length : 0);
    const warm = warmupMs ? ` (+ ${msText(warmupMs)} warm-up)` : '';
    const until = obj(o.until);
    const more =
      num(until.pct) !== undefined
        ? ` or more (--until ±${until.pct}%, up to ${msText(num(until.maxTimeMs) ?? 0)} more per point)`
        : '';
    parts.push(
      `${plural(trials, 'trial')}${more} of ${msText(trialMs)}${warm} per strategy${count > 1 ? ', interleaved' : ''}`,
    );
  }
  return parts.length ? parts.join('; ') : undefined;
}

/** `seed 123456 (replay: --seed 123456)`: the seed every random choice of the run came from. */
export function seedLine(results: Pick<RunResults, 'meta'>): string {
  return `seed ${results.meta.seed} (replay: --seed ${results.meta.seed})`;
}

/** The run status line: `completed`, or what went wrong. */
export function statusLine(results: RunResults): string {
  if (results.status === 'completed') return 'status: completed';
  const e = results.error;
  const where = e
    ? [e.thread && `thread ${e.thread}`, e.strategy && `strategy ${e.strategy}`, e.cpu !== undefined && `cpu ${e.cpu}`]
    : [];
  const at = where.filter(Boolean).join(', ');
  const msg = e ? `: ${e.message}${at ? ` (${at})` : ''}${e.context ? ` [${e.context}]` : ''}` : '';
  return termSafe(`status: ${results.status}${msg}; results below are partial`);
}

/**
 * Which columns the default terminal table keeps: every `always` column, then the prioritised
 * ones in priority order while the whole grid (columns two spaces apart) stays within `limit`.
 * `widths`: each column's width. Context: any thread; pure.
 */
export function fitColumns(widths: readonly number[], show: readonly ColumnShow[], limit: number): boolean[] {
  const keep = show.map((s) => s === 'always');
  const width = () => widths.reduce((a, w, i) => (keep[i] ? a + w + 2 : a), -2);
  const optional = show
    .map((s, i) => [s, i] as const)
    .filter((e): e is readonly [number, number] => typeof e[0] === 'number')
    .sort((x, y) => x[0] - y[0]);
  for (const [, i] of optional) {
    keep[i] = true;
    if (width() > limit) keep[i] = false;
  }
  return keep;
}

/** The widest of `widths` (label → half-width %), a missing interval (NaN) counting as widest. */
export function widestInterval(widths: Record<string, number>): [label: string, width: number] | undefined {
  const rank = (w: number) => (Number.isFinite(w) ? w : Number.POSITIVE_INFINITY);
  return Object.entries(widths).reduce<[string, number] | undefined>(
    (a, e) => (!a || rank(e[1]) > rank(a[1]) ? e : a),
    undefined,
  );
}

/** Under the table of a point that ran with --until: whether the target was reached, and how. */
export function untilLine(point: PointResult): string | undefined {
  const u = point.until;
  if (!u) return undefined;
  const widest = widestInterval(u.widthPct);
  const w = widest
    ? `; widest Δ-mean interval ${Number.isFinite(widest[1]) ? `±${widest[1].toFixed(1)}%` : 'none'} (${widest[0]})`
    : '';
  const rounds = plural(u.rounds, 'round');
  const why: Record<typeof u.stop, string> = {
    reached: `reached after ${rounds}`,
    time: `not reached: --max-time (${Math.round(u.maxTimeMs / 1000)} s) ran out after ${rounds}`,
    trials: `not reached: the trial limit stopped it after ${rounds}`,
    ended: `not reached: the run ended after ${rounds}`,
  };
  return `until ±${u.pct}%: ${why[u.stop]}${w}`;
}

export interface RenderOptions {
  /** Every column, however wide (`--wide`). */
  wide?: boolean;
  /** The default table's width limit; {@link TABLE_WIDTH}. */
  width?: number;
}

/**
 * The terminal table for the whole run. By default it fits {@link TABLE_WIDTH} columns (see
 * {@link fitColumns}; the units move to a caption, tail verdicts that are called are listed
 * under it); `wide` shows every column. Returns a string ending in a newline; never prints.
 * Context: main thread; pure.
 */
export function renderTable(results: RunResults, opts: RenderOptions = {}): string {
  const out: string[] = [statusLine(results)];
  const setup = setupLine(results);
  if (setup) out.push(termSafe(setup));
  const ctx = tableContext(results);
  results.points.forEach((point, pi) => {
    const t = summaryTable(point, results.baseline, ctx);
    const title = pointTitle(point);
    out.push('');
    if (results.points.length > 1 || title) {
      out.push(termSafe(`point ${pi + 1}/${results.points.length}${title ? `: ${title}` : ''}`));
    }
    if (t.stageNote) out.push(`(${t.stageNote})`);
    const body = t.rows.map((r) => [termSafe(r.label), ...r.cells]);
    let dropped = false;
    if (opts.wide) {
      out.push(...renderGrid(t.header, t.align, body));
    } else {
      const widths = t.shortHeader.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
      const keep = fitColumns(widths, t.show, opts.width ?? TABLE_WIDTH);
      const pick = <T>(xs: T[]) => xs.filter((_, i) => keep[i]);
      dropped = keep.some((k) => !k);
      out.push(`${t.stage === 'one_way' ? 'one-way' : t.stage} latency in µs`);
      out.push(
        ...renderGrid(
          pick(t.shortHeader),
          pick(t.align),
          body.map((r) => pick(r)),
        ),
      );
    }
    out.push(...t.notes.map(termSafe));
    out.push(termSafe(t.deltaNote));
    if (!opts.wide) out.push(...tailVerdictNotes(point, results.baseline, t.stage, ctx.control).map(termSafe));
    const until = untilLine(point);
    if (until) out.push(termSafe(until));
    if (dropped) out.push(MORE_COLUMNS_NOTE);
  });
  out.push(seedLine(results));
  const host = calibrationLine(results.meta); // absent in results written before the block
  if (host) out.push(host);
  return `${out.join('\n')}\n`;
}

/** Under a default table that left columns out. */
export const MORE_COLUMNS_NOTE = '(more columns: --wide; results.csv, results.json and report.html have them all)';
