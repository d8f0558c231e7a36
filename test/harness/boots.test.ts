/**
 * A point's boots joined into one (src/harness/boots.ts): trials tagged and renumbered so pairs
 * stay within a boot, counters summed, merged histograms holding every boot's samples.
 */
import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../src/config/schema.js';
import { bootConfig, MIN_TRIALS_PER_BOOT, mergeBoots } from '../../src/harness/boots.js';
import { validateResults } from '../../src/report/schema.js';
import { syntheticResults } from '../fixtures/synthetic.js';

describe('mergeBoots', () => {
  const a = syntheticResults({ seed: 1, trials: 3, samples: 200 }).points[0];
  const b = syntheticResults({ seed: 2, trials: 2, samples: 300 }).points[0];
  const m = mergeBoots([a, b]);

  it('keeps every trial, tagged with its boot, indexes continuing after the first boot', () => {
    for (const [i, s] of m.strategies.entries()) {
      expect(s.trials.map((t) => [t.boot, t.index])).toEqual([
        [0, 0],
        [0, 1],
        [0, 2],
        [1, 3],
        [1, 4],
      ]);
      // The second boot's trial values are its own, unchanged.
      expect(s.trials[3].stages.one_way?.mean).toBe(b.strategies[i].trials[0].stages.one_way?.mean);
      // Orders never collide.
      expect(new Set(s.trials.map((t) => t.order)).size).toBe(5);
    }
  });
  it('sums counters and sample counts over the boots', () => {
    for (const [i, s] of m.strategies.entries()) {
      const ca = a.strategies[i].counters.interrupts;
      const cb = b.strategies[i].counters.interrupts;
      expect(s.counters.interrupts).toBe(ca + cb);
      expect(s.merged.one_way?.summary.count).toBe(
        (a.strategies[i].merged.one_way?.summary.count ?? 0) + (b.strategies[i].merged.one_way?.summary.count ?? 0),
      );
      expect(s.comparison).toBeUndefined(); // recomputed over the joined trials by run.ts
    }
  });
  it("keeps each trial's boot through results.json's validation (deferlab report re-reads it)", () => {
    const run = syntheticResults({ seed: 1, trials: 3, samples: 200 });
    run.points = [m];
    const v = validateResults(JSON.parse(JSON.stringify(run)));
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.results.points[0].strategies[0].trials.map((t) => t.boot)).toEqual([0, 0, 0, 1, 1]);
  });
  it('returns a single boot as it is', () => {
    expect(mergeBoots([a])).toBe(a);
  });
});

describe('bootConfig', () => {
  const c = { trials: 3, until: { pct: 10, maxTimeMs: 15000 } } as unknown as ResolvedConfig;
  it('splits the trials (at least 2 a boot) and --max-time over the boots', () => {
    const b = bootConfig(c, 2);
    expect(b.trials).toBe(2);
    expect(b.until?.maxTimeMs).toBe(7500);
    expect(bootConfig({ ...c, trials: 1 } as ResolvedConfig, 3).trials).toBe(MIN_TRIALS_PER_BOOT);
    expect(bootConfig(c, 1)).toBe(c);
  });
});
