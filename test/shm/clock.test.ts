/**
 * The shared clock: readings from two threads can be subtracted. A worker's nowNs() taken
 * during a round trip lies between the main thread's readings before and after it, within the
 * two threads' calibration errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clockCalibrationErrorNs, exactNowNs, initClock, newEpoch, nowNs } from '../../src/clock.js';
import type { ClockWorkerData } from './fixtures/protocol.js';
import { nextMessage, request, Threads } from './helpers.js';

const threads = new Threads();
afterEach(() => threads.terminateAll());

describe('clock across threads', () => {
  it("a worker's nowNs() during a round trip lies between the main thread's readings around it", async () => {
    const epoch = newEpoch();
    initClock(epoch);
    const w = threads.spawn('clock-worker', { epoch } satisfies ClockWorkerData);
    await nextMessage(w, 'ready');
    const mainErr = clockCalibrationErrorNs();
    expect(Number.isFinite(mainErr)).toBe(true);
    for (let i = 0; i < 50; i++) {
      const before = nowNs();
      const r = await request<{ ns: number; errNs: number }>(w, 'read', 'now');
      const after = nowNs();
      const slack = mainErr + r.errNs;
      const what = `round ${i}: before ${before}, worker ${r.ns}, after ${after}, slack ${slack} ns`;
      expect(r.ns, what).toBeGreaterThanOrEqual(before - slack);
      expect(r.ns, what).toBeLessThanOrEqual(after + slack);
    }
  });

  it('nowNs() agrees with the exact hrtime reading within the calibration error', () => {
    initClock(newEpoch());
    const err = clockCalibrationErrorNs();
    for (let i = 0; i < 100; i++) {
      const a = exactNowNs();
      const b = nowNs();
      const c = exactNowNs();
      expect(b).toBeGreaterThanOrEqual(a - err);
      expect(b).toBeLessThanOrEqual(c + err);
    }
  });
});
