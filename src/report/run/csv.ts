/**
 * results.csv: the run in one long ("tidy") table, one observation per row, for pandas/R/sheets.
 *
 * Columns, always in this order:
 *
 *   point, <one column per swept parameter>, label, strategy, trial, kind, name, unit,
 *   count, min, mean, p50, p90, p99, p99_9, max, value, metric, ci_low, ci_high, detectable, verdict
 *
 * - `point`: the point's index in results.json (0-based). Parameter columns hold its params
 *   (named as the parameter; a parameter whose name is a fixed column gets a `param_` prefix).
 * - `trial`: `all` for the merged histogram / summed counter, else the trial's `index`.
 * - `kind` selects which of the remaining columns are filled:
 *     latency:  name = stage, unit = ns; count, min, mean, p50, p90, p99, p99_9, max filled.
 *     counter:  name = counter, unit = ns if the name ends in `_ns`, else `count`; value filled.
 *     rate:     trial = all only; name = counter, unit = /s; value filled.
 *     duration: name = measured, unit = ns; value = measured time (sum over trials for `all`).
 *     delta:    trial = all; one row per comparison against the baseline: name = stage,
 *               metric = mean|p50|p90|p99|p99_9, unit = ns, value = Δ (diff), ci_low, ci_high,
 *               detectable (the minimum detectable effect) and verdict filled.
 *   Unused cells are empty. Empty also stands for NaN.
 * - Quoting: RFC 4180 (fields with `,` `"` CR or LF are quoted, quotes doubled); CRLF-free, `\n`
 *   line ends.
 */

import type { RunResults, Summary } from '../types.js';
import { STAGE_NAMES } from '../types.js';
import type { ReportFormat } from './format.js';

export const RESULTS_CSV = 'results.csv';

const LEAD_COLUMNS = ['point'] as const;
const FIXED_COLUMNS = [
  'label',
  'strategy',
  'trial',
  'kind',
  'name',
  'unit',
  'count',
  'min',
  'mean',
  'p50',
  'p90',
  'p99',
  'p99_9',
  'max',
  'value',
  'metric',
  'ci_low',
  'ci_high',
  'detectable',
  'verdict',
] as const;
type FixedColumn = (typeof FIXED_COLUMNS)[number];

const RESERVED = new Set<string>([...LEAD_COLUMNS, ...FIXED_COLUMNS]);

/** The CSV column name of a sweep parameter. */
export function paramColumn(param: string): string {
  return RESERVED.has(param) || param.startsWith('param_') ? `param_${param}` : param;
}

/** RFC 4180 field quoting. */
export function csvField(v: string | number | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return '';
    return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  }
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function counterUnit(name: string): string {
  return name.endsWith('_ns') ? 'ns' : 'count';
}

/** The results.csv text. Context: main thread; pure. */
export function renderCsv(results: RunResults): string {
  const params: string[] = [];
  for (const p of results.points) for (const k of Object.keys(p.params)) if (!params.includes(k)) params.push(k);
  const header = [...LEAD_COLUMNS, ...params.map(paramColumn), ...FIXED_COLUMNS];
  const lines = [header.map(csvField).join(',')];

  results.points.forEach((point, pi) => {
    const lead = [pi, ...params.map((k) => point.params[k])];
    for (const s of point.strategies) {
      const row = (cells: Partial<Record<FixedColumn, string | number>>): void => {
        const fixed = FIXED_COLUMNS.map((c) => cells[c]);
        lines.push([...lead, ...fixed].map(csvField).join(','));
      };
      const base = { label: s.label, strategy: s.name };
      const latency = (trial: string | number, name: string, sum: Summary): void =>
        row({ ...base, trial, kind: 'latency', name, unit: 'ns', ...sum });

      for (const stage of STAGE_NAMES) {
        const m = s.merged[stage];
        if (m) latency('all', stage, m.summary);
      }
      for (const [name, value] of Object.entries(s.counters)) {
        row({ ...base, trial: 'all', kind: 'counter', name, unit: counterUnit(name), value });
      }
      for (const [name, value] of Object.entries(s.rates)) {
        row({ ...base, trial: 'all', kind: 'rate', name, unit: '/s', value });
      }
      const total = s.trials.reduce((a, t) => a + t.durationNs, 0);
      row({ ...base, trial: 'all', kind: 'duration', name: 'measured', unit: 'ns', value: total });
      for (const c of s.comparison ?? []) {
        row({
          ...base,
          trial: 'all',
          kind: 'delta',
          name: c.stage,
          unit: 'ns',
          value: c.diff,
          metric: c.metric,
          ci_low: c.ciLow,
          ci_high: c.ciHigh,
          detectable: c.detectable,
          verdict: c.verdict,
        });
      }

      for (const t of s.trials) {
        for (const stage of STAGE_NAMES) {
          const sum = t.stages[stage];
          if (sum) latency(t.index, stage, sum);
        }
        for (const [name, value] of Object.entries(t.counters)) {
          row({ ...base, trial: t.index, kind: 'counter', name, unit: counterUnit(name), value });
        }
        row({ ...base, trial: t.index, kind: 'duration', name: 'measured', unit: 'ns', value: t.durationNs });
      }
    }
  });
  return lines.join('\n') + '\n';
}

/** results.csv as a report format (formats.ts). */
export const CSV_FORMAT: ReportFormat = {
  listed: RESULTS_CSV,
  holds: 'the same numbers, one observation per row (pandas, R, a spreadsheet)',
  render: (results) => [{ name: RESULTS_CSV, text: renderCsv(results) }],
};
