/**
 * The context-switch model's charge (`--switch-cost`; how the floor is chosen:
 * src/harness/switch-cost.ts): a switch lasts at least the floor, in emulated ns, from the
 * outgoing side's schedule() to the incoming task running. Context: the thread that now owns the
 * CPU, in Runtime.enterCpu, before the task's run time starts. Never allocates.
 */

/**
 * The most clock reads one charge spins for: a bound on the spin whatever the clock does (a
 * fake clock that stands still); at ~30–50 ns a read, far beyond any floor --switch-cost takes
 * (LIMITS.switchCost.max) at the largest TDF.
 */
export const SWITCH_SPIN_MAX_READS = 20_000_000;

/**
 * When a switch that began at `startNs` and reached its incoming task at `nowNs` ends under a
 * floor of `floorNs`: `startNs + floorNs` when that is later than `nowNs`, else `nowNs` (the lab
 * already paid at least the floor). A `startNs` of 0 is no switch (the CPU's first owner).
 */
export function chargedSwitchEnd(startNs: number, nowNs: number, floorNs: number): number {
  const end = startNs + floorNs;
  return floorNs > 0 && startNs > 0 && end > nowNs ? end : nowNs;
}

/**
 * Spin on `now` until the switch's charged end; returns the clock's last reading (the switch's
 * end, the task's run-time start). Bounded by SWITCH_SPIN_MAX_READS reads.
 */
export function chargeSwitch(startNs: number, nowNs: number, floorNs: number, now: () => number): number {
  const end = chargedSwitchEnd(startNs, nowNs, floorNs);
  let t = nowNs;
  for (let reads = 0; t < end && reads < SWITCH_SPIN_MAX_READS; reads++) t = now();
  return t;
}
