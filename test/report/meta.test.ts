/**
 * The pooling and equivalence arithmetic of src/report/statistics/meta.ts on constructed data,
 * each expected value worked out by hand from the formulas (shown beside it).
 */
import { describe, expect, it } from 'vitest';
import {
  difference,
  directional,
  dlMoments,
  equivalence,
  fixedEffect,
  interval,
  randomEffects,
  twoLevel,
  Z90,
  Z95,
} from '../../src/report/statistics/meta.js';

describe('fixedEffect and randomEffects', () => {
  it('pools by inverse variance: homogeneous units leave τ² at 0', () => {
    // w = 400, 400, 100; Σw 900; Σwy = 40 + 0 + 5 = 45 → 0.05; se 1/30; Q = 1 + 1 + 0 = 2 = df.
    const units = [
      { est: 0.1, se: 0.05 },
      { est: 0, se: 0.05 },
      { est: 0.05, se: 0.1 },
    ];
    const f = fixedEffect(units);
    expect(f.est).toBeCloseTo(0.05, 12);
    expect(f.se).toBeCloseTo(1 / 30, 12);
    expect(f.q).toBeCloseTo(2, 12);
    const r = randomEffects(units);
    expect(r.tau2).toBe(0);
    expect(r.est).toBeCloseTo(0.05, 12);
    expect(r.se).toBeCloseTo(1 / 30, 12);
  });
  it('adds the DerSimonian-Laird τ² when the units disagree', () => {
    // w = 400, 400; est 0.1; Q = 400·0.01·2 = 8; df 1; C = 800 − 320000/800 = 400;
    // τ² = (8 − 1)/400 = 0.0175; w* = 1/(0.0025 + 0.0175) = 50 each; se = 1/√100 = 0.1.
    const units = [
      { est: 0.2, se: 0.05 },
      { est: 0, se: 0.05 },
    ];
    expect(dlMoments(units)).toEqual({ q: expect.closeTo(8, 10), df: 1, c: expect.closeTo(400, 8) });
    const r = randomEffects(units);
    expect(r.tau2).toBeCloseTo(0.0175, 12);
    expect(r.est).toBeCloseTo(0.1, 12);
    expect(r.se).toBeCloseTo(0.1, 12);
    expect(r.k).toBe(2);
    // The fixed-effect se would be 1/√800: the random-effects interval is wider.
    expect(fixedEffect(units).se).toBeCloseTo(1 / Math.sqrt(800), 12);
  });
  it('skips unusable units and says NaN with none', () => {
    const r = randomEffects([
      { est: Number.NaN, se: 0.1 },
      { est: 0.1, se: Number.NaN },
      { est: 0.3, se: 0.1 },
    ]);
    expect(r.k).toBe(1);
    expect(r.est).toBeCloseTo(0.3, 12);
    expect(randomEffects([]).est).toBeNaN();
  });
});

describe('twoLevel', () => {
  it('pools one between-boot τ² over the points, then each point over its boots', () => {
    // Point 1: Q 8, df 1, C 400 (above); point 2: equal boots, Q 0, df 1, C 400.
    // τ²_boot = (8 − 2)/800 = 0.0075; each boot's weight 1/(0.0025 + 0.0075) = 100;
    // each point: est 0.1, se 1/√200.
    const t = twoLevel([
      [
        { est: 0.2, se: 0.05 },
        { est: 0, se: 0.05 },
      ],
      [
        { est: 0.1, se: 0.05 },
        { est: 0.1, se: 0.05 },
      ],
    ]);
    expect(t.tau2Boot).toBeCloseTo(0.0075, 12);
    for (const p of t.points) {
      expect(p.est).toBeCloseTo(0.1, 12);
      expect(p.se).toBeCloseTo(1 / Math.sqrt(200), 12);
    }
  });
  it('with one boot per point is each boot as it is (no between-boot degrees of freedom)', () => {
    const t = twoLevel([[{ est: 0.2, se: 0.05 }], [{ est: 0.1, se: 0.02 }]]);
    expect(t.tau2Boot).toBe(0);
    expect(t.points.map((p) => [p.est, p.se])).toEqual([
      [expect.closeTo(0.2, 12), expect.closeTo(0.05, 12)],
      [expect.closeTo(0.1, 12), expect.closeTo(0.02, 12)],
    ]);
  });
});

describe('interval and difference', () => {
  it('is est ± z·se; a difference of independent estimates adds variances', () => {
    expect(interval({ est: 0.1, se: 0.01 })).toEqual({
      low: expect.closeTo(0.1 - Z95 * 0.01, 12),
      high: expect.closeTo(0.1 + Z95 * 0.01, 12),
    });
    expect(interval({ est: 0, se: 1 }, Z90).high).toBeCloseTo(1.6448536, 6);
    // (0.1 − 0.02, √(0.03² + 0.04²)) = (0.08, 0.05).
    const d = difference({ est: 0.1, se: 0.03 }, { est: 0.02, se: 0.04 });
    expect(d.est).toBeCloseTo(0.08, 12);
    expect(d.se).toBeCloseTo(0.05, 12);
  });
});

describe('directional', () => {
  it('reaches each of its four answers', () => {
    // 0.05 ± 1.96·0.02 = [0.0108, 0.0892]: excludes 0 above.
    expect(directional({ est: 0.05, se: 0.02 }, 0.1)).toBe('shown');
    expect(directional({ est: -0.05, se: 0.02 }, 0.1)).toBe('opposite');
    // [−0.0392, 0.0392]: below the seed's 0.1 without excluding 0.
    expect(directional({ est: 0, se: 0.02 }, 0.1)).toBe('ruled out');
    // [−0.048, 0.148]: neither.
    expect(directional({ est: 0.05, se: 0.05 }, 0.1)).toBe('open');
    expect(directional({ est: Number.NaN, se: 0.05 }, 0.1)).toBe('open');
  });
  it('turns round for a claim downwards', () => {
    expect(directional({ est: -0.05, se: 0.02 }, 0.1, false)).toBe('shown');
    expect(directional({ est: 0.05, se: 0.02 }, 0.1, false)).toBe('opposite');
  });
});

describe('equivalence (one-sided tests at 5%: the 90% interval against the margin)', () => {
  it('reaches each of its three answers', () => {
    // 0.03 + 1.645·0.02 = 0.0629 < 0.1.
    expect(equivalence({ est: 0.03, se: 0.02 }, 0.1)).toBe('equivalent');
    // 0.2 − 1.645·0.03 = 0.1507 > 0.1.
    expect(equivalence({ est: 0.2, se: 0.03 }, 0.1)).toBe('exceeds');
    // [0.0471, 0.1129] straddles 0.1.
    expect(equivalence({ est: 0.08, se: 0.02 }, 0.1)).toBe('open');
  });
  it('uses the 90% bound, not the 95%: a case between the two is equivalent', () => {
    // 90%: 0.06 + 1.645·0.023 = 0.0978 < 0.1; 95%: 0.06 + 1.96·0.023 = 0.1051.
    const e = { est: 0.06, se: 0.023 };
    expect(equivalence(e, 0.1)).toBe('equivalent');
    expect(interval(e).high).toBeGreaterThan(0.1);
  });
});
