/**
 * What keeps a sweep's memory flat between points (docs/architecture.md, "Memory"): the main
 * thread's garbage collected after each point, and its merge histograms reused, reset, instead of
 * allocated anew per trial.
 */
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/harness/gc.js';
import { GrowthCollector } from '../../src/machine/full-gc.js';
import { releaseHistograms, takeHistogram } from '../../src/machine/histogram-pool.js';

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

describe("GrowthCollector (a machine thread at a trial's end)", () => {
  it('collects only once resident memory grew past the bound since its last collection', () => {
    let rss = 1000;
    let collected = 0;
    const g = new GrowthCollector(
      () => rss,
      () => {
        collected++;
        rss -= 50; // a collection frees some of what leaked
      },
      100,
    );
    expect(g.atPause(), 'no growth').toBe(false);
    rss = 1099;
    expect(g.atPause(), 'just below the bound').toBe(false);
    rss = 1100;
    expect(g.atPause(), 'at the bound').toBe(true);
    expect(collected).toBe(1);
    // The bound counts from what was resident after that collection (1050), not from the start.
    rss = 1149;
    expect(g.atPause()).toBe(false);
    rss = 1150;
    expect(g.atPause()).toBe(true);
    expect([collected, g.collections]).toEqual([2, 2]);
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
