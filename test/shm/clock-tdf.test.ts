/**
 * Time dilation in src/clock.ts: the emulated clock reads host ns / TDF, an emulated span is
 * waited on the host as TDF times as long, and bad factors are refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clockTdf, exactNowNs, hostNowNs, hostWaitMs, initClock, newEpoch, nowNs } from '../../src/clock.js';

afterEach(() => initClock(newEpoch(), 1));

describe('the dilated clock', () => {
  it.each([1, 2, 3.5, 16])('at TDF %d, nowNs() lies between the host readings around it, divided by TDF', (tdf) => {
    initClock(newEpoch(), tdf);
    expect(clockTdf()).toBe(tdf);
    for (let i = 0; i < 200; i++) {
      const h0 = hostNowNs();
      const e = nowNs();
      const h1 = hostNowNs();
      // Same performance.now() source and offset: exact up to rounding of the division.
      expect(e).toBeGreaterThanOrEqual(h0 / tdf - 1e-3);
      expect(e).toBeLessThanOrEqual(h1 / tdf + 1e-3);
    }
    const a = hostNowNs();
    const x = exactNowNs();
    const b = hostNowNs();
    const slack = 1e5; // two clocks (hrtime vs performance.now): their calibration error, generously
    expect(x).toBeGreaterThanOrEqual((a - slack) / tdf);
    expect(x).toBeLessThanOrEqual((b + slack) / tdf);
  });

  it('an emulated span is waited TDF times as long on the host', () => {
    initClock(newEpoch(), 1);
    expect(hostWaitMs(2_000_000)).toBe(2);
    initClock(newEpoch(), 4);
    expect(hostWaitMs(2_000_000)).toBe(8);
    expect(hostWaitMs(250_000)).toBe(1);
    expect(hostWaitMs(0)).toBe(0);
    expect(hostWaitMs(-5_000)).toBe(0); // already due: no wait
    expect(hostWaitMs(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuses a factor below 1 or not finite', () => {
    for (const bad of [0, 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => initClock(newEpoch(), bad)).toThrow(/time dilation factor must be ≥ 1/);
    expect(clockTdf()).toBe(1); // a refused factor leaves the clock as it was
  });
});
