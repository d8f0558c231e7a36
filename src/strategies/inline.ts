/**
 * `inline`: mix in the hard-IRQ handler itself, under input_pool.lock — random.c before the
 * RT change. Trade-off: no hand-off cost at all, but the interrupt handler holds a spinlock
 * and runs the whole BLAKE2s update with interrupts off (what PREEMPT_RT objects to).
 */
import type { DeferralStrategy, Deferred, Kernel } from '../api/types.js';

export class InlineStrategy implements DeferralStrategy {
  static readonly description =
    'mix in the hard IRQ handler under input_pool.lock (pre-RT random.c): no hand-off, longest hardirq';
  static readonly claims = { cpu: 'same', context: 'hardirq' } as const;
  handoff(k: Kernel, d: Deferred): boolean {
    d.run(k);
    return true;
  }
}
