/**
 * The driver payload's work per run (src/random/driver.ts driverWorkAt): workNs every run, or,
 * given a measured sequence (bench:twin's host waker's CPU per cycle), each run's value in order,
 * cycled; never below 1 ns.
 */
import { describe, expect, it } from 'vitest';
import { driverWorkAt } from '../../src/random/driver.js';

describe('driverWorkAt', () => {
  it('gives workNs at every run without a sequence, or with an empty one', () => {
    for (const run of [0, 1, 999]) {
      expect(driverWorkAt({ workNs: 20_000 }, run)).toBe(20_000);
      expect(driverWorkAt({ workNs: 20_000, workSeqNs: [] }, run)).toBe(20_000);
    }
  });
  it("gives the sequence's values in order, cycled, not workNs", () => {
    const p = { workNs: 20_000, workSeqNs: Float64Array.from([42_600, 57_800, 73_500]) };
    expect([0, 1, 2, 3, 4, 5, 7].map((r) => driverWorkAt(p, r))).toEqual([
      42_600, 57_800, 73_500, 42_600, 57_800, 73_500, 57_800,
    ]);
  });
  it('never asks for less than 1 ns of work', () => {
    expect(driverWorkAt({ workNs: 0 }, 0)).toBe(1);
    expect(driverWorkAt({ workNs: 5, workSeqNs: [0] }, 0)).toBe(1);
  });
});
