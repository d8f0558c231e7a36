/**
 * What keeps a sweep's memory flat between points (docs/architecture.md, "Memory"): the main
 * thread's garbage collected after each point, and its merge histograms reused, reset, instead of
 * allocated anew per trial.
 */
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/harness/gc.js';
import { releaseHistograms, takeHistogram } from '../../src/machine/machine.js';

describe('collectGarbage', () => {
  it('collects what nothing references any more (without --expose-gc)', async () => {
    expect(typeof (globalThis as { gc?: unknown }).gc, 'this test runs without --expose-gc').toBe('undefined');
    const ref = new WeakRef(new Float64Array(1 << 20));
    // A WeakRef's target lives to the end of the job that made or read it: wait a turn after each.
    await new Promise((r) => setTimeout(r, 0));
    expect(ref.deref(), 'alive until collected').toBeInstanceOf(Float64Array);
    await new Promise((r) => setTimeout(r, 0));
    collectGarbage();
    expect(ref.deref(), 'collected').toBeUndefined();
  });
});

describe('takeHistogram / releaseHistograms', () => {
  it('hands a released histogram out again, reset, and new ones when none is spare', () => {
    const a = takeHistogram();
    a.recordValue(12_345);
    a.recordValue(99);
    const b = takeHistogram();
    expect(b).not.toBe(a);
    releaseHistograms([a, undefined]);
    const again = takeHistogram();
    expect(again).toBe(a);
    expect(again.totalCount).toBe(0);
    expect(again.maxValue).toBe(0);
    again.recordValue(7);
    expect(again.totalCount).toBe(1);
    expect(takeHistogram(), 'none spare: a new one').not.toBe(a);
  });
});
