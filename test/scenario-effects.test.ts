/**
 * The scenario verdicts on effect sizes (src/scenarios/effects.ts, random-regression-net.ts) on
 * constructed data: the per-boot effect against the A/A control, the pooled lines, and every
 * verdict class reachable. Expected values are worked out by hand from the formulas.
 */
import { describe, expect, it } from 'vitest';
import { Z90, Z95 } from '../src/report/statistics/meta.js';
import type { PointResult, RunResults, StrategyResult } from '../src/report/types.js';
import { bootsNote } from '../src/scenarios/common.js';
import {
  absenceVerdict,
  bootEffects,
  claimVerdict,
  differenceEffect,
  matchedDifferenceVerdict,
  type PooledEffect,
  pooledDifference,
  pooledEffect,
  smallSampleFactor,
} from '../src/scenarios/effects.js';
import { type NetPoint, observationVerdicts } from '../src/scenarios/random-regression-net.js';
import { withTrials } from './fixtures/trials.js';

/** A strategy whose trials are `[boot, mean]`, indexes in order. */
function booted(label: string, trials: [boot: number, mean: number][]): StrategyResult {
  const s = withTrials(
    label,
    trials.map(([, m], i) => [i, m] as const),
  );
  s.trials.forEach((t, i) => {
    t.boot = trials[i][0];
  });
  return s;
}

describe('bootEffects', () => {
  it('is (candidate − control)/baseline mean per boot, trials paired by index', () => {
    const point: PointResult = {
      params: {},
      strategies: [
        booted('inline', [
          [0, 100],
          [0, 100],
          [1, 200],
          [1, 200],
        ]),
        booted('inline (control)', [
          [0, 100],
          [0, 102],
          [1, 200],
          [1, 200],
        ]),
        booted('workqueue', [
          [0, 110],
          [0, 108],
          [1, 220],
          [1, 230],
        ]),
      ],
    };
    const [b0, b1] = bootEffects(point, 'workqueue', 'inline (control)', 'inline');
    // Boot 0: d = 10/100, 6/100 → 0.08, sd = √((0.02² + 0.02²)/1) = 0.02√2, se = 0.02; two
    // units are one degree of freedom: scaled by t(0.975, 1)/z(0.975) = 12.706/1.960.
    const f = 12.706204736174 / 1.959963984540054;
    expect(smallSampleFactor(2)).toBeCloseTo(f, 3);
    expect(b0).toMatchObject({ boot: 0, n: 2 });
    expect(b0.est).toBeCloseTo(0.08, 12);
    expect(b0.se).toBeCloseTo(0.02 * f, 3);
    // Boot 1: d = 20/200, 30/200 → 0.125; sd = 0.025√2, se = 0.025.
    expect(b1.est).toBeCloseTo(0.125, 12);
    expect(b1.se).toBeCloseTo(0.025 * f, 3);
    expect(bootEffects(point, 'missing', 'inline', 'inline')).toEqual([]);
  });
});

describe('smallSampleFactor', () => {
  it('widens a boot of few paired units to its t interval, and next to nothing at a default run', () => {
    expect(smallSampleFactor(2)).toBeGreaterThan(6);
    expect(smallSampleFactor(10)).toBeCloseTo(2.262 / 1.96, 2);
    expect(smallSampleFactor(50)).toBeLessThan(1.03);
    expect(smallSampleFactor(1)).toBeNaN();
  });
});

describe('pooledDifference', () => {
  it('weighs each unit by its sample count, as the table pools its mean', () => {
    // A: (1·1000 + 9·100)/10 = 190; B: 100; (190 − 100)/100 = 0.9 (unweighted slice means: 4.5).
    // z = 1·(1000 − 190)/10 − 0 = 81 and 9·(100 − 190)/10 = −81; var = 2/1·(81² + 81²) = 26244;
    // se = 162/100.
    const e = pooledDifference(
      [
        { nA: 1, mA: 1000, nB: 5, mB: 100 },
        { nA: 9, mA: 100, nB: 5, mB: 100 },
      ],
      100,
    );
    expect(e.n).toBe(2);
    expect(e.est).toBeCloseTo(0.9, 12);
    expect(e.se).toBeCloseTo(1.62, 12);
  });
  it('reads slice cycles when both sides were sliced alike', () => {
    const s = (label: string, counts: number[], means: number[]): StrategyResult => {
      const r = withTrials(label, [[0, 100]]);
      r.trials[0].slices = { one_way: { count: counts, mean: means } };
      return r;
    };
    const point: PointResult = {
      params: {},
      strategies: [s('inline', [5, 5], [100, 100]), s('ctl', [5, 5], [100, 100]), s('wq', [1, 9], [1000, 100])],
    };
    const [b] = bootEffects(point, 'wq', 'ctl', 'inline');
    expect(b.n).toBe(2);
    expect(b.est).toBeCloseTo(0.9, 12);
    expect(b.se).toBeCloseTo(1.62 * smallSampleFactor(2), 12);
  });
});

