/**
 * Sliced trials in the comparison (src/report/statistics/stats.ts): the Δ mean pairs slice cycles, the tail
 * still pairs trials, and anything that does not line up falls back to trials.
 */
import { describe, expect, it } from 'vitest';
import { sliceCount } from '../../src/harness/round.js';
import { compareStage } from '../../src/report/statistics/stats.js';
import type { StrategyResult } from '../../src/report/types.js';
import { withTrials } from '../fixtures/trials.js';

/**
 * `label` with trials whose one_way slices have means `means[i]` and counts `counts[i]` (1000 each
 * by default); the trial's mean is their pooled mean.
 */
function sliced(label: string, means: number[][], counts?: number[][]): StrategyResult {
  const n = (i: number) => counts?.[i] ?? means[i].map(() => 1000);
  const pooled = (i: number) => means[i].reduce((a, m, k) => a + m * n(i)[k], 0) / n(i).reduce((a, c) => a + c, 0);
  const s = withTrials(
    label,
    means.map((_, i) => [i, pooled(i)] as const),
  );
  s.trials.forEach((t, i) => {
    t.slices = { one_way: { count: n(i), mean: means[i] } };
  });
  return s;
}

describe('sliceCount', () => {
  it('cuts a trial into slices of about --slice, and not at all for 0 or a slice as long as the trial', () => {
    expect(sliceCount(1000, 100)).toBe(10);
    expect(sliceCount(1000, 300)).toBe(3);
    expect(sliceCount(1000, 0)).toBe(1);
    expect(sliceCount(1000, 1000)).toBe(1);
    expect(sliceCount(1000, 5000)).toBe(1);
    expect(sliceCount(150, 100)).toBe(2);
  });
});

describe('the Δ mean of sliced trials', () => {
  it('pairs slice k of trial r with slice k of the baseline trial r: n = trials × slices', () => {
    const base = sliced('a', [
      [10, 12, 11],
      [9, 13, 10],
    ]);
    const cand = sliced('b', [
      [11, 13, 12],
      [10, 14, 11],
    ]);
    const c = compareStage(base, cand, 'one_way', 'mean')!;
    // Every slice pair differs by exactly 1 with equal counts: the interval has no width, n = 6.
    expect(c.diff).toBeCloseTo(1, 12);
    expect(c.ciLow).toBeCloseTo(1, 12);
    expect(c.ciHigh).toBeCloseTo(1, 12);
    expect(c.method).toMatch(/slice cycle.*n=6 pairs, df=5/);
    expect(c.verdict).toBe('regression');
  });

  it('with equal counts it is the paired t on slice means', () => {
    const base = sliced('a', [
      [10, 10, 10, 10],
      [10, 10, 10, 10],
    ]);
    const means = [
      [11.5, 10.5, 11, 11],
      [10.5, 11.5, 11.2, 10.8],
    ];
    const bySlice = compareStage(base, sliced('b', means), 'one_way', 'mean')!;
    const asTrials = compareStage(
      withTrials(
        'a',
        means.flat().map((_, i) => [i, 10] as const),
      ),
      withTrials(
        'b',
        means.flat().map((m, i) => [i, m] as const),
      ),
      'one_way',
      'mean',
    )!;
    expect(bySlice.diff).toBeCloseTo(asTrials.diff, 12);
    expect(bySlice.ciLow).toBeCloseTo(asTrials.ciLow, 12);
    expect(bySlice.ciHigh).toBeCloseTo(asTrials.ciHigh, 12);
  });

  it('weights a slice by its samples: a stalled slice of few, late messages counts as few samples', () => {
    const base = sliced('a', [[10, 10, 10, 10]]);
    // Slice 3 was stalled: 10 messages at 200, against 1000 at 10–11 in the others.
    const cand = sliced('b', [[11, 10, 200, 11]], [[1000, 1000, 10, 1000]]);
    const c = compareStage(base, cand, 'one_way', 'mean')!;
    const pooled = (11 * 1000 + 10 * 1000 + 200 * 10 + 11 * 1000) / 3010;
    expect(c.value).toBeCloseTo(pooled, 9);
    expect(c.diff).toBeCloseTo(pooled - 10, 9);
    // Unweighted, the stalled slice would move the difference by ~47.
    expect(c.diff).toBeLessThan(2);
  });

  it('drops slices that recorded nothing on either side', () => {
    const base = sliced('a', [[10, Number.NaN, 10]], [[1000, 0, 1000]]);
    const cand = sliced('b', [[11, 11, Number.NaN]], [[1000, 1000, 0]]);
    const c = compareStage(base, cand, 'one_way', 'mean')!;
    expect(c.method).toMatch(/no interval from 1 paired slice /);
    expect(c.diff).toBe(1);
  });

  it('pairs trials when the slice counts differ or one side is whole, and the tail always by trial', () => {
    const base = sliced('a', [
      [10, 10],
      [10, 10],
    ]);
    const cand = sliced('b', [
      [11, 11, 11],
      [12, 12, 12],
    ]);
    expect(compareStage(base, cand, 'one_way', 'mean')!.method).toMatch(/per-trial difference: n=2/);
    const whole = withTrials('w', [
      [0, 11],
      [1, 12],
    ]);
    expect(compareStage(base, whole, 'one_way', 'mean')!.method).toMatch(/per-trial difference: n=2/);
    const same = sliced('c', [
      [11, 11],
      [12, 12],
    ]);
    expect(compareStage(base, same, 'one_way', 'p99')!.method).toMatch(/per-trial difference: n=2/);
  });
});
