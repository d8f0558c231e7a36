/**
 * The summary table: per point, one row per strategy with what qperf would report (one-way
 * latency) and what it cost (wakeups, context switches, entropy delivered).
 *
 * {@link summaryTable} builds a table model that both the terminal ({@link renderTable}) and
 * report.html render, so the two never disagree. Nothing here prints: the CLI does.
 */

import { plural } from '../../text.js';
import { calibrationLine } from '../statistics/host-calibration.js';
import { comparisonFor } from '../statistics/stats.js';
import type {
  ComparableMetric,
  Comparison,
  PointResult,
  RunResults,
  StageName,
  StrategyResult,
  Summary,
} from '../types.js';
import { STAGE_NAMES } from '../types.js';
import { foundWithTails, noiseFloorNotes, tailMethodNote, tailVerdictNotes, untilLine } from './comparison-notes.js';
import { pointOfText, type TableContext, tableContext } from './context.js';
import { type ColumnShow, fitColumns } from './fit.js';
import {
  fmtDelta,
  fmtRate,
  fmtUs,
  type Marker,
  markerOf,
  NOT_JUDGED,
  NOT_JUDGED_LEGEND,
  verdictText,
} from './format-cells.js';
import { hostStallNotes } from './host-stall-notes.js';
import { generatorLossNotes, irqTraceNotes } from './irq-trace-notes.js';
import { netColumns, netLines } from './net-lines.js';
import {
  busyHostNote,
  droppedSliceNotes,
  handoffsLostWarnings,
  hasStage,
  noSamplesWarning,
  noWqBhNote,
  shortTrialNotes,
  strandedWarnings,
  TRACING_OFF_NOTE,
} from './notes.js';
import { PROSE_WIDTH, wrapProse } from './prose.js';
import { seedLine, setupLine } from './setup-line.js';

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

/** The default terminal table fits this many columns (`--wide`: every column, however wide). */
export const TABLE_WIDTH = 120;

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
  /** The latency stage the table shows: `one_way`, else `request_to_start` or {@link FALLBACK_STAGE} (tableStage). */
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

/**
 * Policy: show one_way when any strategy has it; else a driver payload's request → start (every
 * request, as cpu-hog's verdicts, its --until and its host-stall counts take it: a hand-off that
 * finds its work pending adds a request but no hand-off sample); else the hand-off delay; else
 * the first stage measured.
 */
export function tableStage(point: PointResult): StageName {
  if (point.strategies.some((s) => hasStage(s, 'one_way'))) return 'one_way';
  if (point.strategies.some((s) => hasStage(s, 'request_to_start'))) return 'request_to_start';
  if (point.strategies.some((s) => hasStage(s, FALLBACK_STAGE))) return FALLBACK_STAGE;
  return STAGE_NAMES.find((st) => point.strategies.some((s) => hasStage(s, st))) ?? 'one_way';
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
    title: `Δ ${title} µs [BH CI]`,
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
      title: 'Δ mean µs [Holm CI]',
      short: 'Δ mean [Holm CI]',
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
    tailDelta(point, baselineLabel, stage, 'p90', 'p90'),
    tailDelta(point, baselineLabel, stage, 'p99', 'p99'),
    tailDelta(point, baselineLabel, stage, 'p99_9', 'p99.9'),
  ];
}