/** A pooled effect with the given estimate and standard error (one point, one boot). */
const at = (est: number, se: number): PooledEffect => pooledEffect([[{ est, se }]]);

describe('verdict classes', () => {
  const seed = '"a ~10% regression"';
  it('a claim of a regression: reproduced, contradicted, not reproduced, inconclusive', () => {
    const outcome = (est: number, se: number) => claimVerdict('x', at(est, se), 0.1, seed, 'more').outcome;
    expect(outcome(0.05, 0.02)).toBe('reproduced'); // [0.011, 0.089]
    expect(outcome(-0.05, 0.02)).toBe('contradicted'); // [-0.089, -0.011]
    expect(outcome(0, 0.02)).toBe('not reproduced'); // [-0.039, 0.039] < 0.1
    expect(outcome(0.05, 0.05)).toBe('inconclusive'); // [-0.048, 0.148]
  });
  it('a negative control by equivalence: reproduced, contradicted, inconclusive', () => {
    const outcome = (est: number, se: number) => absenceVerdict('x', at(est, se), 0.1, seed, 'more').outcome;
    expect(outcome(0.03, 0.02)).toBe('reproduced'); // 90% upper 0.063 < 0.1
    expect(outcome(0.2, 0.03)).toBe('contradicted'); // 90% lower 0.151 > 0.1
    expect(outcome(0.08, 0.02)).toBe('inconclusive'); // [0.047, 0.113]
  });
  it('each line prints the pooled effect, its interval, its level and the margin', () => {
    const v = claimVerdict('x', at(0.05, 0.02), 0.1, seed, 'more');
    const lo = ((0.05 - Z95 * 0.02) * 100).toFixed(1);
    const hi = ((0.05 + Z95 * 0.02) * 100).toFixed(1);
    expect(v.detail).toContain(`pooled +5.0% [+${lo}%, +${hi}%] (95% CI; 1 point × 1 boot, DerSimonian-Laird`);
    expect(v.detail).toContain('margin +10.0% (the seed: "a ~10% regression")');
    expect(v.detail).toContain("smaller than the seed's +10.0%"); // 8.9% < 10%
    expect(claimVerdict('x', at(0.08, 0.02), 0.1, seed, 'more').detail).toContain("consistent with the seed's +10.0%");
    const a = absenceVerdict('x', at(0.03, 0.02), 0.1, seed, 'more');
    expect(a.detail).toContain(
      `[${((0.03 - Z90 * 0.02) * 100).toFixed(1)}%, +${((0.03 + Z90 * 0.02) * 100).toFixed(1)}%] (90% CI`,
    );
    expect(a.detail).toContain('margin +10.0%');
  });
});

describe('differenceEffect', () => {
  it('pools per-pair differences; one pair is a − b with variances added', () => {
    // (0.1 − 0.02, √(0.03² + 0.04²)) = (0.08, 0.05).
    const d = differenceEffect([
      [
        { est: 0.1, se: 0.03 },
        { est: 0.02, se: 0.04 },
      ],
    ]);
    expect(d.est).toBeCloseTo(0.08, 12);
    expect(d.se).toBeCloseTo(0.05, 12);
    // Two equal pairs: w = 400 each → se 1/√800.
    const two = differenceEffect([
      [
        { est: 0.1, se: 0.03 },
        { est: 0.02, se: 0.04 },
      ],
      [
        { est: 0.1, se: 0.03 },
        { est: 0.02, se: 0.04 },
      ],
    ]);
    expect(two.est).toBeCloseTo(0.08, 12);
    expect(two.se).toBeCloseTo(1 / Math.sqrt(800), 12);
  });
});

