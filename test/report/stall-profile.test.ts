/**
 * The stall profile of real runs (src/report/statistics/stall-profile.ts) and the realistic
 * model's draw from it (realistic.ts, STALLS): the tables bench:aa prints are what the model reads.
 */
import { describe, expect, it } from 'vitest';
import { quantileOf } from '../../src/report/statistics/order.js';
import { mulberry32, normalOf } from '../../src/report/statistics/prng.js';
import { cycleStalls, normalCdf, runStall, STALLS, stallDraw, tableAt } from '../../src/report/statistics/realistic.js';
import { addRun, newStallTally, spearman, stallLines } from '../../src/report/statistics/stall-profile.js';
import type { RunResults } from '../../src/report/types.js';
import { withTrials } from '../fixtures/trials.js';

/** A run of two strategies, 2 trials × 5 slices, each slice's count and mean given, cycles in `orders`. */
function run(counts: Record<string, number[][]>, means: Record<string, number[][]>, orders: string[][]): RunResults {
  const strategies = Object.keys(counts).map((label) => {
    const s = withTrials(label, [
      [0, 1],
      [1, 1],
    ]);
    s.trials.forEach((t, i) => {
      t.slices = { one_way: { count: counts[label][i], mean: means[label][i] } };
    });
    return s;
  });
  return {
    points: [{ params: {}, strategies, schedule: { method: '', rounds: orders, slices: 5 } }],
  } as unknown as RunResults;
}

describe('the stall profile of saved runs', () => {
  it('counts slices under 30% of their strategy’s median count, their kept share, depth and position', () => {
    const full = [100, 100, 100, 100, 100];
    const m = [10, 10, 10, 10, 10];
    // B stalls twice: slice 2 of trial 0 (20 samples, mean 80: depth 8) and slice 4 of trial 1
    // (empty); A once, in B's first stalled cycle (25 samples, mean 40: depth 4).
    const r = run(
      {
        A: [[100, 100, 25, 100, 100], full],
        B: [
          [100, 100, 20, 100, 100],
          [100, 100, 100, 100, 0],
        ],
      },
      {
        A: [[10, 10, 40, 10, 10], m],
        B: [
          [10, 10, 80, 10, 10],
          [10, 10, 10, 10, Number.NaN],
        ],
      },
      // One order per cycle: 2 trials × 5 slices. B runs second in cycle 2, first in cycle 9.
      Array.from({ length: 10 }, (_, c) => (c === 9 ? ['B', 'A'] : ['A', 'B'])),
    );
    const t = newStallTally();
    addRun(t, r);
    expect(t.runs).toBe(1);
    expect(t.slices).toBe(20);
    expect(t.stalled).toBe(3);
    expect(t.empty).toBe(1);
    expect(t.kept.sort()).toEqual([0, 0.2, 0.25]);
    expect(t.depth).toEqual([4, 8]);
    expect(t.runRates).toEqual([0.15]);
    expect(t.atPosition).toEqual([10, 10]);
    expect(t.stalledAtPosition).toEqual([2, 1]);
    // 10 pairs of sides, 1 both stalled: (1/10) / (3/20); their log depths paired.
    expect(t.sharedRatios).toHaveLength(1);
    expect(t.sharedRatios[0]).toBeCloseTo(2 / 3, 12);
    expect(t.pairLogDepths).toEqual([[Math.log(4), Math.log(8)]]);
    const lines = stallLines(t).join('\n');
    expect(lines).toMatch(/3 of 20 slices \(15\.0%\) in 1 runs, 1 empty/);
    expect(lines).toMatch(/by position .*: 20\.0% 10\.0%/);
    expect(lines).toMatch(/both stalled\) \/ P\(a side stalled\), per run: median 0\.67/);
  });

  it('reads quantiles linearly between order statistics, and ranks ties by their average', () => {
    expect(quantileOf([1, 2, 3, 4], 0)).toBe(1);
    expect(quantileOf([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileOf([1, 2, 3, 4], 1)).toBe(4);
    expect(spearman([1, 2, 3, 4], [8, 6, 4, 2])).toBeCloseTo(-1, 12);
    expect(spearman([1, 1, 2, 3], [1, 1, 2, 3])).toBeCloseTo(1, 12);
  });
});

describe('the realistic model’s stalls, drawn from the profile’s tables', () => {
  it('reads a table at its points and between them, log-linearly for depth', () => {
    expect(tableAt(STALLS.kept, 0)).toBe(STALLS.kept[0][1]);
    expect(tableAt(STALLS.kept, 0.5)).toBe(STALLS.kept[3][1]);
    const [[p1, a], [p2, b]] = [STALLS.depth[3], STALLS.depth[4]];
    expect(tableAt(STALLS.depth, (p1 + p2) / 2, true)).toBeCloseTo(Math.sqrt(a * b), 9);
    expect(tableAt(STALLS.depth, 1, true)).toBe(STALLS.depth[STALLS.depth.length - 1][1]);
  });

  it('draws the fewer samples with the deeper stall, and each run’s rate within the batch’s range', () => {
    const shallow = stallDraw(0.95);
    const deep = stallDraw(0.05);
    expect(shallow.kept).toBeGreaterThan(deep.kept);
    expect(shallow.depth).toBeLessThan(deep.depth);
    const rnd = mulberry32(3);
    const rates = Array.from({ length: 200 }, () => runStall(rnd, -1));
    const lo = STALLS.runRate[0][1];
    const hi = STALLS.runRate[STALLS.runRate.length - 1][1];
    expect(Math.min(...rates)).toBeGreaterThanOrEqual(lo);
    expect(Math.max(...rates)).toBeLessThanOrEqual(hi);
    expect(new Set(rates).size).toBeGreaterThan(100); // drawn, not one value
    expect(runStall(rnd, 0.07)).toBe(0.07); // a fixed rate stays fixed
  });

  it('stalls a side at the run’s rate, and both sides of a cycle together as often as the batch did', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 6);
    const rnd = mulberry32(11);
    const normal = normalOf(rnd);
    for (const rate of [0.1, 0.2, 0.4]) {
      let side = 0;
      let both = 0;
      const n = 40_000;
      for (let c = 0; c < n; c++) {
        const [a, b] = cycleStalls(rnd, normal, rate, 2);
        if (!Number.isNaN(a)) side++;
        if (!Number.isNaN(a) && !Number.isNaN(b)) both++;
        if (!Number.isNaN(a)) expect(a > 0 && a < 1).toBe(true);
      }
      // Binomial sd of a rate of 0.4 over 40,000: 0.0025; of the ratio, under 0.02.
      expect(Math.abs(side / n - rate), `rate ${rate}`).toBeLessThan(0.01);
      expect(Math.abs(both / side - STALLS.shared), `rate ${rate}`).toBeLessThan(0.04);
    }
  });
});
