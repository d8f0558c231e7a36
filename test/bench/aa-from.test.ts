/**
 * bench:aa --from DIR: the runs a --save left are judged again with this build's statistics, not
 * counted as saved (the point of --from: try a changed method on the same real runs).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main, notAnAaRun, savedRuns } from '../../bench/aa.js';
import { withComparisons } from '../../src/report/statistics/stats.js';
import type { RunResults } from '../../src/report/types.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'aa-from-'));
  dirs.push(d);
  return d;
};

/** `r` with every strategy but the baseline labelled as an A/A copy of inline. */
function asCopies(r: RunResults): RunResults {
  let n = 0;
  return {
    ...r,
    points: r.points.map((p) => ({
      ...p,
      strategies: p.strategies.map((s) => (s.label === r.baseline ? s : { ...s, label: `my-inline.ts(copy=${++n})` })),
    })),
  };
}

/** The labels withComparisons calls anything for in one_way, as bench:aa counts them. */
function calledLabels(r: RunResults): string[] {
  return r.points[0].strategies
    .filter((s) => s.label !== r.baseline)
    .filter((s) => s.comparison?.some((c) => c.stage === 'one_way' && c.verdict !== 'within-noise'))
    .map((s) => s.label);
}

describe('bench:aa --from', () => {
  it('lists run-N.json in N order and nothing else', () => {
    const d = scratch();
    for (const f of ['run-10.json', 'run-2.json', 'run-1.json', 'notes.txt', 'run-x.json'])
      writeFileSync(join(d, f), '{}');
    expect(savedRuns(d)).toEqual(['run-1.json', 'run-2.json', 'run-10.json']);
    expect(savedRuns(join(d, 'missing'))).toEqual([]);
  });

  it('judges a saved run again instead of counting its saved verdicts', async () => {
    // Synthetic strategies that differ from inline, labelled as bench:aa labels its A/A copies.
    const r = withComparisons(asCopies(syntheticResults({ seed: 3 })));
    const expected = calledLabels(r);
    expect(expected.length).toBeGreaterThan(0); // the synthetic strategies differ from inline
    // Saved as if by other statistics: nothing called.
    const saved: RunResults = {
      ...r,
      points: r.points.map((p) => ({
        ...p,
        strategies: p.strategies.map((s) =>
          s.comparison
            ? { ...s, comparison: s.comparison.map((c) => ({ ...c, verdict: 'within-noise' as const })) }
            : s,
        ),
      })),
    };
    expect(calledLabels(saved)).toEqual([]);
    const d = scratch();
    writeFileSync(join(d, 'run-1.json'), `${JSON.stringify(saved)}\n`);
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      out += String(s);
      return true;
    });
    await main(['--from', d]);
    vi.restoreAllMocks();
    const line = out.split('\n').find((l) => l.startsWith('run-1.json: ')) ?? '';
    expect(line).toContain('called: ');
    for (const label of expected) expect(line).toContain(label.replace(/^my-inline\.ts/, ''));
    expect(out).toMatch(/family-wise: runs with any call 1\/1/);
  });

  it('counts only completed runs of inline against its A/A copies', () => {
    const plain = syntheticResults({ seed: 3 }); // inline against other strategies
    expect(notAnAaRun(plain)).toMatch(/is not an A\/A copy of inline/);
    const copies = asCopies(plain);
    expect(notAnAaRun(copies)).toBeUndefined();
    expect(notAnAaRun({ ...copies, status: 'failed' })).toBe('its status is failed, not completed');
    expect(notAnAaRun({ ...copies, baseline: 'tasklet' })).toBe('its baseline is tasklet, not inline');
    const alone = { ...copies, points: copies.points.map((p) => ({ ...p, strategies: p.strategies.slice(0, 1) })) };
    expect(notAnAaRun(alone)).toBe('it holds no A/A copy of inline');
  });
});
