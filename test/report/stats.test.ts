import { build } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { compare, minimumDetectable, tCritical95, tQuantile80 } from '../../src/report/statistics/interval.js';
import { mulberry32 } from '../../src/report/statistics/prng.js';
import {
  applyFloor,
  compareStage,
  compareStrategies,
  histogramMean,
  summarize,
  withComparisons,
} from '../../src/report/statistics/stats.js';
import type { StrategyResult } from '../../src/report/types.js';
import { syntheticResults } from '../fixtures/synthetic.js';
import { withTrials } from '../fixtures/trials.js';

describe('summarize', () => {
  it('reads count, min, mean, percentiles and max from a real histogram', () => {
    const h = build();
    for (let v = 1; v <= 1000; v++) h.recordValue(v * 1000);
    const s = summarize(h);
    expect(s.count).toBe(1000);
    expect(s.min).toBe(h.getValueAtPercentile(0));
    expect(s.min).toBeGreaterThanOrEqual(1000);
    expect(s.min).toBeLessThanOrEqual(1001); // within 3 significant digits
    expect(s.mean).toBeCloseTo(h.mean, 6);
    expect(Math.abs(s.p50 - 500_000) / 500_000).toBeLessThan(1e-3);
    expect(Math.abs(s.p99 - 990_000) / 990_000).toBeLessThan(1e-3);
    expect(Math.abs(s.p99_9 - 999_000) / 999_000).toBeLessThan(1e-3);
    expect(s.max).toBe(1_000_000);
  });

  it('never reports a percentile above the max', () => {
    const h = build();
    for (let i = 0; i < 2000; i++) h.recordValue(48_230);
    const s = summarize(h);
    expect(h.getValueAtPercentile(99.9)).toBeGreaterThan(48_230); // HdrHistogram rounds up...
    expect(s.p99_9).toBe(48_230); // ...the summary does not
    expect(s.max).toBe(48_230);
  });

  it('computes the mean as the library does, for the histogram kinds the lab merges and decodes', () => {
    const rand = mulberry32(7);
    const kinds = [
      () => build({ bitBucketSize: 'packed', highestTrackableValue: 100e9 }),
      () => build({ bitBucketSize: 64, highestTrackableValue: 100e9 }),
      () => build({ bitBucketSize: 32, highestTrackableValue: 1e6, autoResize: true }),
    ];
    for (const make of kinds) {
      for (let trial = 0; trial < 5; trial++) {
        const h = make();
        const n = 1 + Math.floor(rand() * 20_000);
        for (let i = 0; i < n; i++) h.recordValue(Math.floor(500 * Math.exp(rand() * 16)));
        h.recordValueWithCount(123_456, 1 + Math.floor(rand() * 1e6));
        expect(histogramMean(h), `${h.constructor.name}, ${n} values`).toBe(h.mean);
        expect(summarize(h).mean).toBe(h.mean);
      }
    }
    expect(histogramMean(build())).toBe(0);
  });

  it('gives all zeros for an empty histogram', () => {
    expect(summarize(build())).toEqual({ count: 0, min: 0, mean: 0, p50: 0, p90: 0, p99: 0, p99_9: 0, max: 0 });
  });
});

describe('tCritical95', () => {
  it('uses the table up to df 30 and a continuous expansion beyond', () => {
    expect(tCritical95(1)).toBeCloseTo(12.706, 3);
    expect(tCritical95(4)).toBeCloseTo(2.776, 3);
    expect(tCritical95(30)).toBeCloseTo(2.042, 3);
    expect(tCritical95(31)).toBeCloseTo(2.0395, 3); // tables: t(0.975, 31) = 2.0395
    expect(tCritical95(60)).toBeCloseTo(2.0003, 3);
    expect(tCritical95(1000)).toBeCloseTo(1.9623, 3);
    expect(tCritical95(0)).toBeNaN();
  });
});

