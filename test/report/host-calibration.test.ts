/**
 * The calibration block in reports: the one line under the table, report.html's section, and
 * results.json with and without the block (older files have none). No timing is asserted: the
 * block here is made by hand.
 */
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/report/run/html.js';
import { type RenderOptions, renderTable as renderWrapped } from '../../src/report/run/table.js';
import { validateResults } from '../../src/report/schema.js';
import { calibrationLine, calibrationRows } from '../../src/report/statistics/host-calibration.js';
import type { Calibration, RunResults } from '../../src/report/types.js';
import { syntheticResults } from '../fixtures/synthetic.js';

/** The table with each prose line whole: the tests here read lines; wrapping has its own tests (table.test.ts). */
const renderTable = (r: RunResults, o: RenderOptions = {}) =>
  renderWrapped(r, { proseWidth: Number.POSITIVE_INFINITY, ...o });

const BLOCK: Calibration = {
  futexWakeP50Ns: 6812,
  futexWakeP99Ns: 21_400,
  handoffP50Ns: 7890,
  handoffP99Ns: 30_050,
  sameThreadSwitchNs: 92.4,
  clockReadNs: 38.2,
  histRecordNs: 20.6,
  histWasm: true,
  roundTrips: 300,
  repetitions: 5,
  batches: 101,
  durationMs: 212.7,
  hostCores: 2,
  cpuModel: 'AMD EPYC <7B13>',
  loadAvgStart: [0.42, 0.61, 0.7],
  loadAvgEnd: [1.08, 0.75, 0.72],
};

function withBlock(block: Calibration | undefined): RunResults {
  const r = syntheticResults({ samples: 50, trials: 2 });
  if (block) r.meta.calibration = structuredClone(block);
  else delete r.meta.calibration;
  return r;
}

/** results.json as written (NaN → null) and parsed back. */
const asJson = (r: RunResults): unknown => JSON.parse(JSON.stringify(r));

describe('calibrationLine', () => {
  it('summarises a block in one line', () => {
    expect(calibrationLine({ calibration: BLOCK })).toBe(
      'host: futex wake 6.8 µs p50, hand-off 7.9 µs, same-thread switch 0.09 µs, clock 38 ns, ' +
        'hist record 21 ns; 2 cores, load 0.4 → 1.1',
    );
  });

  it('says when the histogram timed was the JS build, and one core in the singular', () => {
    const line = calibrationLine({ calibration: { ...BLOCK, histWasm: false, hostCores: 1 } });
    expect(line).toContain('hist record 21 ns (JS build); 1 core,');
  });

  it('shows a value that is not a number as ?, not NaN', () => {
    const line = calibrationLine({ calibration: { ...BLOCK, futexWakeP50Ns: Number.NaN, loadAvgEnd: [] } });
    expect(line).toContain('futex wake ? µs p50');
    expect(line).toMatch(/load 0\.4 → \?$/);
    expect(line).not.toContain('NaN');
  });

  it('is undefined for results without the block', () => {
    expect(calibrationLine({})).toBeUndefined();
  });
});

describe('the block in the table and report.html', () => {
  it('the table ends with the line when the block is there, and has no host line otherwise', () => {
    const lines = renderTable(withBlock(BLOCK)).trimEnd().split('\n');
    expect(lines.at(-1)).toBe(calibrationLine({ calibration: BLOCK }));
    expect(renderTable(withBlock(undefined))).not.toMatch(/^host:/m);
  });

  it('report.html has a calibration section with every row, escaped', () => {
    const html = renderHtml(withBlock(BLOCK));
    expect(html).toContain('id="calibration"');
    for (const [k] of calibrationRows({ calibration: BLOCK })!) expect(html).toContain(k);
    expect(html).toContain('AMD EPYC &lt;7B13&gt;, 2 cores');
    expect(html).toContain('0.42 / 0.61 / 0.70 at the start, 1.08 / 0.75 / 0.72 at the end');
    expect(renderHtml(withBlock(undefined))).not.toContain('id="calibration"');
  });
});

describe('results.json and the block', () => {
  it('accepts results with the block, and reads it back unchanged', () => {
    const v = validateResults(asJson(withBlock(BLOCK)));
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.results.meta.calibration).toEqual(BLOCK);
  });

  it('accepts older results without it', () => {
    const v = validateResults(asJson(withBlock(undefined)));
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.results.meta.calibration).toBeUndefined();
  });

  it('reads a timing written as null (NaN) back as NaN', () => {
    const v = validateResults(asJson(withBlock({ ...BLOCK, clockReadNs: Number.NaN })));
    expect(v.ok && Number.isNaN(v.results.meta.calibration?.clockReadNs)).toBe(true);
  });

  it('refuses a malformed block, naming the field', () => {
    const data = asJson(withBlock(BLOCK)) as { meta: { calibration: Record<string, unknown> } };
    data.meta.calibration.hostCores = 'two';
    const v = validateResults(data);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.first).toBe('meta.calibration.hostCores must be a number (got "two")');
  });
});
