/**
 * The setup line's trial count: a run that stopped early (a strategy's fault, Ctrl-C) keeps fewer
 * trials than it asked for, and the line that says "5 trials of 500 ms" says how many finished.
 * A new user's run that stopped at 2 of 5 once printed the 5 alone.
 */
import { describe, expect, it } from 'vitest';
import { setupLine } from '../../src/report/run/setup-line.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const asked = (trialsAsked: number, kept = 2) => {
  const r = syntheticResults({ seed: 5, samples: 40, trials: kept });
  return { ...r, meta: { ...r.meta, options: { ...r.meta.options, trials: trialsAsked, trialMs: 500 } } };
};

describe('the setup line after a run that stopped early', () => {
  it('says how many of the trials asked for finished', () => {
    expect(setupLine(asked(5))).toMatch(
      /5 trials of 500 ms per strategy, interleaved \(2 of them finished: the run stopped early\)/,
    );
  });
  it('says nothing more when every trial finished', () => {
    const line = setupLine(asked(2));
    expect(line).toMatch(/2 trials of 500 ms per strategy/);
    expect(line).not.toContain('finished');
  });
  it('gives the range when the strategies kept different counts', () => {
    const r = asked(5);
    const [first, ...rest] = r.points[0].strategies;
    const uneven = {
      ...r,
      points: [{ ...r.points[0], strategies: [{ ...first, trials: first.trials.slice(0, 1) }, ...rest] }],
    };
    expect(setupLine(uneven)).toContain('(1–2 of them finished: the run stopped early)');
  });
});
