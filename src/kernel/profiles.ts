/**
 * Kernel profiles: what differs between the kernels the seeds ran, selected at boot
 * (`--kernel 5.15|6.1|6.9|6.18`). Each setting names its source; the kernel facts themselves are
 * quoted in docs/architecture.md ("Kernel profiles") from the kernel sources.
 *
 *   5.15  seed 000's regression: linux-stable 5.15, bisected to the backport 4a61bf7f9b18 of
 *         "random: defer fast pool mixing to worker". CFS; ksoftirqd_running() defers softirqs
 *         (4cd13c21b207, reverted only in 6.5); no WQ_BH.
 *   6.1   where the tasklet and timer fixes were written and the expired per-CPU timer landed.
 *         Still CFS and still the ksoftirqd rule (6.1.y keeps it); no WQ_BH.
 *   6.9   EEVDF (6.6+), no ksoftirqd rule (6.5+), WQ_BH workqueues (Tejun Heo's "workqueue:
 *         Implement BH workqueues", 6.9). The lab's model before profiles existed.
 *   6.18  the kernel of this project's host (Linux 6.18; bench:twin measures it): EEVDF with
 *         delayed dequeue and DELAY_ZERO (6.12), a 0.70 ms base slice (6.15), RUN_TO_PARITY by
 *         slice protection with update_curr()'s resched once it is over (6.17): eevdf.ts,
 *         EEVDF_6_18, from the 6.18.2 source. Softirqs and workqueues as 6.9.
 * random.c's trigger is 1024 in all three ("random: schedule mix_interrupt_randomness() less
 * often", 534d2eaf1970, 5.19-rc3, backported to the stable branches in June 2022, before seed
 * 000's thread); the bisected 5.15 backport used 64, which the scenarios run beside it.
 */
import type { FairPolicyName } from './sched/fair.js';
import type { SoftirqRules } from './softirq.js';

/** The kernel profiles, newest first, declared once (the CLI, the config and `deferlab list` read them). */
export const KERNEL_NAMES = ['6.18', '6.9', '6.1', '5.15'] as const;
export type KernelName = (typeof KERNEL_NAMES)[number];
/** The default kernel: 6.9, the model the lab had before profiles (EEVDF, WQ_BH). */
export const DEFAULT_KERNEL: KernelName = '6.9';

export interface KernelProfile {
  readonly name: KernelName;
  /** One line for `deferlab list` and setup lines. */
  readonly summary: string;
  /** The fair-class policy: CFS (kernel/sched/fair.c up to 6.5), EEVDF as in 6.6–6.11, or as in 6.18. */
  readonly sched: FairPolicyName;
  readonly softirq: SoftirqRules;
  /** random.c's mix trigger (interrupts per hand-off). */
  readonly trigger: number;
  /** WQ_BH workqueues exist (6.9+): a strategy that needs them is refused on older profiles. */
  readonly wqBh: boolean;
  /**
   * CONFIG_HZ of the distribution kernel the seed ran, when a source gives it: the default of
   * `--hz` under this profile (absent: the lab's default, 250). `--hz` still overrides it.
   */
  readonly hz?: number;
  /**
   * random.c's inline mix at the bisected commit: `inline_trylock` (skip when input_pool.lock is
   * contended) is this profile's "before" (the scenarios' baseline); `inline` blocks on the lock.
   */
  readonly inlineBefore?: 'inline_trylock';
}

/**
 * CONFIG_HZ=1000 (CONFIG_HZ_1000=y) in Oracle's UEK x86_64 config, uek-rpm/ol8/config-x86_64 of
 * github.com/oracle/linux-uek (the stored version, a 6.1.0 config, commit 00821882d789). Seed
 * 000's test team is Oracle's and its client an Oracle X7 server; the thread names the kernel
 * only as "linux-stable v5.15", not its config, so this is the distribution's HZ, not a fact of
 * the seed: a scenario should still sweep 250 and 1000 (docs/architecture.md, "Kernel profiles").
 */
export const SEED_000_DISTRO_HZ = 1000;

export const KERNEL_PROFILES: Readonly<Record<KernelName, KernelProfile>> = {
  '5.15': {
    name: '5.15',
    summary:
      'linux-stable 5.15 (seed 000): CFS, ksoftirqd_running() defers softirqs, no WQ_BH, HZ 1000 by default (Oracle UEK config), inline_trylock the inline of the bisected commit',
    sched: 'cfs',
    softirq: { ksoftirqdDefers: true },
    trigger: 1024,
    wqBh: false,
    hz: SEED_000_DISTRO_HZ,
    inlineBefore: 'inline_trylock',
  },
  '6.1': {
    name: '6.1',
    summary: '6.1 (the tasklet and timer fixes): CFS, ksoftirqd_running() defers softirqs, no WQ_BH',
    sched: 'cfs',
    softirq: { ksoftirqdDefers: true },
    trigger: 1024,
    wqBh: false,
  },
  '6.18': {
    name: '6.18',
    summary:
      '6.18: EEVDF with delayed dequeue (6.12), a 0.70 ms base slice, slice protection (6.17); softirqs and WQ_BH as 6.9; bench:twin checks it against a 6.12+ host kernel',
    sched: 'eevdf-6.18',
    softirq: { ksoftirqdDefers: false },
    trigger: 1024,
    wqBh: true,
  },
  '6.9': {
    name: '6.9',
    summary: '6.9: EEVDF, softirqs at irq exit whatever ksoftirqd does (6.5+), WQ_BH workqueues',
    sched: 'eevdf',
    softirq: { ksoftirqdDefers: false },
    trigger: 1024,
    wqBh: true,
  },
};

export function kernelProfile(name: KernelName = DEFAULT_KERNEL): KernelProfile {
  return KERNEL_PROFILES[name];
}
