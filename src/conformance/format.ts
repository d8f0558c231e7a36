/** Conformance reports as text, for the CLI and tests to print (nothing here prints). */
import type { ConformanceReport } from './suite.js';

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const;

/**
 * One header line, then one line per check:
 *
 *   strategy tasklet: passed (6 of 6 checks)
 *   PASS every accepted hand-off runs the work exactly once (412 hand-offs, 412 runs)
 *   FAIL the work runs where the strategy claims: 37 of 412 runs on another CPU, ...
 *
 * Returns the lines joined with '\n', without a final newline.
 */
export function formatConformance(report: ConformanceReport): string {
  const total = report.checks.length;
  const passed = report.checks.filter((c) => c.status === 'pass').length;
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const head = report.passed
    ? `strategy ${report.strategy}: passed (${passed} of ${total} checks)`
    : `strategy ${report.strategy}: FAILED (${failed} of ${total} checks failed${total - passed - failed ? `, ${total - passed - failed} not evaluated` : ''})`;
  const lines = report.checks.map((c) =>
    c.status === 'fail' ? `${MARK.fail} ${c.name}: ${c.detail}` : `${MARK[c.status]} ${c.name} (${c.detail})`,
  );
  return [head, ...lines, ...(report.notes ?? []).map((n) => `note: ${n}`)].join('\n');
}
