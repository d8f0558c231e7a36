/**
 * The comparison method against synthetic data with a known answer (src/report/statistics/calibration.ts):
 * pure, seeded computation, no threads. The bars are the ones docs/results.md states.
 */
import { describe, expect, it } from 'vitest';
import { calibrate } from '../../src/report/statistics/calibration.js';

const rate = (o: { called: number; n: number }) => o.called / o.n;
const coverage = (o: { covered: number; n: number }) => o.covered / o.n;

describe('calibration of the paired-t interval', () => {
  // One simulation shared by the A/A tests: 1000 runs of 5 paired trials, 1000 samples each.
  const aa = calibrate({ comparisons: 1000, trials: 5, samples: 1000, shiftNs: 0, seed: 1 });

  it('over 1000 A/A comparisons, the 95% interval calls a difference 3–7% of the time, for the mean and the tail', () => {
    for (const m of ['mean', 'p50', 'p99', 'p99_9'] as const) {
      expect(aa[m].n, m).toBe(1000);
      expect(rate(aa[m]), m).toBeGreaterThanOrEqual(0.03);
      expect(rate(aa[m]), m).toBeLessThanOrEqual(0.07);
    }
  });

  it('covers a known true shift about 95% of the time (1000 runs, +300 ns on every sample)', () => {
    const shifted = calibrate({ comparisons: 1000, trials: 5, samples: 1000, shiftNs: 300, seed: 2 });
    for (const m of ['mean', 'p50', 'p99', 'p99_9'] as const) {
      expect(coverage(shifted[m]), m).toBeGreaterThanOrEqual(0.93);
      expect(coverage(shifted[m]), m).toBeLessThanOrEqual(0.97);
    }
    // The shift is about one minimum detectable effect for the mean: called often, not always.
    expect(rate(shifted.mean)).toBeGreaterThan(0.4);
    expect(rate(shifted.mean)).toBeLessThan(0.95);
  });

  it('calls an effect of the size "could see" reports most of the time (~70–80%: the power it is defined by)', () => {
    const mde = aa.mean.meanDetectable;
    expect(mde).toBeGreaterThan(aa.mean.meanHalfWidth); // larger than the half-width (50% power)
    const atMde = calibrate({ comparisons: 500, trials: 5, samples: 1000, shiftNs: mde, seed: 3 });
    expect(rate(atMde.mean)).toBeGreaterThanOrEqual(0.6);
    expect(rate(atMde.mean)).toBeLessThanOrEqual(0.9);
    const atHalfWidth = calibrate({
      comparisons: 500,
      trials: 5,
      samples: 1000,
      shiftNs: aa.mean.meanHalfWidth,
      seed: 4,
    });
    expect(rate(atHalfWidth.mean)).toBeLessThan(rate(atMde.mean));
  });

  it('with an A/A control, the noise floor lowers the A/A rate well below 5% and keeps a large effect', () => {
    // 500 runs of 5 trials of 500 samples, a third side (the control) in each: the floor is its interval.
    const floored = calibrate({ comparisons: 500, trials: 5, samples: 500, shiftNs: 0, seed: 5, control: true });
    for (const m of ['mean', 'p50', 'p99', 'p99_9'] as const) {
      expect(floored[m].calledBeyondFloor, m).toBeLessThanOrEqual(floored[m].called);
      expect(floored[m].calledBeyondFloor / floored[m].n, m).toBeLessThanOrEqual(0.02);
    }
    // Twice the smallest effect a 5-trial comparison could see: still called beyond the floor.
    const big = calibrate({
      comparisons: 300,
      trials: 5,
      samples: 500,
      shiftNs: 2 * floored.mean.meanDetectable,
      seed: 6,
      control: true,
    });
    expect(big.mean.calledBeyondFloor / big.mean.n).toBeGreaterThanOrEqual(0.9);
  });

  it('is seeded: the same seed gives the same counts', () => {
    const a = calibrate({ comparisons: 50, trials: 3, samples: 200, shiftNs: 0, seed: 42 });
    const b = calibrate({ comparisons: 50, trials: 3, samples: 200, shiftNs: 0, seed: 42 });
    expect(a).toEqual(b);
  });

  it('sliced trials (5 trials of 10 slices, the mean paired by slice): 3–7% called over 1000 A/A runs, 93–97% coverage of a shift', () => {
    const opts = { comparisons: 1000, trials: 5, slices: 10, samples: 100 };
    const aaSliced = calibrate({ ...opts, shiftNs: 0, seed: 11 });
    const shifted = calibrate({ ...opts, shiftNs: 300, seed: 12 });
    for (const m of ['mean', 'p50', 'p99'] as const) {
      expect(aaSliced[m].n, m).toBe(1000);
      expect(rate(aaSliced[m]), m).toBeGreaterThanOrEqual(0.03);
      expect(rate(aaSliced[m]), m).toBeLessThanOrEqual(0.07);
      expect(coverage(shifted[m]), m).toBeGreaterThanOrEqual(0.93);
      expect(coverage(shifted[m]), m).toBeLessThanOrEqual(0.97);
    }
    // 50 pairs (t 2.01) against 5 (t 2.78) over the same samples: the mean's interval is narrower.
    const whole = calibrate({ comparisons: 1000, trials: 5, samples: 1000, shiftNs: 0, seed: 11 });
    expect(aaSliced.mean.meanHalfWidth).toBeLessThan(whole.mean.meanHalfWidth);
  });
});