describe('tQuantile80 and the minimum detectable effect', () => {
  it('uses the table up to df 30 and the expansion beyond', () => {
    expect(tQuantile80(1)).toBeCloseTo(1.3764, 4);
    expect(tQuantile80(4)).toBeCloseTo(0.941, 4);
    expect(tQuantile80(30)).toBeCloseTo(0.8538, 4);
    expect(tQuantile80(31)).toBeCloseTo(0.8535, 3);
    expect(tQuantile80(1000)).toBeCloseTo(0.8419, 3);
    expect(tQuantile80(0)).toBeNaN();
  });

  it('is (t(0.975) + t(0.80)) standard errors, and compare reports it', () => {
    expect(minimumDetectable(100, 4)).toBeCloseTo((2.7764 + 0.941) * 100, 6);
    const c = compare([100, 200, 300], [110, 190, 330]);
    const d = [10, -10, 30];
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - 10) ** 2, 0) / 2);
    expect(c.detectable).toBeCloseTo(minimumDetectable(sd / Math.sqrt(3), 2), 9);
    expect(c.detectable).toBeGreaterThan(c.ciHigh - c.diff); // beyond the half-width
    expect(compare([1], [2]).detectable).toBeNaN();
  });
});

describe('compare (paired t over interleaved trials)', () => {
  // A machine whose speed drifts a lot from trial to trial: the baseline and the candidate
  // suffer alike in each trial, which only the pairing removes.
  const drift = [10_000, 14_000, 9_000, 16_000, 11_000];
  const base = drift.map((d) => d + 1000);

  it('calls a consistent slowdown a regression', () => {
    const slower = base.map((b, i) => b + 500 + [10, -20, 5, 15, -10][i]);
    const c = compare(base, slower);
    expect(c.verdict).toBe('regression');
    expect(c.diff).toBe(500);
    expect(c.ciLow).toBeGreaterThan(0);
    expect(c.ciHigh).toBeGreaterThan(c.ciLow);
    expect(c.n).toBe(5);
    expect(c.ratio).toBeCloseTo(c.value / c.baseline, 12);
    expect(c.method).toMatch(/paired t.*n=5.*df=4.*t=2\.776/);
  });

  it('calls a consistent speed-up an improvement', () => {
    const faster = base.map((b, i) => b - 300 + [10, -20, 5, 15, -10][i]);
    const c = compare(base, faster);
    expect(c.verdict).toBe('improvement');
    expect(c.ciHigh).toBeLessThan(0);
  });

  it('calls differences that change sign within noise', () => {
    const noisy = base.map((b, i) => b + [400, -350, 200, -300, 60][i]);
    const c = compare(base, noisy);
    expect(c.verdict).toBe('within-noise');
    expect(c.ciLow).toBeLessThan(0);
    expect(c.ciHigh).toBeGreaterThan(0);
  });

  it('reverses the verdict when higher is better (e.g. entropy rates)', () => {
    const more = base.map((b, i) => b + 500 + [10, -20, 5, 15, -10][i]);
    expect(compare(base, more, { better: 'higher' }).verdict).toBe('improvement');
  });

  it('gives no interval and within-noise with a single trial, and says why', () => {
    const c = compare([10_000], [20_000]);
    expect(c.n).toBe(1);
    expect(c.diff).toBe(10_000);
    expect(c.ciLow).toBeNaN();
    expect(c.ciHigh).toBeNaN();
    expect(c.verdict).toBe('within-noise');
    expect(c.method).toMatch(/no interval from 1 paired trial .*needs at least 2/);
  });

  it('handles no pairs at all', () => {
    const c = compare([], [1, 2]);
    expect(c.n).toBe(0);
    expect(c.diff).toBeNaN();
    expect(c.verdict).toBe('within-noise');
  });

  it('drops pairs with a missing side and ignores extra trials', () => {
    const c = compare([100, Number.NaN, 100, 100, 999], [110, 500, 112, 108]);
    expect(c.n).toBe(3);
    expect(c.diff).toBe(10);
  });

  it('a shift hidden by drift is found only because trials are paired (seeded, 20 trials)', () => {
    const rnd = mulberry32(7);
    const b: number[] = [];
    const v: number[] = [];
    for (let i = 0; i < 20; i++) {
      const d = 10_000 + 5_000 * rnd(); // drift ± 25%
      b.push(d + 100 * (rnd() - 0.5));
      v.push(d * 1.02 + 100 * (rnd() - 0.5)); // +2%, i.e. ~250 ns, far below the drift
    }
    expect(compare(b, v).verdict).toBe('regression');
    // The same numbers, unpaired (shuffled pairing), are noise.
    const shuffled = [...v.slice(10), ...v.slice(0, 10)];
    expect(compare(b, shuffled).verdict).toBe('within-noise');
  });
});

