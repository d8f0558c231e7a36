/** The --until stopping rule (src/harness/until.ts): pure functions over per-trial summaries. */
import { describe, expect, it } from 'vitest';
import { intervalWidths, untilProgress, untilStage, widthsReached } from '../../src/harness/until.js';
import type { StageName } from '../../src/report/types.js';
import { withTrials } from '../fixtures/trials.js';

const strat = (label: string, means: number[], stage: StageName = 'one_way') =>
  withTrials(
    label,
    means.map((m, i) => [i, m] as const),
    stage,
  );

describe('intervalWidths', () => {
  it("is each strategy's Δ-mean half-width as % of the baseline mean", () => {
    const base = strat('inline', [1000, 1000, 1000]);
    const exact = strat('exact', [1100, 1100, 1100]); // identical differences: zero width
    const noisy = strat('noisy', [1000, 1100, 1200]); // d = 0, 100, 200: sd 100, t(2) = 4.3027
    const w = intervalWidths([base, exact, noisy], 'inline');
    expect(Object.keys(w)).toEqual(['exact', 'noisy']);
    expect(w.exact).toBe(0);
    expect(w.noisy).toBeCloseTo(((4.3027 * 100) / Math.sqrt(3) / 1000) * 100, 6);
    expect(widthsReached(w, 30)).toBe(true);
    expect(widthsReached(w, 20)).toBe(false);
  });

  it('is NaN without an interval (one trial), which never counts as reached', () => {
    const w = intervalWidths([strat('a', [1000]), strat('b', [1000])], 'a');
    expect(w.b).toBeNaN();
    expect(widthsReached(w, 100)).toBe(false);
  });

  it('uses handoff_to_start when the baseline has no one_way (irq_only)', () => {
    const base = strat('a', [1000, 1000], 'handoff_to_start');
    expect(untilStage(base)).toBe('handoff_to_start');
    expect(intervalWidths([base, strat('b', [1010, 1030], 'handoff_to_start')], 'a').b).toBeGreaterThan(0);
  });

  it("uses a driver payload's request_to_start before handoff_to_start (cpu-hog: every request, not only the hand-offs)", () => {
    expect(untilStage(strat('a', [1000, 1000], 'request_to_start'))).toBe('request_to_start');
  });
});

describe('untilProgress', () => {
  it('names the widest interval, how many are above the target, and the time left', () => {
    expect(untilProgress(7, { tasklet: 2.1, timer: 6.34, unbound: 4 }, 3, 250_400)).toBe(
      'after 7 rounds, until ±3%: widest ±6.3% (timer), 2 of 3 above; 4m10s left',
    );
    expect(untilProgress(3, { a: Number.NaN, b: 1 }, 3, 9_000)).toBe(
      'after 3 rounds, until ±3%: widest no interval yet (a), 1 of 2 above; 9s left',
    );
  });
});