/** The Δ note under a point's table: how the Δ column was made, or why it is empty. */
function deltaNoteOf(
  point: PointResult,
  baselineLabel: string,
  stage: StageName,
  ctx: TableContext,
  rows: readonly { marker: Marker }[],
): string {
  if (!point.strategies.some((s) => s.label !== baselineLabel))
    return `Δ mean: none: the baseline "${baselineLabel}" ran with no strategy to compare with it (give another --strategy).`;
  if (!point.strategies.some((s) => s.comparison?.length))
    return `Δ mean: none: no strategy has a measured trial to compare with the baseline "${baselineLabel}".`;
  if (!(point.strategies.find((s) => s.label === baselineLabel)?.merged[stage]?.summary.count ?? 0))
    return `Δ mean: none: the baseline "${baselineLabel}" recorded no ${stage} in this point's measured windows, so no strategy could be compared with it on ${stage} (a stage a strategy reaches rarely, as a hand-off at a low interrupt rate, may need a longer --duration).`;
  const name = stage === 'one_way' ? 'one-way' : stage;
  const control = ctx.control ? point.strategies.find((s) => s.label === ctx.control) : undefined;
  return (
    `Δ mean: strategy − baseline "${baselineLabel}" ${name} mean, ` +
    ((point.schedule?.slices ?? 1) > 1
      ? `each side pooled over the slices it ran in the same slice cycles as the other (${point.schedule?.slices} per trial), with an interval paired by cycle; `
      : 'averaged over interleaved trial pairs (the mean column pools all samples instead, so the two can disagree), with a paired-t interval; ') +
    (isAdjusted(point)
      ? `Holm-adjusted over ${plural(candidatesOf(point, baselineLabel, ctx.control), 'candidate')} (each interval at its step's level: together they hold the true differences with ≥95% probability); ` +
        `"worse"/"better" only when the interval lies wholly outside ±${thresholdPctOf(point, stage, ctx.thresholdPct)}% of the baseline (--threshold)`
      : '95% intervals, each on its own (results written before the family adjustment); "worse"/"better" only when the interval excludes 0') +
    (control ? ' and the difference lies outside the A/A noise floor' : '') +
    ', "~" = within noise; "could see ±X (Y%)": the smallest difference this comparison would likely have called ' +
    `(80% power), in µs and % of the baseline${rows.some((r) => r.marker === NOT_JUDGED) ? `; ${NOT_JUDGED_LEGEND}` : ''}.`
  );
}

/**
 * The table model of one point. `ctx` (see {@link tableContext}) lets the notes say why a column
 * is empty. Context: main thread; pure.
 */
export function summaryTable(point: PointResult, baselineLabel: string, ctx: TableContext = {}): SummaryTable {
  const stage = tableStage(point);
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
    deltaNote: deltaNoteOf(point, baselineLabel, stage, ctx, rows),
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
  table.notes.push(...strandedWarnings(point));
  table.notes.push(...noWqBhNote(point, ctx.kernel));
  table.notes.push(...shortTrialNotes(point));
  table.notes.push(...droppedSliceNotes(point, baselineLabel, stage));
  table.notes.push(...hostStallNotes(point));
  if (control) table.notes.push(...noiseFloorNotes(point, baselineLabel, control, stage));
  return table;
}

/** Strategies compared with the baseline in a point, the A/A control excluded: the Holm family's size. */
function candidatesOf(point: PointResult, baselineLabel: string, control?: string): number {
  return point.strategies.filter((s) => s.label !== baselineLabel && s.label !== control).length;
}

/** Whether the point's stored comparisons were adjusted as a family (results from before: not). */
function isAdjusted(point: PointResult): boolean {
  return point.strategies.some((s) => s.comparison?.some((c) => c.adjust !== undefined));
}

/**
 * The --threshold band, %: as the run was given it (`given`, results.meta.options), else recovered
 * from a comparison's stored ns. Neither (older results, a baseline with no samples): "?", never a
 * made-up 0.
 */
