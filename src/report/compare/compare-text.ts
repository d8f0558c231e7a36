/**
 * `deferlab compare`'s terminal table: a rendering of the comparison model (compare.ts), the
 * runs' metadata where they differ, the warnings of runs not comparable as they stand, then per
 * point and stage each run's percentiles with its ratio to the first run. Nothing here prints.
 */

import { wrapWords } from '../../text.js';
import { PROSE_WIDTH, wrapProse } from '../run/prose.js';
import { termSafe } from '../run/table.js';
import { COMPARE_METRICS, type CompareModel, type CompareRun } from './compare.js';

/** The table's width budget, columns: it must fit a 120-column terminal. */
export const TABLE_WIDTH = 120;

/** ns → µs, at most 7 characters up to 10 s: 2 decimals below 100 µs, 1 below 1 ms, then none. */
export function fmtCompareUs(ns: number): string {
  if (!Number.isFinite(ns)) return '-';
  const us = ns / 1000;
  return us < 100 ? us.toFixed(2) : us < 1000 ? us.toFixed(1) : us.toFixed(0);
}

/** A ratio to the first run, at most 5 characters: `×1.02`, `×12.3`, `×150`, `×15k`; `` when there is none. */
export function fmtRatio(r: number | null): string {
  if (r === null || !Number.isFinite(r)) return '';
  if (r >= 1000) return `×${(r / 1000).toFixed(0)}k`;
  return `×${r < 10 ? r.toFixed(2) : r < 100 ? r.toFixed(1) : r.toFixed(0)}`;
}

/** Cut `s` to `n` characters, marking the cut with …. */
function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1))}…`;
}

/** Column widths of the stage table: stage, run, and each percentile cell (value, space, ratio). */
const STAGE_COLUMN = 16; // handoff_to_start
const RUN_COLUMN = 12;
const VALUE_WIDTH = 7; // up to 9999999 µs (10 s)
const RATIO_WIDTH = 5;
const GAP = '  ';

/** `#2 …0101-120000`: the run's number and the end of its name (where paths differ), cut to fit. */
function runCell(run: CompareRun): string {
  const head = `#${run.index} `;
  const name = termSafe(run.name);
  const room = RUN_COLUMN - head.length;
  return head + (name.length <= room ? name : `…${name.slice(name.length - room + 1)}`);
}

function cell(value: string, r: string): string {
  return `${value.padStart(VALUE_WIDTH)} ${r.padEnd(RATIO_WIDTH)}`;
}

/** Significant digits a metadata value's decimals show (more where fewer would make two values read alike). */
export const META_DIGITS = 4;

const DECIMAL = /^-?\d+\.\d+$/;
const INTEGER = /^-?\d+$/;

/** A plain decimal to `digits` significant digits, never cutting its integer part: 402.51217599999995 → 402.5. */
function roundDecimal(text: string, digits: number): string {
  const x = Number(text);
  const magnitude = x === 0 ? 0 : Math.floor(Math.log10(Math.abs(x)));
  return String(Number(x.toFixed(Math.min(20, Math.max(0, digits - 1 - magnitude)))));
}

/** A value with its decimals (alone, or in a list of numbers) rounded; anything else as it is. */
function roundedValue(v: string, digits: number): string {
  if (DECIMAL.test(v)) return roundDecimal(v, digits);
  if (v.startsWith('[') && v.endsWith(']') && v.length > 2) {
    const parts = v.slice(1, -1).split(',');
    if (parts.every((p) => DECIMAL.test(p) || INTEGER.test(p)))
      return `[${parts.map((p) => (DECIMAL.test(p) ? roundDecimal(p, digits) : p)).join(', ')}]`;
  }
  return v;
}

/**
 * One metadata row's values as the table and the page show them: decimals to {@link META_DIGITS}
 * significant digits (`calibration.durationMs` 402.51217599999995 → 402.5), or as many more as
 * it takes for the values to differ exactly where the exact ones do. The model (and `--json`)
 * keeps them exact. Context: any thread; pure.
 */
export function shownMetaValues(values: ReadonlyArray<string | null>): Array<string | null> {
  for (let digits = META_DIGITS; digits <= 17; digits++) {
    const shown = values.map((v) => (v === null ? null : roundedValue(v, digits)));
    if (values.every((a, i) => values.every((b, j) => (a === b) === (shown[i] === shown[j])))) return shown;
  }
  return [...values];
}

/**
 * `s` in lines of at most `width` characters, each after the first starting with `indent`: broken
 * after a `.`, `,`, `]`, `)` or space, or before a `[`, where one falls late enough in the line,
 * else at the width. Nothing is cut: a long field name reads whole, over lines.
 */
export function wrapCell(s: string, width: number, indent = ''): string[] {
  const out: string[] = [];
  let rest = s;
  let room = width;
  while (rest.length > room) {
    let at = 0;
    for (let i = room; i > room / 3; i--) {
      if ('.,]) '.includes(rest[i - 1]) || rest[i] === '[') {
        at = i;
        break;
      }
    }
    if (at === 0) at = room;
    out.push(`${out.length ? indent : ''}${rest.slice(0, at).trimEnd()}`);
    rest = rest.slice(at).trimStart();
    room = width - indent.length;
  }
  out.push(`${out.length ? indent : ''}${rest}`);
  return out;
}

/**
 * The metadata table: field, then one column per run, fitting {@link TABLE_WIDTH}: the field gets
 * the width it needs while each value keeps 20 columns, the values the rest; what is still too
 * long wraps onto more lines, never cut. Its title wraps to `proseWidth`.
 */
