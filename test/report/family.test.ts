/**
 * The run's family of tests (src/report/statistics/family.ts), the t distribution it needs
 * (tdist.ts) and the slice histograms the tails are computed from (slice-hist.ts, tails.ts).
 */
import { describe, expect, it } from 'vitest';
import { fmtDelta } from '../../src/report/run/format-cells.js';
import { adjusted, adjustPoint, bhLevel, holmLevels } from '../../src/report/statistics/family.js';
import { tCritical95 } from '../../src/report/statistics/interval.js';
import { mulberry32 } from '../../src/report/statistics/prng.js';
import { binOf, binValue, decodeBins, encodeBins } from '../../src/report/statistics/slice-hist.js';
import { compareTails } from '../../src/report/statistics/tail-compare.js';
import { bootQuantiles } from '../../src/report/statistics/tails.js';
import { tCriticalTwoSided, tTwoSidedP } from '../../src/report/statistics/tdist.js';
import type { Comparison } from '../../src/report/types.js';

describe('t distribution', () => {
  it('gives the 95% table of interval.ts back, and p-values that invert it', () => {
    for (const df of [1, 2, 4, 9, 30, 49, 200]) {
      expect(tCriticalTwoSided(0.05, df)).toBeCloseTo(tCritical95(df), 3);
      expect(tTwoSidedP(tCritical95(df), df)).toBeCloseTo(0.05, 3);
    }
    expect(tTwoSidedP(0, 10)).toBeCloseTo(1, 10);
    // Bonferroni over 8 at df 49 is wider than 95%, narrower than 99.9%.
    const c = tCriticalTwoSided(0.05 / 8, 49);
    expect(c).toBeGreaterThan(tCriticalTwoSided(0.05, 49));
    expect(c).toBeLessThan(tCriticalTwoSided(0.001, 49));
  });
});

describe('Holm and Benjamini-Hochberg', () => {
  it('Holm: levels step down from alpha/m while rejected, then stay', () => {
    // m = 4: thresholds 0.0125, 0.01667, 0.025, 0.05.
    const l = holmLevels([0.001, 0.5, 0.015, 0.04]);
    expect(l[0]).toBeCloseTo(0.0125);
    expect(l[2]).toBeCloseTo(0.05 / 3); // 0.015 <= 0.01667: rejected at its step
    expect(l[3]).toBeCloseTo(0.025); // 0.04 > 0.025: stops here
    expect(l[1]).toBeCloseTo(0.025); // after the stop: the same level
    expect(holmLevels([Number.NaN, 0.2])).toEqual([Number.NaN, 0.05]);
  });

  it('BH: rejects the largest k with p(k) <= k q / m', () => {
    expect(bhLevel([0.01, 0.02, 0.03, 0.5])).toEqual({ rejected: 3, alpha: (3 * 0.05) / 4, m: 4 });
    expect(bhLevel([0.2, 0.5]).rejected).toBe(0);
    expect(bhLevel([0.2, 0.5]).alpha).toBeCloseTo(0.025);
  });

  const cmp = (diff: number, se: number, metric: Comparison['metric'] = 'mean'): Comparison => ({
    stage: 'one_way',
    metric,
    baseline: 10_000,
    value: 10_000 + diff,
    diff,
    ciLow: Number.NaN,
    ciHigh: Number.NaN,
    ratio: 1 + diff / 10_000,
    verdict: 'within-noise',
    method: 'test',
    se,
    df: 49,
    p: tTwoSidedP(diff / se, 49),
  });

  it('an adjusted interval excludes 0 exactly when its test rejects at that level', () => {
    const rnd = mulberry32(7);
    for (let i = 0; i < 200; i++) {
      const c = cmp((rnd() - 0.5) * 2000, 300);
      const a = adjusted(c, 0.05 / 8, 'holm', 0);
      expect(a.ciLow > 0 || a.ciHigh < 0).toBe(c.p! <= 0.05 / 8);
      expect(a.level).toBeCloseTo(1 - 0.05 / 8);
    }
  });

  it('the --threshold band: a resolved change smaller than the band is not called', () => {
    // +400 ± ~120 ns on 10 µs: 4%, clearly nonzero; inside a 5% band, outside a 2% one.
    const c = cmp(400, 60);
    expect(adjusted(c, 0.05, 'holm', 0).verdict).toBe('regression');
    expect(adjusted(c, 0.05, 'holm', 2).verdict).toBe('regression');
    expect(adjusted(c, 0.05, 'holm', 5).verdict).toBe('within-noise');
    expect(adjusted(c, 0.05, 'holm', 5).threshold).toBeCloseTo(500);
    expect(adjusted(cmp(-400, 60), 0.05, 'holm', 2).verdict).toBe('improvement');
  });

  it('adjustPoint: one Holm family over the candidates, one BH family over all their tails', () => {
    const strong = { label: 'a', comparison: [cmp(2000, 300), cmp(50, 300, 'p99')] };
    const weak = Array.from({ length: 7 }, (_, i) => ({
      label: `n${i}`,
      comparison: [cmp(500, 300), cmp(30, 300, 'p99')],
    }));
    const out = adjustPoint([strong, ...weak], 0);
    expect(out[0].comparison[0].verdict).toBe('regression');
    expect(out[0].comparison[0].level).toBeCloseTo(1 - 0.05 / 8);
    // 500/300: p ≈ 0.10, called by nothing; its interval is at the level where Holm stopped.
    for (const w of out.slice(1)) {
      expect(w.comparison[0].verdict).toBe('within-noise');
      expect(w.comparison[0].level).toBeCloseTo(1 - 0.05 / 7);
      expect(w.comparison[1].adjust).toBe('bh');
      expect(w.comparison[1].level).toBeCloseTo(1 - 0.05 / 8); // BH with no rejection: q/m
    }
    // A single candidate: Holm is the plain 95% interval.
    expect(adjustPoint([strong], 0)[0].comparison[0].level).toBeCloseTo(0.95);
  });
});

