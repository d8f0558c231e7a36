/** bench:twin's --rounds: several rounds' answers as one, each figure the median of the rounds'. */
import { describe, expect, it } from 'vitest';
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
});
