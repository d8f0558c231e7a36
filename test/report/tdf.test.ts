/**
 * Time dilation in the reports: the setup line says the TDF and how it was chosen, results.json
 * keeps it (schema), and compare warns when its runs ran at different TDFs.
 */
import { describe, expect, it } from 'vitest';
import { type CompareInput, compareRuns } from '../../src/report/compare/compare.js';
import { renderCompareHtml } from '../../src/report/compare/compare-html.js';
import { renderCompareTable } from '../../src/report/compare/compare-text.js';
import { setupLine, tdfText } from '../../src/report/run/setup-line.js';
import { validateResults } from '../../src/report/schema.js';
import type { RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const run = (name: string, r: RunResults): CompareInput => ({ name, path: `${name}/results.json`, results: r });
const withTdf = (seed: number, tdf?: RunResults['meta']['tdf']): RunResults => {
  const r = syntheticResults({ seed, samples: 200, trials: 2, strategies: DEFAULT_STRATEGIES.slice(0, 2) });
  return tdf ? { ...r, meta: { ...r.meta, tdf } } : r;
};
const auto: RunResults['meta']['tdf'] = {
  tdf: 6.3,
  mode: 'auto',
  how: 'auto: median lab/reference ratio 6.3 over 2 operations (payload write per byte 4.0x, mix 8.6x)',
  ops: [{ name: 'mix', unit: 'ns', labNs: 540, refNs: 62.5, refSource: 'documented' }],
};

describe('the setup line', () => {
  it('says nothing without dilation, the factor when given, and how when auto', () => {
    expect(tdfText({})).toBe('');
    expect(tdfText({ tdf: { tdf: 1, mode: 'default', how: 'no dilation' } })).toBe('');
    expect(tdfText({ tdf: { tdf: 2, mode: 'given', how: 'given (--tdf 2)' } })).toBe(
      'TDF 2 (emulated time = host time / 2)',
    );
    expect(tdfText({ tdf: auto })).toBe(`TDF 6.3 (${auto?.how})`);
    expect(setupLine(withTdf(1, auto))).toContain('TDF 6.3 (auto: median lab/reference ratio 6.3');
  });
  it('results.json with meta.tdf validates', () => {
    const r = withTdf(1, auto);
    expect(() => validateResults(JSON.parse(JSON.stringify(r)))).not.toThrow();
  });
});

describe('compare', () => {
  it('is silent when every run ran at the same TDF (absent counts as 1)', () => {
    const m = compareRuns([run('a', withTdf(1)), run('b', withTdf(2, { tdf: 1, mode: 'given', how: 'x' }))]);
    expect(m.tdfWarning).toBeUndefined();
    expect(renderCompareTable(m)).not.toMatch(/dilation/);
  });
  it('warns, in the table and the page, when the TDFs differ', () => {
    const m = compareRuns([run('a', withTdf(1)), run('b', withTdf(2, auto))]);
    expect(m.tdfWarning).toMatch(/different time dilation factors \(#1 TDF 1, #2 TDF 6\.3\)/);
    expect(renderCompareTable(m).replace(/\s+/g, ' ')).toContain(
      'different time dilation factors (#1 TDF 1, #2 TDF 6.3)',
    );
    const html = renderCompareHtml(m, [run('a', withTdf(1)), run('b', withTdf(2, auto))]);
    expect(html).toContain('different time dilation factors');
  });
});
