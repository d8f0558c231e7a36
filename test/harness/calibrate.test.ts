/**
 * The calibration measured for real (two threads from TypeScript source, the real Doorbell, the
 * real scheduler path): every figure present, finite and positive, and the block valid in
 * results. Never asserts what a timing is: only that it was measured.
 */
import { describe, expect, it } from 'vitest';
import { calibrate, finishCalibration } from '../../src/harness/calibrate.js';
import { quantileInPlace } from '../../src/harness/calibrate-work.js';
import { validateResults } from '../../src/report/schema.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const TIMINGS = [
  'futexWakeP50Ns',
  'futexWakeP99Ns',
  'handoffP50Ns',
  'handoffP99Ns',
  'sameThreadSwitchNs',
  'clockReadNs',
  'histRecordNs',
  'durationMs',
] as const;

describe('calibrate()', () => {
  it('measures every figure: finite and positive, on real threads', async () => {
    const c = await calibrate();
    for (const k of TIMINGS) {
      expect(Number.isFinite(c[k]), k).toBe(true);
      expect(c[k], k).toBeGreaterThan(0);
    }
    expect(c.futexWakeP99Ns).toBeGreaterThanOrEqual(c.futexWakeP50Ns);
    expect(c.handoffP99Ns).toBeGreaterThanOrEqual(c.handoffP50Ns);
    expect(c.hostCores).toBeGreaterThanOrEqual(1);
    expect(c.cpuModel.length).toBeGreaterThan(0);
    expect(c.loadAvgStart).toHaveLength(3);
    finishCalibration(c);
    expect(c.loadAvgEnd).toHaveLength(3);
    for (const x of [...c.loadAvgStart, ...c.loadAvgEnd]) expect(x).toBeGreaterThanOrEqual(0);

    const r = syntheticResults({ samples: 20, trials: 1 });
    r.meta.calibration = c;
    expect(validateResults(JSON.parse(JSON.stringify(r))).ok).toBe(true);
  }, 60_000);
});

describe('calibrate() and an abort', () => {
  it('an aborted signal rejects at once, starting no thread', async () => {
    await expect(calibrate(AbortSignal.abort())).rejects.toThrow('calibration interrupted');
  });
});

describe('quantileInPlace', () => {
  it('takes the nearest-rank quantile of the first n values', () => {
    const xs = Float64Array.from([9, 1, 8, 2, 7, 3, 6, 4, 5, 10, 99]);
    expect(quantileInPlace(xs, 10, 0.5)).toBe(5);
    expect(quantileInPlace(xs, 10, 0.99)).toBe(10);
    expect(quantileInPlace(xs, 10, 0)).toBe(1);
    expect(xs[10]).toBe(99); // beyond n: untouched
  });
});