describe('slice histograms', () => {
  it('encode and decode the sparse bins', () => {
    const bins = [1000, 1001, 1005, 1300];
    const counts = [3, 17, 40, 1];
    expect(encodeBins(bins, counts)).toBe('1000:3 1:17 4:40 295:1');
    expect(decodeBins(encodeBins(bins, counts))).toEqual({ bins, counts });
    expect(decodeBins('')).toEqual({ bins: [], counts: [] });
    expect(decodeBins('12:x')).toBeUndefined();
  });

  it('bins hold a value within 0.55% of their representative value', () => {
    for (const v of [1, 7, 1234, 98_765, 3e7]) expect(Math.abs(binValue(binOf(v)) / v - 1)).toBeLessThan(0.0055);
  });

  it('the quantiles of merged cycles are the pooled samples quantiles (to a bin), not averaged ones', () => {
    const rnd = mulberry32(3);
    // Cycles of very different sizes and scales: the average of per-cycle p99s is far off.
    const samples: number[][] = Array.from({ length: 20 }, (_, j) => {
      const n = j % 5 === 0 ? 20 : 500;
      const scale = j % 5 === 0 ? 20 : 1;
      return Array.from({ length: n }, () => 1000 * scale * Math.exp(rnd()));
    });
    const cycles = samples.map((xs) => {
      const m = new Map<number, number>();
      for (const x of xs) m.set(binOf(x), (m.get(binOf(x)) ?? 0) + 1);
      const bins = [...m.keys()].sort((a, b) => a - b);
      return { bins, counts: bins.map((b) => m.get(b)!) };
    });
    const all = samples.flat().sort((a, b) => a - b);
    const lo = Math.min(...cycles.map((c) => c.bins[0]));
    const hi = Math.max(...cycles.map((c) => c.bins[c.bins.length - 1]));
    const q = bootQuantiles(cycles, [Int32Array.from(cycles.keys())], [lo, hi]);
    for (const [m, p] of [
      ['p50', 0.5],
      ['p90', 0.9],
      ['p99', 0.99],
    ] as const) {
      const exact = all[Math.ceil(p * all.length) - 1];
      expect(Math.abs(q[m][0] / exact - 1), m).toBeLessThan(0.006);
    }
  });
});

