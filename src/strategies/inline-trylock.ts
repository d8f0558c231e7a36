/**
 * `inline_trylock`: mix in the hard-IRQ handler if input_pool.lock is free, skip the mix when it
 * is held — random.c at seed 000's bisected commit, before "random: defer fast pool mixing to
 * worker" (4a61bf7f9b18, the 5.15 backport of 58340f8e952b), whose add_interrupt_randomness() did
 * `if (!spin_trylock(&input_pool.lock)) return;` and left the fast pool's count as it was, so the
 * next interrupt tried again. Trade-off: no hand-off cost and no lock wait in the handler, at the
 * price of mixes skipped under contention (counted as `mixes_trylock_skipped`).
 * `inline` is the same mix blocking on the lock.
 */
import type { DeferralStrategy, Deferred, Kernel } from '../api/types.js';

export class InlineTrylockStrategy implements DeferralStrategy {
  static readonly description =
    'mix in the hard IRQ handler if input_pool.lock is free, else skip until the next interrupt (random.c before 4a61bf7f9b18)';
  static readonly claims = { cpu: 'same', context: 'hardirq' } as const;
  handoff(k: Kernel, d: Deferred): boolean {
    d.tryRun(k);
    return true;
  }
}