describe("random-regression's observations, pooled", () => {
  /** A part-2 point: its group, size and per-boot effects; the table's fields left unmeasured. */
  const point = (
    observation: NetPoint['group']['observation'],
    nic: NetPoint['group']['nic'],
    instances: number,
    size: number,
    boots: [number, number][],
  ): NetPoint =>
    ({
      group: { nic, instances, trigger: 64, msgSizes: [size], observation },
      size,
      mean: undefined,
      units: boots.map(([est, se], boot) => ({ est, se, boot, n: 8 })),
      tails: [Number.NaN, Number.NaN, Number.NaN],
      irqsPerCpu: Number.NaN,
      handoffs: Number.NaN,
      busyShare: Number.NaN,
      lost: Number.NaN,
      lostInline: Number.NaN,
    }) as NetPoint;

  it('a regression over IPoIB, none over ixgbe or with 8 pairs, and both differences above 0', () => {
    const sizes = [4096, 65536, 1 << 20];
    const pts = [
      ...sizes.map((s) =>
        point('ipoib', 'ipoib-cm', 1, s, [
          [0.1, 0.02],
          [0.1, 0.02],
        ]),
      ),
      ...sizes.map((s) =>
        point('ixgbe', 'ixgbe', 1, s, [
          [0.0, 0.02],
          [0.0, 0.02],
        ]),
      ),
      point('instances', 'ipoib-cm', 8, 65536, [
        [0.0, 0.02],
        [0.0, 0.02],
      ]),
    ];
    const v = observationVerdicts(pts, 3);
    expect(v.map((x) => [x.expectation.replace(/^seed 000: /, ''), x.outcome])).toEqual([
      ['workqueue regresses tcp_lat against inline over IPoIB with one qperf', 'reproduced'],
      ['no such regression with 8 qperf pairs', 'reproduced'],
      ['no such regression over ixgbe Ethernet', 'reproduced'],
      ['the regression over IPoIB exceeds that over ixgbe (IPoIB minus ixgbe)', 'reproduced'],
      ['the regression with one qperf pair exceeds that with 8 (1 pair minus 8)', 'reproduced'],
    ]);
    // IPoIB: 3 points × 2 boots, each point (0.1, 0.02/√2); pooled se = 0.02/√6.
    expect(v[0].detail).toContain('pooled +10.0% [');
    expect(v[0].detail).toContain('3 points × 2 boots');
    // ixgbe minus: 3 matched pairs; the 8-pair difference: 1, at 64K.
    expect(v[3].detail).toContain('3 matched point pairs: ixgbe 4K@64, ixgbe 64K@64, ixgbe 1M@64');
    expect(v[4].detail).toContain('1 matched point pair: ipoib-cm×8 64K@64');
  });

  it("contradicts a negative control whose effect is at least the margin's", () => {
    const pts = [
      point('ipoib', 'ipoib-cm', 1, 4096, [
        [0.1, 0.02],
        [0.1, 0.02],
      ]),
      point('ixgbe', 'ixgbe', 1, 4096, [
        [0.3, 0.02],
        [0.3, 0.02],
      ]),
    ];
    const v = observationVerdicts(pts, 3);
    expect(v.find((x) => x.expectation.includes('ixgbe Ethernet'))?.outcome).toBe('contradicted');
    expect(v.find((x) => x.expectation.includes('IPoIB minus ixgbe'))?.outcome).toBe('contradicted');
    // No 8-pair point: that verdict and its difference say so.
    expect(v.find((x) => x.expectation.includes('8 qperf pairs'))?.outcome).toBe('inconclusive');
  });

  it('boots that disagree widen the interval (two-level variance)', () => {
    const agree = pooledEffect([
      [
        { est: 0.05, se: 0.01 },
        { est: 0.05, se: 0.01 },
      ],
      [
        { est: 0.05, se: 0.01 },
        { est: 0.05, se: 0.01 },
      ],
    ]);
    const disagree = pooledEffect([
      [
        { est: 0.0, se: 0.01 },
        { est: 0.1, se: 0.01 },
      ],
      [
        { est: 0.0, se: 0.01 },
        { est: 0.1, se: 0.01 },
      ],
    ]);
    expect(agree.tau2Boot).toBe(0);
    // Each point: Q = 2·(0.05²/0.0001) = 50, df 1, C = 20000 − 2e8/20000 = 10000; pooled over the
    // two points τ²_boot = (100 − 2)/20000 = 0.0049.
    expect(disagree.tau2Boot).toBeCloseTo(0.0049, 12);
    expect(disagree.est).toBeCloseTo(0.05, 12);
    expect(disagree.se).toBeGreaterThan(3 * agree.se);
  });
});

describe('bootsNote', () => {
  it('says how many boots and trials a point ran on, and nothing for one boot', () => {
    const s = booted('inline', [
      [0, 1],
      [0, 1],
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    const run = { points: [{ params: {}, strategies: [s] }] } as unknown as RunResults;
    expect(bootsNote(run)).toMatch(
      /^each point ran on 2 machine boots: 5 trials per strategy at the first point \(2 \+ 3\)/,
    );
    const one = { points: [{ params: {}, strategies: [withTrials('inline', [[0, 1]])] }] } as unknown as RunResults;
    expect(bootsNote(one)).toBeUndefined();
  });
});

describe('matched differences with a point that has no estimate', () => {
  const NAN = { est: Number.NaN, se: Number.NaN };
  const args = ['+10%', 'more trials', 'nothing matched'] as const;
  it('leaves the pair out and names it, pooling the rest', () => {
    const v = matchedDifferenceVerdict(
      'a minus b',
      [
        [
          { est: 0.05, se: 0.01 },
          { est: 0.0, se: 0.01 },
        ],
        [NAN, { est: 0.0, se: 0.01 }],
      ],
      ['p1', 'p2'],
      0.1,
      ...args,
    );
    expect(v.detail).toContain('1 matched point pair: p1;');
    expect(v.detail).toContain('left out, with no estimate on one side: p2');
    expect(v.detail).not.toMatch(/NaN|n\/a/);
  });
  it('with no pair left: inconclusive, saying why', () => {
    const v = matchedDifferenceVerdict('a minus b', [[NAN, NAN]], ['p1'], 0.1, ...args);
    expect(v.outcome).toBe('inconclusive');
    expect(v.detail).toBe('no matched point pair with an estimate (left out, with no estimate on one side: p1)');
  });
});
