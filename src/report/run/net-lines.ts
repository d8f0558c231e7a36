/**
 * The network path per tcp_lat exchange (a request and its reply), under a point's table: what
 * the NIC model (src/net/) turned each message into, and where the hand-offs landed. Absent
 * for workloads without a NIC or results written before it existed.
 */
import type { PointResult, StrategyResult } from '../types.js';
import { type ColumnShow, fitColumns } from './fit.js';

/** One column of the net table: its title, its cell, and when it shows. */
interface NetColumn {
  title: string;
  cell(s: StrategyResult, cpus: number): string;
  /** Where it shows in the default table, as in the summary table (table.ts, `ColumnShow`). */
  show: ColumnShow;
}

const PER_MESSAGE: ReadonlyArray<readonly [counter: string, title: string]> = [
  ['nic_tx_packets', 'pkts'],
  ['nic_irqs', 'NIC irqs'],
  ['napi_polls', 'polls'],
  ['napi_full_weight', 'full'],
  ['net_time_squeeze', 'squeeze'],
  ['net_rx_reraises', 'reraise'],
  ['tcp_acks_sent', 'ACKs'],
];

const fmt = (x: number) => (!Number.isFinite(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Hand-offs that landed while the application was running or runnable on that CPU, of all. */
function appShare(c: StrategyResult['counters']): string {
  const busy = c.handoffs_app_busy ?? 0;
  const idle = c.handoffs_app_idle ?? 0;
  if (busy + idle === 0) return '-';
  return `${((100 * busy) / (busy + idle)).toFixed(0)}% (${busy}/${busy + idle})`;
}

/** Deferred work's run time on a CPU whose application task was runnable, per such hand-off. */
function lostPerHandoff(c: StrategyResult['counters']): string {
  const busy = c.handoffs_app_busy ?? 0;
  const us = c.deferred_us_app_waiting ?? 0;
  return busy > 0 ? `${(us / busy).toFixed(1)} µs` : '-';
}

const perMessage = (s: StrategyResult, counter: string) =>
  fmt((s.counters[counter] ?? Number.NaN) / (s.counters.app_messages as number));

/**
 * The columns after the label. hand-offs/s, which the summary table has too (under `--wide` or
 * where it fits), is the one the default table leaves out when the grid would pass its width.
 */
const COLUMNS: readonly NetColumn[] = [
  ...PER_MESSAGE.map(([k, title]): NetColumn => ({ title, cell: (s) => perMessage(s, k), show: 'always' })),
  { title: 'irqs/s/CPU', cell: (s, cpus) => fmt((s.rates.interrupts ?? Number.NaN) / cpus), show: 'always' },
  { title: 'hand-offs/s', cell: (s) => fmt(s.rates.handoffs ?? Number.NaN), show: 1 },
  { title: 'app busy', cell: (s) => appShare(s.counters), show: 'always' },
  { title: 'lost/h-o', cell: (s) => lostPerHandoff(s.counters), show: 'always' },
];

/** What the columns are, under them: the parts of the legend, by the column they explain. */
const LEGEND: ReadonlyArray<readonly [title: string | undefined, text: string]> = [
  [
    undefined,
    'per exchange (a request and its reply): packets on the wire, NIC interrupts, NAPI polls (full: used the whole weight), net_rx_action stops at its budget and re-raises, ACKs',
  ],
  ['irqs/s/CPU', 'device interrupts per second per CPU (background and NIC)'],
  ['hand-offs/s', 'hand-offs/s'],
  ['app busy', 'app busy: hand-offs that found the application running or runnable on their CPU'],
  ['lost/h-o', 'lost/h-o: deferred work run on that CPU while it waited, per such hand-off'],
];

/** The legend of the columns `shown` (titles); undefined: every column. */
function legendOf(shown?: ReadonlySet<string>): string {
  return LEGEND.filter(([title]) => title === undefined || !shown || shown.has(title))
    .map(([, text]) => text)
    .join('; ');
}

/** What the columns are, under them (every column: `--wide`). */
export const NET_LINES_LEGEND = legendOf();

export interface NetLinesOptions {
  /** Every column, however wide (`--wide`). */
  wide?: boolean;
  /** The default table's width limit (table.ts's TABLE_WIDTH). */
  width?: number;
  /**
   * The columns to show (label first), as {@link netColumns} chose them for every point of the
   * run; without it, fitted to this point's cells alone.
   */
  keep?: readonly boolean[];
}

/** The net table of a point: its grid (header and rows), its legend, and whether columns were left out. */
export interface NetLines {
  grid: string[];
  legend: string;
  dropped: boolean;
}

const NET_SHOW: readonly ColumnShow[] = ['always', ...COLUMNS.map((c) => c.show)];

/** A point's net grid as text (header, rows, each column's width); undefined when no strategy used the NIC. */
function netGrid(
  point: PointResult,
  cpus: number,
): { header: string[]; body: string[][]; widths: number[] } | undefined {
  const rows = point.strategies.filter(
    (s) => (s.counters.app_messages ?? 0) > 0 && s.counters.nic_tx_packets !== undefined,
  );
  if (rows.length === 0) return undefined;
  const header = ['per exchange', ...COLUMNS.map((c) => c.title)];
  const body = rows.map((s) => [s.label, ...COLUMNS.map((c) => c.cell(s, cpus))]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  return { header, body, widths };
}

/**
 * The net columns the default table keeps in every point of a run (label first): fitted to each
 * column's widest cell in any point, so every point's net table has the same columns.
 * Context: main thread; pure.
 */
export function netColumns(points: readonly PointResult[], cpus: number, width: number): boolean[] {
  const grids = points.map((p) => netGrid(p, cpus)).filter((g) => g !== undefined);
  const widths = NET_SHOW.map((_, i) => Math.max(0, ...grids.map((g) => g.widths[i])));
  return fitColumns(widths, NET_SHOW, width);
}

/**
 * The net table of a tcp_lat point, one row per strategy that exchanged messages over the NIC;
 * undefined when none did. Like the summary table it fits `opts.width` unless `opts.wide`
 * (columns left out: `dropped`); the legend names only the columns shown.
 * Context: main thread; pure.
 */
export function netLines(point: PointResult, cpus = 1, opts: NetLinesOptions = {}): NetLines | undefined {
  const grid = netGrid(point, cpus);
  if (!grid) return undefined;
  const { header, body, widths } = grid;
  const keep = opts.wide
    ? header.map(() => true)
    : (opts.keep ?? fitColumns(widths, NET_SHOW, opts.width ?? Number.POSITIVE_INFINITY));
  const line = (r: string[]) =>
    r
      .map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i])))
      .filter((_, i) => keep[i])
      .join('  ');
  const dropped = keep.some((k) => !k);
  return {
    grid: [line(header), ...body.map(line)],
    legend: dropped ? legendOf(new Set(header.filter((_, i) => keep[i]))) : NET_LINES_LEGEND,
    dropped,
  };
}