describe('tail comparisons from slice cycles', () => {
  /** A strategy of `trials` × `slices` slices of log-normal samples around `median` ns. */
  const strategy = (label: string, median: number, seed: number, perSlice = 300) => {
    const rnd = mulberry32(seed);
    const trials = Array.from({ length: 5 }, (_, index) => {
      const hist: string[] = [];
      const count: number[] = [];
      const mean: number[] = [];
      for (let k = 0; k < 10; k++) {
        const m = new Map<number, number>();
        let sum = 0;
        for (let i = 0; i < perSlice; i++) {
          const x = median * Math.exp(0.3 * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd()));
          sum += x;
          m.set(binOf(x), (m.get(binOf(x)) ?? 0) + 1);
        }
        const bins = [...m.keys()].sort((a, b) => a - b);
        hist.push(
          encodeBins(
            bins,
            bins.map((b) => m.get(b)!),
          ),
        );
        count.push(perSlice);
        mean.push(sum / perSlice);
      }
      return {
        index,
        order: index,
        durationNs: 1e9,
        stages: {},
        counters: {},
        slices: { one_way: { count, mean, hist } },
      };
    });
    return {
      label,
      name: label,
      kind: 'builtin' as const,
      options: {},
      description: '',
      trials,
      merged: {},
      counters: {},
      rates: {},
    };
  };

  it('compares merged quantiles over the 50 cycles, by Woodruff, and finds a 20% shift on every quantile', () => {
    const base = strategy('base', 10_000, 1);
    const slow = strategy('slow', 12_000, 2);
    const same = strategy('same', 10_000, 3);
    const tails = compareTails(base, slow, 'one_way')!;
    expect(tails.map((c) => c.metric)).toEqual(['p50', 'p90', 'p99', 'p99_9']);
    for (const c of tails) {
      expect(c.method).toMatch(/Woodruff.*50 slice cycles/);
      // Never above N − 1; near it at p50 (below), fewer where a cycle's few samples beyond p99.9
      // make its linearised errors lumpy.
      expect(c.df).toBeGreaterThan(2);
      expect(c.df).toBeLessThanOrEqual(49);
      expect(c.ratio).toBeGreaterThan(1.1);
      expect(c.ratio).toBeLessThan(1.3);
    }
    expect(tails.find((c) => c.metric === 'p50')!.verdict).toBe('regression');
    expect(tails.find((c) => c.metric === 'p50')!.df).toBeGreaterThan(30);
    // The same distribution: a small difference, an interval around it.
    const p50 = compareTails(base, same, 'one_way')!.find((c) => c.metric === 'p50')!;
    expect(Math.abs(p50.ratio - 1)).toBeLessThan(0.03);
    expect(p50.se).toBeGreaterThan(0);
    // A side against itself: no spread between cycles, so no interval and no call.
    const self = compareTails(base, base, 'one_way')!;
    expect(self.every((c) => c.diff === 0 && Number.isNaN(c.ciLow) && c.verdict === 'within-noise')).toBe(true);
    // A stage without binned slices: undefined (the caller pairs trials).
    expect(compareTails(base, slow, 'work')).toBeUndefined();
  });

  it('gives no interval, and calls nothing, for a quantile with fewer than 10 samples beyond it on a side', () => {
    // 5 trials × 10 cycles × 10 samples = 500 a side: p90 has 50 beyond it, p99 5, p99.9 0.5.
    const base = strategy('base', 10_000, 11, 10);
    const slow = strategy('slow', 30_000, 12, 10);
    const byMetric = Object.fromEntries(compareTails(base, slow, 'one_way')!.map((c) => [c.metric, c]));
    expect(byMetric.p90.verdict).toBe('regression');
    expect(byMetric.p90.se).toBeGreaterThan(0);
    for (const m of ['p99', 'p99_9']) {
      expect(Number.isNaN(byMetric[m].ciLow), m).toBe(true);
      expect(byMetric[m].verdict, m).toBe('within-noise');
      expect(byMetric[m].method, m).toMatch(/fewer than 10 samples beyond/);
      expect(fmtDelta(byMetric[m]), m).toMatch(/\[no CI: too few samples\]$/);
    }
  });
});

describe('the density window of a tail interval (tails.ts)', () => {
  it('is Hall and Sheather’s bandwidth, over the standard normal quantile', async () => {
    const { normalQuantile } = await import('../../src/report/statistics/tdist.js');
    const { hallSheatherBandwidth } = await import('../../src/report/statistics/tails.js');
    // Φ⁻¹ at a few points (tables of the normal distribution).
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.9)).toBeCloseTo(1.281552, 5);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(Number.isNaN(normalQuantile(1))).toBe(true);
    // n^(−1/3) z^(2/3) (1.5 φ(0)² / 1)^(1/3) at the median of 1000 samples: 0.0972.
    expect(hallSheatherBandwidth(1000, 0.5)).toBeCloseTo(0.0972, 4);
    // Narrower further into the tail, and with more samples.
    expect(hallSheatherBandwidth(1000, 0.99)).toBeLessThan(hallSheatherBandwidth(1000, 0.9));
    expect(hallSheatherBandwidth(8000, 0.9)).toBeCloseTo(hallSheatherBandwidth(1000, 0.9) / 2, 6);
  });
});

