/**
 * bench:twin's bar (bench/twin-bar.ts): the share ratio's interval and its verdict against
 * 0.5–2x. Pure: counts in, numbers out; the figures checked by hand (Katz's log interval with 0.5
 * added to each cell).
 */
import { describe, expect, it } from 'vitest';
import { barVerdict, dispersion, roundsRatio, slowShareRatio } from '../../bench/twin-bar.js';

const rounds = (n: number, slow: number[]) => slow.map((x) => ({ n, slow: x }));

describe('dispersion', () => {
  it('is 1 for one round, for rounds that agree, and for no slow wake-up at all', () => {
    expect(dispersion(rounds(1000, [12]))).toBe(1);
    expect(dispersion(rounds(1000, [10, 10, 10]))).toBe(1);
    expect(dispersion(rounds(1000, [0, 0, 0]))).toBe(1);
    // a round without numbers (n 0: medianDist's placeholder) is left out, not a NaN
    expect(dispersion([{ n: 0, slow: 0 }, ...rounds(1000, [1, 1, 28])])).toBeCloseTo(486 / 9.9 / 2, 6);
  });
  it("is Pearson's χ² over k − 1 when the rounds swing more than binomial draws", () => {
    // pooled p = 0.01; χ² = (81 + 81 + 324) / 9.9 = 49.09; over 2 df: 24.5
    expect(dispersion(rounds(1000, [1, 1, 28]))).toBeCloseTo(486 / 9.9 / 2, 6);
  });
});

describe('slowShareRatio', () => {
  it("gives Katz's interval on the pooled shares (8 against 12 in 1000: 0.62–3.50)", () => {
    const r = slowShareRatio(rounds(1000, [8]), rounds(1000, [12]));
    expect(r?.ratio).toBeCloseTo(1.5, 9);
    expect(r?.lo).toBeCloseTo(0.618, 3);
    expect(r?.hi).toBeCloseTo(3.5, 2);
    expect(r?.verdict).toBe('undecided');
  });
  it('is inside when the whole interval is within 0.5–2x, outside when none of it is', () => {
    expect(slowShareRatio(rounds(10000, [100, 100, 100]), rounds(10000, [110, 100, 105]))?.verdict).toBe('inside');
    expect(slowShareRatio(rounds(10000, [100, 100, 100]), rounds(10000, [10, 12, 9]))?.verdict).toBe('outside');
  });
  it('widens with the rounds’ spread: the same pooled counts, swung apart, no longer decide', () => {
    const even = slowShareRatio(rounds(1000, [20, 20, 20]), rounds(1000, [2, 3, 2]));
    const swung = slowShareRatio(rounds(1000, [2, 2, 56]), rounds(1000, [0, 0, 7]));
    expect(even?.verdict).toBe('outside');
    expect(swung?.ratio).toBeCloseTo(even?.ratio ?? 0, 9);
    expect((swung?.hi ?? 0) - (swung?.lo ?? 0)).toBeGreaterThan((even?.hi ?? 0) - (even?.lo ?? 0));
    expect(swung?.verdict).toBe('undecided');
  });
  it('still has an interval when a side saw no slow wake-up, and none without wake-ups', () => {
    const r = slowShareRatio(rounds(1000, [0, 0, 0]), rounds(1000, [10, 10, 10]));
    // no slow host wake-up: x/0 has no ratio, so the corrected one, inside its own interval
    expect(Number.isFinite(r?.ratio)).toBe(true);
    expect(r?.ratio).toBeGreaterThanOrEqual(r?.lo ?? Number.NaN);
    expect(r?.ratio).toBeLessThanOrEqual(r?.hi ?? Number.NaN);
    const none = slowShareRatio(rounds(1000, [0]), rounds(1000, [0]));
    expect(none?.ratio).toBeCloseTo(1, 9); // 0/0: (0.5/1001)/(0.5/1001)
    expect(none?.verdict).toBe('undecided');
    const labNone = slowShareRatio(rounds(1000, [5, 6, 4]), rounds(1000, [0, 0, 0]));
    expect(labNone?.ratio).toBeGreaterThan(0); // not 0, which would lie below its own interval
    expect(labNone?.ratio).toBeGreaterThanOrEqual(labNone?.lo ?? Number.NaN);
    expect(r?.lo).toBeGreaterThan(2);
    expect(r?.verdict).toBe('outside');
    expect(slowShareRatio([], rounds(1000, [1]))).toBeUndefined();
  });
});

describe('barVerdict', () => {
  it('reads the ends as inside', () => {
    expect(barVerdict(0.5, 2)).toBe('inside');
    expect(barVerdict(0.49, 1)).toBe('undecided');
    expect(barVerdict(2.01, 3)).toBe('outside');
    expect(barVerdict(0.1, 0.49)).toBe('outside');
  });
});

describe('roundsRatio: a figure lab/host over the rounds run in the same minute', () => {
  const r = (p50s: number[]) => p50s.map((p50) => ({ n: 1000, slow: 0, p50, p99: p50 * 2 }));
  it("gives the rounds' geometric mean and Student's t interval on their log ratios (worked by hand)", () => {
    // logs ln 1.5, ln 2, ln 1.2: mean 0.42698, sd 0.25609; t(0.975, 2) 4.3027 × sd/√3 = 0.63617
    const x = roundsRatio(r([100, 100, 100]), r([150, 200, 120]), 'p50');
    expect(x?.ratio).toBeCloseTo(1.5326, 3);
    expect(x?.lo).toBeCloseTo(0.8112, 3);
    expect(x?.hi).toBeCloseTo(2.8955, 3);
    expect(x?.verdict).toBe('undecided');
    expect(x?.rounds).toBe(3);
  });
  it('pairs round i with round i: inside when they agree, outside when all are far', () => {
    expect(roundsRatio(r([100, 200, 50]), r([150, 310, 72]), 'p99')?.verdict).toBe('inside');
    expect(roundsRatio(r([100, 100, 100]), r([300, 310, 290]), 'p50')?.verdict).toBe('outside');
  });
  it('needs two rounds with the figure on both sides', () => {
    expect(roundsRatio(r([100]), r([150]), 'p50')).toBeUndefined();
    // a round missing on one side (medianDist leaves out a round without numbers): no pairing
    expect(roundsRatio(r([100, 100, 100]), r([150, 150]), 'p50')).toBeUndefined();
    expect(roundsRatio([{ n: 1, slow: 0 }, ...r([100])], r([150, 150]), 'p50')).toBeUndefined();
  });
});
