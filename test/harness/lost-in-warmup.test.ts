/**
 * A hand-off refused while nothing is pending loses its job and strands the CPU's fast pool for
 * the rest of the trial (random.c's MIX_INFLIGHT stays set). When that happens in a trial's
 * warm-up, the measured window shows no hand-off at all; the run must still count the lost jobs
 * (src/harness/round.ts counts handoffs_lost from the warm-up's start) and warn under the table.
 * A new user's strategy that always returned false once finished "completed" with no warning.
 * Mixes that ran off their CPU strand it the same way and are counted from the warm-up too.
 */

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { handoffsLostWarnings } from '../../src/report/run/notes.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';

const refuses = fileURLToPath(new URL('../machine/fixtures/refuses.ts', import.meta.url));

/** inline and `strategy`, one trial of 200 ms after a long warm-up (1.5 s): the fast pools fill (64 interrupts) and strand within it. */
function longWarmup(strategy: string) {
  return runExperiment(
    resolveConfig({
      flags: {
        strategies: ['inline', strategy],
        trials: 1,
        trialMs: 200,
        warmupMs: 1500,
        seed: 3,
        outDir: null,
        until: null,
      },
      cwd: process.cwd(),
    }),
    { calibration: NO_CALIBRATION },
  );
}

describe('hand-offs lost in the warm-up', () => {
  it('are counted in the trial and warned about, though its window saw no hand-off', async () => {
    const r = await longWarmup(refuses);
    expect(r.status).toBe('completed');
    const point = r.points[0];
    const s = point.strategies.find((x) => x.label === 'refuses.ts');
    expect(s).toBeDefined();
    // Every pool was stranded before or in the window: no hand-off accepted, no mix.
    expect(s!.counters.handoffs).toBe(0);
    expect(s!.counters.mixes).toBe(0);
    expect(s!.counters.handoffs_lost).toBeGreaterThan(0);
    const warnings = handoffsLostWarnings(point);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: refuses\.ts refused \d+ hand-offs? while nothing was pending/);
  }, 120_000);

  it('mixes run off their CPU in the warm-up are counted in the trial too', async () => {
    // irq_work on the next CPU: each CPU's first mix runs on the other and is refused (random.c's
    // mix_interrupt_randomness returns on the wrong CPU without clearing the count), which strands
    // that fast pool: the window then sees no hand-off, and the refusals are all in the warm-up.
    const r = await longWarmup('irq_work:target=next');
    expect(r.status).toBe('completed');
    const s = r.points[0].strategies.find((x) => x.label === 'irq_work(target=next)');
    expect(s).toBeDefined();
    expect(s!.counters.handoffs).toBe(0);
    expect(s!.counters.mixes_remote).toBeGreaterThan(0);
  }, 120_000);
});
