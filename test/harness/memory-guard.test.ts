/**
 * The watchdog's memory guard (src/harness/watchdog.ts): a run whose process holds more memory
 * than the limit ends as a fault with what it measured kept, instead of being killed by the
 * kernel's OOM killer with nothing written. A limit of 1 byte makes any run cross it; no memory
 * figure is asserted.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';

describe('memory guard', () => {
  it('a run past the memory limit ends failed, naming the limit and the strategy in force', async () => {
    const config = resolveConfig({
      flags: {
        strategies: ['inline'],
        trials: 2,
        trialMs: '200ms',
        warmupMs: '20ms',
        seed: 1,
        outDir: null,
      },
      cwd: process.cwd(),
    });
    const r = await runExperiment(config, { calibration: NO_CALIBRATION, rssLimitBytes: 1 });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(/GiB of memory, past the watchdog's limit/);
    expect(r.error?.message).toMatch(/strategy inline in force/);
  }, 60_000);
});
