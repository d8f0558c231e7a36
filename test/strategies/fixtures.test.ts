/**
 * Each fixture strategy breaks exactly one rule; the suite fails exactly that check, says why,
 * and passes (or, when the evidence is gone, skips) every other.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHECK,
  type CheckKey,
  type ConformanceReport,
  checkStrategies,
  formatConformance,
} from '../../src/conformance/index.js';
import { ref } from './fixtures/refs.js';

const CASES: [fixture: string, fails: CheckKey, detail: RegExp][] = [
  ['runs-twice', 'exactlyOnce', /\d+ runs found nothing pending \(the work ran more than once per hand-off\)/],
  ['accepts-while-pending', 'whilePending', /\d+ second hand-offs while the first was still pending returned true/],
  ['remote-claims-same', 'where', /(\d+) of \1 runs on another CPU, but the strategy claims cpu 'same'/],
  ['wrong-context', 'where', /\d+ in hardirq context, but the strategy claims context 'softirq'/],
  ['this-flag', 'exactlyOnce', /a hand-off returned false with nothing pending, so its job never ran/],
  [
    'never-runs',
    'exactlyOnce',
    /0 runs: a deferred mix handed off on CPU \d has not run 1000 ms after the run \(an accepted hand-off never ran\)/,
  ],
  ['might-sleep', 'mightSleep', /^BUG: sleeping function called from invalid context \(hardirq\) on CPU \d/],
  [
    'returns-nothing',
    'noFault',
    /^handoff\(\) returned undefined \(no return value\), not a boolean: return true when/,
  ],
  ['bad-handle', 'noFault', /^queueWorkOn: expected a workqueue returned by s\.workqueue\(\) or s\.allocWorkqueue\(\)/],
];

const reports = new Map<string, ConformanceReport>();

beforeAll(async () => {
  const got = await checkStrategies(
    CASES.map(([f]) => ref(`./test/strategies/fixtures/${f}.ts`)),
    { durationMs: 400, drainTimeoutMs: 1000 },
  );
  for (const [i, [f]] of CASES.entries()) reports.set(f, got[i]);
}, 180_000);

describe('a strategy that breaks one rule fails exactly that check', () => {
  it.each(CASES)('%s fails "%s"', (fixture, key, detail) => {
    const r = reports.get(fixture)!;
    const text = formatConformance(r);
    expect(r.passed, text).toBe(false);
    expect(
      r.checks.filter((c) => c.status === 'fail').map((c) => c.name),
      text,
    ).toEqual([CHECK[key]]);
    expect(r.checks.find((c) => c.name === CHECK[key])!.detail, text).toMatch(detail);
  });
});
