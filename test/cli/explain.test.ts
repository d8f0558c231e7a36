/**
 * `deferlab explain DIR` (src/report/explain/): the table of a run made with --explain, and one
 * line with exit status 2 for a DIR it cannot explain (missing, no explain data, damaged JSON,
 * a damaged explain block).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CauseBuckets } from '../../src/report/explain/buckets.js';
import { renderHtml } from '../../src/report/run/html.js';
import type { RunResults } from '../../src/report/types.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-explain-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function dirWith(name: string, text: string): string {
  const d = join(tmp, name);
  mkdirSync(d);
  writeFileSync(join(d, 'results.json'), text);
  return d;
}

function explained(): RunResults {
  const r = syntheticResults();
  const labels = r.points[0].strategies.map((s) => s.label);
  const series = labels.map((label, i) => {
    const b = new CauseBuckets(label, 'exchange');
    for (let k = 0; k < 200; k++) {
      const slow = k >= 198 ? 1000 * (i + 1) : 0;
      b.add({
        kind: 'exchange',
        startNs: k,
        endNs: k,
        latencyNs: 20_000 + slow,
        causes: new Map([
          ['wire', 5000],
          ['endpoint task (copy)', 15_000],
          ...(slow ? [['waiting for ksoftirqd', slow] as [string, number]] : []),
        ]),
      });
    }
    return b.series();
  });
  return { ...r, explain: { method: 'test', points: [{ point: 0, series }] } };
}

const good = dirWith('good', JSON.stringify(explained()));
const plain = dirWith('plain', JSON.stringify(syntheticResults()));
const broken = dirWith('broken', '{ "schemaVersion": 1, ');
const damaged = dirWith(
  'damaged',
  JSON.stringify({ ...explained(), explain: { method: 'x', points: [{ point: 0, series: [{ label: 'a' }] }] } }),
);

describe('deferlab explain DIR', () => {
  it('prints each strategy’s bands by cause and the Δ to the baseline by cause', async () => {
    const r = await runMain(['explain', good], tmp);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /slowest 1%\s+21\.0 = 15\.0 endpoint task \(copy\), 5\.00 wire, 1\.00 waiting for ksoftirqd/,
    );
    expect(r.stdout).toMatch(/slowest 1% is 1\.00 µs above \S+'s: \+1\.00 waiting for ksoftirqd/);
  });

  it('`report DIR` of an --explain run prints the explanation under its table, as the run did', async () => {
    const dir = dirWith('report-good', JSON.stringify(explained()));
    const r = await runMain(['report', dir], tmp);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/slowest 1% is 1\.00 µs above \S+'s: \+1\.00 waiting for ksoftirqd/);
    const p = await runMain(['report', dirWith('report-plain', JSON.stringify(syntheticResults()))], tmp);
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout).not.toContain('slowest 1%');
  });

  it.each([
    ['no such directory', join(tmp, 'nonexistent'), /explain DIR must be an existing results directory/],
    ['a run made without --explain', plain, /holds no explain data: the run was made without --explain/],
    ['results.json that is not JSON', broken, /not a deferlab results file: not JSON/],
    ['a damaged explain block', damaged, /damaged "explain" block: a series without its "label" or "kind"/],
  ])('%s: one line, exit 2', async (_name, dir, re) => {
    const r = await runMain(['explain', dir], tmp);
    expect(r.status).toBe(2);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stderr.trimEnd().split('\n')[0]).toMatch(re);
    expect(r.stdout).toBe('');
  });

  it('draws report.html’s stacked bars from the same data, and none without it', () => {
    expect(renderHtml(explained())).toMatch(/<h3>Why: latency by cause<\/h3>[\s\S]*waiting for ksoftirqd/);
    expect(renderHtml(syntheticResults())).not.toMatch(/Why: latency by cause/);
  });
});
