/**
 * The watchdog: a CPU whose owner passes no preemption point for `limitMs` while not asleep in
 * its idle loop is stuck (a strategy that loops, or blocks in hardirq context); it is reported
 * as a machine fault naming the CPU, its owner and the strategy in force. A CPU whose owner's
 * thread hardly ran on the host meanwhile (its schedstat run time grew by less than half the
 * limit: more emulated CPUs than host cores, a loaded host) is starved, not stuck: its wait
 * starts again, up to HOST_STARVED_LIMITS limits in a row.
 * Context: main thread (a timer; never blocks).
 */
import type { Machine } from '../machine/machine.js';

/** How often the watchdog looks at the CPUs. */
export const WATCHDOG_PERIOD_MS = 100;
/** Starved limits in a row after which a CPU is reported anyway. */
export const HOST_STARVED_LIMITS = 10;

export function startWatchdog(m: Machine, limitMs: number, activeLabel: () => string | undefined): { stop(): void } {
  const n = m.opts.cpus;
  const last = new Array<number>(n).fill(-1);
  const since = new Array<number>(n).fill(Date.now());
  /** The owner thread's host run time (ns) when the CPU's wait started, and starved limits so far. */
  const ranAt = new Array<number>(n).fill(Number.NaN);
  const starved = new Array<number>(n).fill(0);
  const timer = setInterval(() => {
    const now = Date.now();
    for (let c = 0; c < n; c++) {
      const hb = m.heartbeat(c);
      if (hb !== last[c] || (m.owner(c) === c && m.cpuThreadSleeping(c))) {
        last[c] = hb;
        since[c] = now;
        ranAt[c] = Number.NaN;
        starved[c] = 0;
        continue;
      }
      if (Number.isNaN(ranAt[c])) ranAt[c] = m.ownerThreadRunNs(c);
      if (now - since[c] >= limitMs) {
        const ran = m.ownerThreadRunNs(c) - ranAt[c];
        if (ran < (limitMs * 1e6) / 2 && ++starved[c] < HOST_STARVED_LIMITS) {
          since[c] = now; // the host did not run it: starved, not stuck
          ranAt[c] = Number.NaN;
          continue;
        }
        clearInterval(timer);
        const label = activeLabel();
        const where = m.whereOf(c);
        m.injectFault({
          thread: m.taskName(m.owner(c)),
          message: `CPU ${c} passed no preemption point for ${((now - since[c]) / 1000).toFixed(1)} s, ${where.doing} (owner ${m.taskName(m.owner(c))}${label ? `, strategy ${label} in force` : ''}): a strategy or callback is stuck (a loop, or a blocking wait in atomic context)`,
          cpu: c,
          task: m.taskName(m.owner(c)),
          context: where.context,
          ...(label ? { strategy: label } : {}),
          kind: 'watchdog',
        });
        return;
      }
    }
  }, WATCHDOG_PERIOD_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
