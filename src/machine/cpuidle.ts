/**
 * cpuidle's vocabulary and the haltpoll governor's parameters: the idle policies a machine can
 * run (`--idle`, MachineOptions.idle) and how each decides between polling and halting. The
 * idle task that acts on them is in idle.ts (its header describes each policy).
 */

/** The idle policies, declared once: the CLI, the config and the help read this list. */
export const IDLE_POLICIES = ['haltpoll', 'poll', 'halt'] as const;
export type IdlePolicyName = (typeof IDLE_POLICIES)[number];

/** guest_halt_poll_ns (drivers/cpuidle/governors/haltpoll.c): the longest poll, 200 µs. */
export const HALTPOLL_MAX_NS = 200_000;
/** guest_halt_poll_grow / guest_halt_poll_shrink: 2 and 2. */
export const HALTPOLL_GROW = 2;
export const HALTPOLL_SHRINK = 2;
/** guest_halt_poll_grow_start: a growing limit starts at 50 µs. */
export const HALTPOLL_GROW_START_NS = 50_000;
/** idle=poll re-checks the control region and the clock this often (it never halts). */
export const POLL_SLICE_NS = 1_000_000;
/**
 * How long before a due interrupt a halted CPU asks to be woken, under poll and haltpoll: a
 * timed Atomics.wait oversleeps ~0.1 ms on this kind of host (TOOLCHAIN.md: a 10 µs wait sleeps
 * ~111 µs p50), so the CPU sleeps until this much before the due time and polls the rest, and
 * takes the interrupt on time, as a polling idle CPU would. Under `halt` it sleeps until the due
 * time and the oversleep is what idle_exit reports.
 */
export const IDLE_WAKE_EARLY_NS = 150_000;

/**
 * Idle periods known to end sooner than this poll instead of halting, under every policy: the
 * target residency of the shallowest halt state worth entering (intel_idle's C1E: 20 µs on
 * Skylake-class parts, drivers/idle/intel_idle.c); the menu and teo governors pick the poll state
 * for predicted idle times below it. What ends them is known here (a NIC's next packet on the
 * wire, a due arrival), so the prediction is exact; a timed Atomics.wait would oversleep it by
 * the host's timer slack (~0.1 ms) instead.
 */
export const SHORT_IDLE_NS = 20_000;

/** haltpoll's adjust_poll_limit(): the new poll limit after a halt that lasted `blockNs`. */
export function adjustPollLimit(limitNs: number, blockNs: number, maxNs = HALTPOLL_MAX_NS): number {
  if (blockNs > limitNs && blockNs <= maxNs) {
    return Math.min(Math.max(limitNs * HALTPOLL_GROW, HALTPOLL_GROW_START_NS), maxNs);
  }
  if (blockNs > maxNs) return Math.floor(limitNs / HALTPOLL_SHRINK);
  return limitNs;
}
