/**
 * The watchdog names the context a stuck callback runs in (src/machine/memory.ts whereOf, from
 * the CPU_WHERE value src/kernel/objects.ts sets): a tasklet's callback is softirq context, an
 * irq_work's hardirq, as the kernel runs them (tasklet_action in TASKLET_SOFTIRQ; irq_work_run
 * from the IPI's handler). Until 2026-12-07 every callback was reported as task context.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';

const fixture = resolve(__dirname, 'fixtures/callback-loops.ts');

describe('the watchdog names a stuck callback and its context', () => {
  for (const [where, kind, context] of [
    ['tasklet', 'tasklet', 'softirq'],
    ['irq_work', 'irq_work', 'hardirq'],
  ] as const) {
    it(`${kind}: context ${context}`, async () => {
      const config = resolveConfig({
        flags: {
          strategies: [`${fixture}:where=${where}`],
          trials: 1,
          trialMs: '200ms',
          warmupMs: '20ms',
          seed: 1,
          outDir: null,
          watchdogMs: '500ms',
        },
        cwd: process.cwd(),
      });
      const r = await runExperiment(config, { calibration: NO_CALIBRATION });
      expect(r.status).toBe('failed');
      expect(r.error?.message).toMatch(new RegExp(`in the callback of ${kind} "spin/\\d"`));
      expect(r.error?.context).toBe(context);
    }, 60_000);
  }
});