function thresholdPctOf(point: PointResult, stage: StageName, given?: number): string {
  if (given !== undefined) return String(given);
  for (const s of point.strategies) {
    const c = s.comparison?.find((x) => x.stage === stage && x.metric === 'mean' && x.threshold !== undefined);
    if (c && c.baseline !== 0) return String(Math.round((1000 * c.threshold!) / Math.abs(c.baseline)) / 10);
  }
  return '?';
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

export interface RenderOptions {
  /** Every column, however wide (`--wide`). */
  wide?: boolean;
  /** The default table's width limit; {@link TABLE_WIDTH}. */
  width?: number;
  /**
   * The prose (every line but the grids: status, setup, notes, legends, verdicts) wraps to this
   * many columns; {@link PROSE_WIDTH} by default. The CLI gives its terminal's (prose.ts,
   * `proseWidthOf`).
   */
  proseWidth?: number;
}

/**
 * The terminal table for the whole run. By default it fits {@link TABLE_WIDTH} columns (see
 * {@link fitColumns}; the units move to a caption, tail verdicts that are called are listed
 * under it); `wide` shows every column. The lines around the grids wrap to `proseWidth`.
 * Returns a string ending in a newline; never prints. Context: main thread; pure.
 */
export function renderTable(results: RunResults, opts: RenderOptions = {}): string {
  const out: string[] = [];
  const proseWidth = opts.proseWidth ?? PROSE_WIDTH;
  const prose = (...lines: string[]) => {
    for (const l of lines) out.push(...wrapProse(l, proseWidth));
  };
  const tableWidth = opts.width ?? TABLE_WIDTH;
  prose(statusLine(results));
  const setup = setupLine(results);
  if (setup) prose(termSafe(setup));
  prose(...irqTraceNotes(results).map(termSafe));
  prose(...generatorLossNotes(results).map(termSafe));
  const ctx = tableContext(results);
  const tables = results.points.map((point) => summaryTable(point, results.baseline, ctx));
  const bodies = tables.map((t) => t.rows.map((r) => [termSafe(r.label), ...r.cells]));
  // One column set for the whole run, fitted to the widest cell of any point: every point's table
  // has the same columns (a point without a value reads '-'), so the points read side by side.
  const keep = opts.wide ? undefined : runColumns(tables, bodies, tableWidth);
  const netKeep = opts.wide ? undefined : netColumns(results.points, ctx.cpus ?? 1, tableWidth);
  results.points.forEach((point, pi) => {
    const t = tables[pi];
    const title = pointTitle(point);
    out.push('');
    if (results.points.length > 1 || title) {
      prose(termSafe(`point ${pointOfText(results, pi)}${title ? `: ${title}` : ''}`));
    }
    if (t.stageNote) prose(`(${t.stageNote})`);
    const body = bodies[pi];
    let dropped = false;
    if (!keep) {
      out.push(...renderGrid(t.header, t.align, body));
    } else {
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
    prose(...t.notes.map(termSafe));
    // What the comparison found, after the warnings that qualify it.
    const found = foundWithTails(point, results.baseline, t, ctx.control);
    if (found) prose(termSafe(found));
    const net = netLines(point, ctx.cpus ?? 1, { wide: opts.wide, width: tableWidth, keep: netKeep });
    if (net) {
      out.push('', ...net.grid.map(termSafe));
      prose(net.legend);
      dropped ||= net.dropped;
    }
    prose(termSafe(t.deltaNote));
    const tailNote = tailMethodNote(point, t.stage, opts.wide);
    if (tailNote) prose(tailNote);
    if (!opts.wide) prose(...tailVerdictNotes(point, results.baseline, t.stage, ctx.control).map(termSafe));
    const until = untilLine(point);
    if (until) prose(termSafe(until));
    if (dropped) prose(MORE_COLUMNS_NOTE);
  });
  prose(seedLine(results));
  const host = calibrationLine(results.meta); // absent in results written before the block
  if (host) prose(host);
  for (const n of busyHostNote(ctx)) prose(`note: ${n}`);
  return `${out.join('\n')}\n`;
}

/**
 * The columns the default terminal table keeps in every point of a run: {@link fitColumns} over
 * each column's widest cell (short title included) in any point. `bodies`: each table's rows as
 * printed, label first. Context: main thread; pure.
 */
export function runColumns(tables: readonly SummaryTable[], bodies: readonly string[][][], width: number): boolean[] {
  const first = tables[0];
  if (!first) return [];
  const widths = first.shortHeader.map((h, i) =>
    Math.max(h.length, ...bodies.flatMap((body) => body.map((r) => r[i]?.length ?? 0))),
  );
  return fitColumns(widths, first.show, width);
}

/** Under a default table that left columns out. */
export const MORE_COLUMNS_NOTE = '(more columns: --wide; results.csv, results.json and report.html have them all)';

export { type TableContext, tableContext } from './context.js';
export { type ColumnShow, fitColumns } from './fit.js';
export { fmtDelta, fmtPct, fmtRate, fmtUs, type Marker, markerOf, verdictText } from './format-cells.js';
export {
  handoffsLostWarnings,
  noSamplesWarning,
  SHORT_TRIAL_FRACTION,
  shortTrialNotes,
  TRACING_OFF_NOTE,
} from './notes.js';
export { seedLine, setupLine };
