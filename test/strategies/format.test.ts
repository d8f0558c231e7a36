/** formatConformance and claimsOf: pure functions, no machine. */
import { describe, expect, it } from 'vitest';
import type { StrategyClass } from '../../src/api/types.js';
import {
  CHECK,
  type ConformanceReport,
  claimsOf,
  DEFAULT_CLAIMS,
  formatConformance,
} from '../../src/conformance/index.js';

const report = (checks: ConformanceReport['checks']): ConformanceReport => ({
  strategy: 'my.ts(k=1)',
  passed: checks.every((c) => c.passed),
  claims: { ...DEFAULT_CLAIMS },
  checks,
});

describe('formatConformance', () => {
  it('a pass: a header, then PASS name (detail) per check', () => {
    const text = formatConformance(
      report([
        { name: CHECK.exactlyOnce, passed: true, status: 'pass', detail: '412 hand-offs, 412 runs' },
        { name: CHECK.noFault, passed: true, status: 'pass', detail: 'no exception, no kernel BUG, no thread lost' },
      ]),
    );
    expect(text).toBe(
      [
        'strategy my.ts(k=1): passed (2 of 2 checks)',
        'PASS every accepted hand-off runs the work exactly once (412 hand-offs, 412 runs)',
        'PASS the run has no other fault (no exception, no kernel BUG, no thread lost)',
      ].join('\n'),
    );
  });

  it('a failure: FAIL name: detail, SKIP name (why), and the counts in the header', () => {
    const text = formatConformance(
      report([
        { name: CHECK.exactlyOnce, passed: false, status: 'fail', detail: '2 hand-offs, 0 runs: ...' },
        { name: CHECK.whilePending, passed: false, status: 'skip', detail: 'not exercised' },
        { name: CHECK.noFault, passed: true, status: 'pass', detail: 'none' },
      ]),
    );
    expect(text.split('\n')).toEqual([
      'strategy my.ts(k=1): FAILED (1 of 3 checks failed, 1 not evaluated)',
      'FAIL every accepted hand-off runs the work exactly once: 2 hand-offs, 0 runs: ...',
      'SKIP a hand-off while pending returns false and runs nothing extra (not exercised)',
      'PASS the run has no other fault (none)',
    ]);
  });
});

describe('claimsOf', () => {
  const cls = (claims: unknown) => Object.assign(class {}, { claims }) as unknown as StrategyClass;

  it('defaults: the same CPU, any context', () => {
    expect(claimsOf(cls(undefined), 'x.ts')).toEqual({ cpu: 'same', context: 'any' });
    expect(claimsOf(undefined, 'x.ts')).toEqual({ cpu: 'same', context: 'any' });
  });

  it('fills in what a class leaves out', () => {
    expect(claimsOf(cls({ cpu: 'any' }), 'x.ts')).toEqual({ cpu: 'any', context: 'any' });
    expect(claimsOf(cls({ context: 'task' }), 'x.ts')).toEqual({ cpu: 'same', context: 'task' });
  });

  it.each([
    [
      'not an object',
      'same',
      `x.ts: static claims must be an object like { cpu: 'same', context: 'softirq' } (got "same")`,
    ],
    [
      'an unknown key',
      { cpu: 'same', where: 'here' },
      'x.ts: static claims has unknown key where (known: cpu, context)',
    ],
    ['a bad cpu', { cpu: 'local' }, `x.ts: static claims.cpu must be 'same' or 'any' (got "local")`],
    [
      'a bad context',
      { context: 'irq' },
      `x.ts: static claims.context must be one of 'hardirq', 'softirq', 'task', 'any' (got "irq")`,
    ],
  ])('refuses %s', (_what, claims, message) => {
    expect(() => claimsOf(cls(claims), 'x.ts')).toThrow(message);
  });
});
