/**
 * An A/A copy of the built-in `inline`, written as a user would from docs/strategies.md ("A first
 * strategy": a default-exported class with a description, claims and handoff): bench/aa.ts runs
 * it several times (`bench/strategies/my-inline.ts:copy=1`, `copy=2`, ...) against the built-in
 * inline, so every difference a run calls is a false call. It ignores its options (the copy
 * number only gives each instance its own label).
 */
import type { DeferralStrategy, Deferred, Kernel } from '../../src/api/types.js';

export default class MyInline implements DeferralStrategy {
  static readonly description = 'A/A copy of inline: mix in the hard IRQ handler under input_pool.lock';
  static readonly claims = { cpu: 'same', context: 'hardirq' } as const;

  handoff(k: Kernel, d: Deferred): boolean {
    d.run(k);
    return true;
  }
}
