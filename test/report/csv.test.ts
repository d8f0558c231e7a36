import { describe, expect, it } from 'vitest';
import { csvField, paramColumn, renderCsv } from '../../src/report/run/csv.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

/** Minimal RFC 4180 reader, enough to check the writer. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  return rows;
}

describe('results.csv', () => {
  const strategies = [DEFAULT_STRATEGIES[0], { ...DEFAULT_STRATEGIES[1], label: 'wq, "highpri"\nx' }];
  const r = syntheticResults({ samples: 100, trials: 3, msgSizes: [64, 4096], strategies });
  const rows = parseCsv(renderCsv(r));
  const [header, ...body] = rows;
  const col = (name: string): number => header.indexOf(name);

  it('has the documented columns, the sweep parameter among them', () => {
    expect(header).toEqual([
      'point',
      'msg_size',
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
    ]);
    for (const row of body) expect(row).toHaveLength(header.length);
  });

  it('has one delta row per comparison, with its interval, detectable effect and verdict', () => {
    const deltas = body.filter((row) => row[col('kind')] === 'delta');
    const expected = r.points.flatMap((p) => p.strategies.flatMap((s) => s.comparison ?? []));
    expect(deltas).toHaveLength(expected.length);
    const s = r.points[0].strategies[1];
    const c = s.comparison!.find((x) => x.stage === 'one_way' && x.metric === 'p99')!;
    const row = deltas.find(
      (d) =>
        d[col('point')] === '0' &&
        d[col('label')] === s.label &&
        d[col('name')] === 'one_way' &&
        d[col('metric')] === 'p99',
    )!;
    expect(Number(row[col('value')])).toBeCloseTo(c.diff, 2);
    expect(Number(row[col('ci_low')])).toBeCloseTo(c.ciLow, 2);
    expect(Number(row[col('ci_high')])).toBeCloseTo(c.ciHigh, 2);
    expect(Number(row[col('detectable')])).toBeCloseTo(c.detectable!, 2);
    expect(row[col('verdict')]).toBe(c.verdict);
    expect(row[col('trial')]).toBe('all');
    // The baseline has none.
    expect(deltas.some((d) => d[col('label')] === r.baseline)).toBe(false);
  });

  it('has one merged latency row per point × strategy × stage, matching results.json', () => {
    const merged = body.filter((x) => x[col('kind')] === 'latency' && x[col('trial')] === 'all');
    const expected = r.points.flatMap((p) => p.strategies.flatMap((s) => Object.keys(s.merged)));
    expect(merged).toHaveLength(expected.length);
    const s = r.points[1].strategies[1];
    const row = merged.find(
      (x) => x[col('point')] === '1' && x[col('label')] === s.label && x[col('name')] === 'one_way',
    )!;
    expect(row[col('msg_size')]).toBe('4096');
    expect(row[col('unit')]).toBe('ns');
    expect(Number(row[col('count')])).toBe(s.merged.one_way!.summary.count);
    expect(Number(row[col('p99_9')])).toBe(s.merged.one_way!.summary.p99_9);
    expect(row[col('value')]).toBe('');
  });

  it('has per-trial latency, counter and duration rows, and rates for the whole strategy', () => {
    const s = r.points[0].strategies[0];
    const mine = body.filter((x) => x[col('point')] === '0' && x[col('label')] === s.label);
    const kinds = (k: string, trial: string) => mine.filter((x) => x[col('kind')] === k && x[col('trial')] === trial);
    expect(kinds('latency', '2')).toHaveLength(Object.keys(s.trials[2].stages).length);
    expect(kinds('counter', 'all').map((x) => [x[col('name')], Number(x[col('value')])])).toEqual(
      Object.entries(s.counters),
    );
    expect(kinds('rate', 'all').every((x) => x[col('unit')] === '/s')).toBe(true);
    expect(kinds('duration', '0')[0][col('value')]).toBe(String(s.trials[0].durationNs));
  });

  it('quotes fields with commas, quotes and newlines', () => {
    expect(body.some((x) => x[col('label')] === 'wq, "highpri"\nx')).toBe(true);
    expect(csvField('a"b')).toBe('"a""b"');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(1.23456)).toBe('1.235');
  });

  it('prefixes a parameter named like a fixed column', () => {
    expect(paramColumn('label')).toBe('param_label');
    expect(paramColumn('msg_size')).toBe('msg_size');
  });
});