function metaTable(model: CompareModel, proseWidth: number): string[] {
  if (model.metaDifferences.length === 0) {
    return wrapProse(`metadata: the same in every run (apart from ${model.metaIgnored.join(', ')})`, proseWidth);
  }
  const n = model.runs.length;
  const rows = model.metaDifferences.map((d) => ({
    field: termSafe(d.field),
    values: shownMetaValues(d.values).map((v) => (v === null ? '(absent)' : termSafe(v))),
  }));
  const longestField = Math.max(5, ...rows.map((r) => r.field.length));
  const widest = Math.max(8, ...rows.flatMap((r) => r.values.map((v) => v.length)));
  // The field first (each value keeps up to 20 columns), then the values what is left.
  const fieldW = Math.min(longestField, Math.max(28, TABLE_WIDTH - n * (Math.min(widest, 20) + 2)));
  const colW = Math.min(widest, Math.max(12, Math.floor((TABLE_WIDTH - fieldW - 2 * n) / n)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(i === 0 ? fieldW : colW))
      .join('  ')
      .trimEnd();
  const out = [
    ...wrapProse(`metadata that differs (not shown: ${model.metaIgnored.join(', ')}):`, proseWidth),
    line(['field', ...model.runs.map((r) => `#${r.index}`)]),
    line(['-'.repeat(fieldW), ...model.runs.map(() => '-'.repeat(colW))]),
  ];
  for (const r of rows) {
    const cells = [wrapCell(r.field, fieldW, '  '), ...r.values.map((v) => wrapCell(v, colW))];
    const height = Math.max(...cells.map((c) => c.length));
    for (let k = 0; k < height; k++) out.push(line(cells.map((c) => c[k] ?? '')));
  }
  return out;
}

export interface CompareRenderOptions {
  /**
   * The prose (each run's setup line, the metadata's title) wraps to this many columns;
   * {@link PROSE_WIDTH} by default. The CLI gives its terminal's (run/prose.ts, `proseWidthOf`).
   */
  proseWidth?: number;
}

/**
 * The terminal rendering: the runs, then per point and strategy a block with, per stage, a row
 * per run (percentiles in µs, each with its ratio to run #1) and, with `--merge`, the merged
 * row; then the metadata that differs. At most {@link TABLE_WIDTH} columns wide; the prose
 * wraps to `opts.proseWidth`. Returns a string ending in a newline. Context: main thread; pure.
 */
export function renderCompareTable(model: CompareModel, opts: CompareRenderOptions = {}): string {
  const proseWidth = opts.proseWidth ?? PROSE_WIDTH;
  const out: string[] = ['runs:'];
  for (const r of model.runs) {
    const status = r.status === 'completed' ? '' : ` [${r.status}: partial results]`;
    out.push(cut(termSafe(`  #${r.index}  ${r.name}  (started ${r.startedAt})${status}`), TABLE_WIDTH));
    if (r.setup) out.push(...wrapWords(termSafe(r.setup), proseWidth - 6).map((l) => `      ${l}`));
  }
  if (model.incomparable.length) {
    out.push('');
    for (const l of model.incomparable) out.push(...wrapProse(termSafe(l), proseWidth));
  }
  // With several points, each block says which; a run without a sweep is its own point.
  const manyPoints = new Set(model.rows.map((r) => r.point)).size > 1;
  const line = (stage: string, run: string, cells: string[]) =>
    [stage.padEnd(STAGE_COLUMN), cut(run, RUN_COLUMN).padEnd(RUN_COLUMN), ...cells].join(GAP).trimEnd();
  const header = line(
    'stage',
    'run',
    COMPARE_METRICS.map(([, title]) => cell(title, '')),
  );
  const rule = line(
    '-'.repeat(STAGE_COLUMN),
    '-'.repeat(RUN_COLUMN),
    COMPARE_METRICS.map(() => '-'.repeat(VALUE_WIDTH + 1 + RATIO_WIDTH)),
  );
  let block: string | undefined;
  for (const row of model.rows) {
    const key = `${row.point}\u0000${row.label}`;
    if (key !== block) {
      if (manyPoints && row.point !== block?.split('\u0000')[0])
        out.push('', termSafe(`point ${row.point || '(no sweep)'}`));
      block = key;
      out.push('', cut(termSafe(`${row.label}: µs; ×N = ratio to run #1`), TABLE_WIDTH), header, rule);
    }
    // A stage name wider than its column (net_rx_ksoftirqd_wait) gets a line of its own above its rows.
    const wide = row.stage.length > STAGE_COLUMN;
    if (wide) out.push(row.stage);
    row.runs.forEach((s, ri) => {
      const run = model.runs[ri];
      const cells = COMPARE_METRICS.map(([m]) =>
        s ? cell(fmtCompareUs(s[m]), ri === 0 ? '' : fmtRatio(row.ratios[ri]?.[m] ?? null)) : cell('-', ''),
      );
      out.push(line(ri === 0 && !wide ? row.stage : '', runCell(run), cells));
    });
    if (row.merged) {
      const m = row.merged;
      const present = row.runs.filter(Boolean).length;
      out.push(
        line(
          '',
          `merged (${present})`,
          COMPARE_METRICS.map(([k]) => cell(fmtCompareUs(m[k]), '')),
        ),
      );
    }
  }
  if (model.rows.length === 0) out.push('', 'no stage with samples in any run');
  out.push('', ...metaTable(model, proseWidth));
  return `${out.join('\n')}\n`;
}