describe('compareStage', () => {
  const strat = withTrials;

  it('pairs trials by index, not by array position', () => {
    const a = strat('a', [
      [0, 1000],
      [1, 5000],
      [2, 2000],
    ]);
    const b = strat('b', [
      [2, 2100],
      [0, 1100],
      [1, 5100],
    ]);
    const c = compareStage(a, b, 'one_way', 'mean')!;
    expect(c.diff).toBe(100);
    expect(c.ciLow).toBe(100); // identical differences: a zero-width interval
    expect(c.verdict).toBe('regression');
  });

  it('is undefined for a stage either side lacks', () => {
    const a = strat('a', [[0, 1]]);
    expect(compareStage(a, a, 'work', 'mean')).toBeUndefined();
  });

  it('with a control, a difference inside the A/A interval gets no verdict, one outside keeps it', () => {
    const base = strat('inline', [
      [0, 1000],
      [1, 2000],
      [2, 3000],
    ]);
    const control = strat('inline (control)', [
      [0, 1040],
      [1, 2060],
      [2, 3050],
    ]); // A/A: +40..+60, an interval excluding 0 (the run's noise floor)
    const near = strat('near', [
      [0, 1050],
      [1, 2048],
      [2, 3052],
    ]); // +50 ± 2: "worse" alone, but inside the floor
    const far = strat('far', [
      [0, 1500],
      [1, 2510],
      [2, 3490],
    ]);
    const r = withComparisons(
      {
        ...syntheticResults({ samples: 10, trials: 1 }),
        baseline: 'inline',
        control: 'inline (control)',
        points: [{ params: {}, strategies: [base, control, near, far] }],
      },
      { thresholdPct: 0 },
    ); // the floor alone (family.test.ts: the band)
    const [, c, n, f] = r.points[0].strategies;
    const mean = (s: StrategyResult) => s.comparison!.find((x) => x.stage === 'one_way' && x.metric === 'mean')!;
    expect(mean(c).verdict).toBe('regression'); // the control's own comparison is reported as it is
    expect(mean(c).floor).toBeUndefined();
    expect(compareStage(base, near, 'one_way', 'mean')!.verdict).toBe('regression');
    expect(mean(n).verdict).toBe('within-noise');
    expect(mean(n).insideFloor).toBe(true);
    expect(mean(n).floor).toEqual({ low: mean(c).ciLow, high: mean(c).ciHigh });
    expect(mean(f).verdict).toBe('regression');
    expect(mean(f).insideFloor).toBeUndefined();
  });

  it('applyFloor sets no floor from a control without an interval', () => {
    const c = compare([1, 2, 3], [11, 12, 13]);
    const { n: _n, ...cmp } = c;
    const full = { stage: 'one_way' as const, metric: 'mean' as const, ...cmp };
    const noInterval = { ...full, ciLow: Number.NaN, ciHigh: Number.NaN };
    expect(applyFloor(full, noInterval)).toEqual(full);
    expect(applyFloor(full, undefined)).toEqual(full);
  });

  it('withComparisons fills every non-baseline strategy and leaves the baseline without', () => {
    const r = withComparisons(syntheticResults({ samples: 200, trials: 3 }));
    const [base, ...rest] = r.points[0].strategies;
    expect(base.comparison).toBeUndefined();
    for (const s of rest) {
      expect(s.comparison!.length).toBeGreaterThan(0);
      // The same comparisons, adjusted as one family: the same estimates, intervals at least as wide.
      const plain = compareStrategies(base, s);
      expect(s.comparison!.map((c) => [c.stage, c.metric, c.diff])).toEqual(
        plain.map((c) => [c.stage, c.metric, c.diff]),
      );
      s.comparison!.forEach((c, i) => {
        if (!Number.isFinite(plain[i].ciLow)) return;
        expect(c.level ?? 0.95).toBeGreaterThanOrEqual(0.95);
        // (interval.ts's 95% table is rounded to 4 decimals: a tolerance of 1e-4 of the width)
        const tol = 1e-4 * (plain[i].ciHigh - plain[i].ciLow);
        expect(c.ciLow).toBeLessThanOrEqual(plain[i].ciLow + tol);
        expect(c.ciHigh).toBeGreaterThanOrEqual(plain[i].ciHigh - tol);
        expect(['holm', 'bh']).toContain(c.adjust);
      });
    }
  });
});
