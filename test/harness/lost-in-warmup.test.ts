/**
 * A hand-off refused while nothing is pending loses its job and strands the CPU's fast pool for
 * the rest of the trial (random.c's MIX_INFLIGHT stays set). When that happens in a trial's
 * warm-up, the measured window shows no hand-off at all; the run must still count the lost jobs
 * (src/harness/round.ts counts handoffs_lost from the warm-up's start) and warn under the table.
 * A new user's strategy that always returned false once finished "completed" with no warning.
 */

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { handoffsLostWarnings } from '../../src/report/run/notes.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';

const refuses = fileURLToPath(new URL('../machine/fixtures/refuses.ts', import.meta.url));

describe('hand-offs lost in the warm-up', () => {
  it('are counted in the trial and warned about, though its window saw no hand-off', async () => {
    const r = await runExperiment(
      resolveConfig({
        // A long warm-up: the fast pools fill (64 interrupts) and are refused within it.
        flags: {
          strategies: ['inline', refuses],
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
});
