/**
 * The run table's marks and columns (a new user's probe): a Δ without an interval gets no verdict
 * ("?", which the legend explains), and every point of a sweep shows the same columns.
 */
import { describe, expect, it } from 'vitest';
import { markerOf, renderTable, verdictText } from '../../src/report/run/table.js';
import type { Comparison, RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const three = DEFAULT_STRATEGIES.slice(0, 3);

describe('a Δ without an interval', () => {
  const oneTrial = renderTable(syntheticResults({ seed: 1, samples: 200, trials: 1, strategies: three }));

  it('gets no verdict: "?", not "~" (within noise)', () => {
    const row = oneTrial.split('\n').find((l) => l.startsWith('workqueue'))!;
    expect(row).toMatch(/\[no CI: n<2\] {2}\?(\s|$)/);
    expect(row).not.toContain('~');
  });

  it('is explained in the legend under the table, only where one is shown', () => {
    expect(oneTrial.replace(/\s+/g, ' ')).toContain('"?" = not judged: no interval (one trial, or too few samples)');
    const judged = renderTable(syntheticResults({ seed: 1, samples: 200, trials: 3, strategies: three }));
    expect(judged).not.toContain('"?" = not judged');
  });

  it('is "?" in every marker, and a call with an interval keeps its own', () => {
    const c = { diff: 1000, ciLow: Number.NaN, ciHigh: Number.NaN, verdict: 'within-noise', method: 'paired t' };
    expect(markerOf(c as Comparison)).toBe('?');
    expect(verdictText({ ...c, detectable: 500, baseline: 10_000 } as Comparison)).toBe('?');
    expect(markerOf({ ...c, ciLow: 500, ciHigh: 1500, verdict: 'regression' } as Comparison)).toBe('worse');
  });
});

describe('a sweep’s tables', () => {
  /** The header line of each point's summary grid, and of its net grid. */
  const headers = (text: string, first: RegExp) => text.split('\n').filter((l) => first.test(l));

  it('have the same columns at every point, though one point’s cells are wider', () => {
    const r = syntheticResults({ seed: 1, samples: 200, trials: 2, msgSizes: [64, 4096], strategies: three });
    // Point 2's hand-offs/s cells alone would push the column out of 120 columns.
    for (const s of r.points[1].strategies) s.rates.handoffs = 1e20;
    delete r.points[0].strategies[2].rates.kthread_switches;
    const text = renderTable(r);
    const grids = headers(text, /^strategy /);
    expect(grids).toHaveLength(2);
    expect(grids[0].split(/\s{2,}/)).toEqual(grids[1].split(/\s{2,}/));
    expect(grids[0]).toContain('kthread sw/s');
  });

  it('have the same net columns at every point', () => {
    const r: RunResults = syntheticResults({
      seed: 1,
      samples: 200,
      trials: 2,
      msgSizes: [64, 4096],
      strategies: three,
    });
    r.points.forEach((p, pi) => {
      for (const s of p.strategies) {
        s.counters.app_messages = 1000;
        s.counters.nic_tx_packets = 2000;
        s.counters.nic_irqs = 4000;
        // Point 2's app-busy cells are far wider: "50% (100000000000/200000000000)".
        s.counters.handoffs_app_busy = pi === 0 ? 10 : 1e11;
        s.counters.handoffs_app_idle = pi === 0 ? 10 : 1e11;
        s.rates.handoffs = pi === 0 ? 60 : 1e15;
      }
    });
    const nets = headers(renderTable(r), /^per exchange {2}/);
    expect(nets).toHaveLength(2);
    expect(nets[0].split(/\s{2,}/)).toEqual(nets[1].split(/\s{2,}/));
  });
});
