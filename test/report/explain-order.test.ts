/**
 * The order `deferlab explain` lists strategies in (a new user's probe: the candidate came before
 * the baseline): the baseline first, then the others in the run's order, whatever order the
 * collector first met them in.
 */
import { describe, expect, it } from 'vitest';
import { CauseBuckets } from '../../src/report/explain/buckets.js';
import { explainOf } from '../../src/report/explain/read.js';
import { renderExplain } from '../../src/report/explain/text.js';
import type { ExplainResults, ExplainSeries } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

/** A series of `n` exchanges of 10 µs, all on the wire. */
function series(label: string, n = 200): ExplainSeries {
  const b = new CauseBuckets(label, 'exchange');
  for (let i = 0; i < n; i++)
    b.add({ kind: 'exchange', startNs: i, endNs: i, latencyNs: 10_000, causes: new Map([['wire', 10_000]]) });
  return b.series();
}

/** The strategies a rendering lists, in order (`  inline (200 exchanges)`). */
const listed = (text: string) => [...text.matchAll(/^ {2}(\S+) \(\d+ exchanges/gm)].map((m) => m[1]);

describe('explain lists', () => {
  it('the baseline first, though the collector met a candidate first', () => {
    const e: ExplainResults = { method: '', points: [{ point: 0, series: [series('workqueue'), series('inline')] }] };
    const text = renderExplain(e, 'inline', null);
    expect(listed(text)).toEqual(['inline', 'workqueue']);
    // The Δ lines are the candidate's, against the baseline.
    expect(text).toMatch(/workqueue[\s\S]*slowest 1% is 0\.00 µs above inline's/);
  });

  it('then the candidates in the run’s order (explain DIR reads it from results.json)', () => {
    const [inline, workqueue, tasklet] = DEFAULT_STRATEGIES;
    const results = syntheticResults({ seed: 1, samples: 50, trials: 2, strategies: [inline, workqueue, tasklet] });
    // Met in a shuffled round's order: tasklet, inline, workqueue.
    results.explain = {
      method: '',
      points: [{ point: 0, series: [series('tasklet'), series('inline'), series('workqueue')] }],
    };
    const e = explainOf(results, 'results.json');
    expect(listed(renderExplain(e, results.baseline, results.sweep))).toEqual(['inline', 'workqueue', 'tasklet']);
  });
});
