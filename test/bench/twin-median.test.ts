/** bench:twin's --rounds: several rounds' answers as one, each figure the median of the rounds'. */
import { describe, expect, it } from 'vitest';
import { roundsRatio } from '../../bench/twin-bar.js';
import { medianDist } from '../../bench/twin-lab.js';

const d = (p50: number, p99: number, n = 10, prompt = 1) => ({ p50, p90: p50, p99, max: p99, n, prompt });

describe('medianDist', () => {
  it('takes each figure’s median over the rounds, and the total count', () => {
    expect(medianDist([d(10, 100), d(30, 5000), d(20, 200, 10, 0.5)])).toEqual({
      p50: 20,
      p90: 20,
      p99: 200,
      max: 200,
      n: 30,
      prompt: 1,
    });
  });
  it('leaves out a round without numbers; with none, gives the first reason', () => {
    expect(medianDist([{ none: 'skipped' }, d(5, 50)])).toEqual(d(5, 50));
    expect(medianDist([{ none: 'no cc' }, { none: 'later' }])).toEqual({ none: 'no cc' });
  });
  it('keeps every round in its place, one without numbers as n 0, so that rounds still pair', () => {
    const r = (p50: number) => ({ ...d(p50, p50), rounds: [{ n: 10, slow: 0, p50, p99: p50 }] });
    const host = medianDist([{ none: 'failed' }, r(100), r(100)]);
    const lab = medianDist([r(100), r(200), { none: 'failed' }]);
    expect('rounds' in host && host.rounds?.map((x) => x.n)).toEqual([0, 10, 10]);
    // only round 2 has both: one pair, no interval (roundsRatio needs two)
    expect(
      roundsRatio('rounds' in host ? (host.rounds ?? []) : [], 'rounds' in lab ? (lab.rounds ?? []) : [], 'p50'),
    ).toBeUndefined();
  });
});