describe('the degrees of freedom of a tail interval (tails.ts, kurtosisDf)', () => {
  it('is N − 1 for data no heavier-tailed than a normal, and few when one cycle carries the spread', async () => {
    const { kurtosisDf } = await import('../../src/report/statistics/tails.js');
    // ±1 alternately: excess kurtosis −2, clipped to 0: df = n − 1.
    expect(kurtosisDf(Array.from({ length: 50 }, (_, j) => (j % 2 ? 1 : -1)))).toBe(49);
    // One cycle of 50 far from the rest: m4/m2² ≈ n, so df ≈ 2 / (2/49 + 47/50) ≈ 2.
    const one = Array.from({ length: 50 }, (_, j) => (j === 7 ? 100 : (j % 3) * 0.01));
    const df = kurtosisDf(one);
    expect(df).toBeGreaterThan(1.5);
    expect(df).toBeLessThan(2.5);
    // Satterthwaite's formula as written: 2 / (2/(n−1) + κ/n), κ the sample excess kurtosis.
    const z = [0, 1, 0, 2, 0, 9, 1, 0, 3, 0];
    const m = z.reduce((a, b) => a + b) / z.length;
    const m2 = z.reduce((a, b) => a + (b - m) ** 2, 0) / z.length;
    const m4 = z.reduce((a, b) => a + (b - m) ** 4, 0) / z.length;
    expect(kurtosisDf(z)).toBeCloseTo(2 / (2 / 9 + (m4 / m2 ** 2 - 3) / 10), 10);
  });

  it('widens a tail interval whose cycles hold one deep stall: fewer df, a larger t on the same se', async () => {
    const { woodruffSe } = await import('../../src/report/statistics/tails.js');
    const rnd = mulberry32(5);
    // 50 cycles of 400 samples around 10 µs; in cycle 13 the candidate's slice holds 40 samples 20x slower.
    const side = (stallAt: number) =>
      Array.from({ length: 50 }, (_, j) => {
        const m = new Map<number, number>();
        const n = j === stallAt ? 40 : 400;
        for (let i = 0; i < n; i++) {
          const x =
            10_000 *
            (j === stallAt ? 20 : 1) *
            Math.exp(0.3 * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd()));
          m.set(binOf(x), (m.get(binOf(x)) ?? 0) + 1);
        }
        const bins = [...m.keys()].sort((a, b) => a - b);
        return { bins, counts: bins.map((b) => m.get(b)!) };
      });
    const base = side(-1);
    const calm = woodruffSe(base, side(-1));
    const stalled = woodruffSe(base, side(13));
    expect(calm.p99.df).toBeGreaterThan(20);
    expect(stalled.p99.df).toBeLessThan(10);
    // The N − 1 method gives the same se, on 49 df.
    const old = woodruffSe(base, side(13), { df: 'cycles', density: 'log' });
    expect(old.p99.df).toBe(49);
  });

  it('measures the density on the log scale by default: a smaller se than the linear secant in an exponential tail', async () => {
    const { woodruffSe } = await import('../../src/report/statistics/tails.js');
    const rnd = mulberry32(9);
    // Exponential samples (mean 10 µs): Q(p) = −μ ln(1 − p), convex in p, ln Q much less so.
    const side = () =>
      Array.from({ length: 50 }, () => {
        const m = new Map<number, number>();
        for (let i = 0; i < 2000; i++) {
          const x = 1000 - 10_000 * Math.log(1 - rnd());
          m.set(binOf(x), (m.get(binOf(x)) ?? 0) + 1);
        }
        const bins = [...m.keys()].sort((a, b) => a - b);
        return { bins, counts: bins.map((b) => m.get(b)!) };
      });
    const a = side();
    const b = side();
    const log = woodruffSe(a, b);
    const linear = woodruffSe(a, b, { df: 'kurtosis', density: 'linear' });
    expect(log.p99_9.se).toBeLessThan(linear.p99_9.se);
    expect(log.p99.se).toBeLessThan(linear.p99.se);
  });
});
