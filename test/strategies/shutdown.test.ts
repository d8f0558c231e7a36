/** A strategy that never returns from its hand-off fails "shutdown is honoured", and the run still ends. */
import { expect, it } from 'vitest';
import { CHECK, checkStrategy, formatConformance } from '../../src/conformance/index.js';
import { ref } from './fixtures/refs.js';

it('stuck (spins in hardirq) fails "shutdown is honoured" with the watchdog\'s message', async () => {
  const r = await checkStrategy(ref('./test/strategies/fixtures/stuck.ts'), { durationMs: 200, drainTimeoutMs: 500 });
  const text = formatConformance(r);
  expect(
    r.checks.filter((c) => c.status === 'fail').map((c) => c.name),
    text,
  ).toEqual([CHECK.shutdown]);
  expect(r.checks.find((c) => c.name === CHECK.shutdown)!.detail, text).toMatch(
    /^CPU \d passed no preemption point for \d\.\d s\b.*a strategy or callback is stuck/,
  );
}, 120_000);
