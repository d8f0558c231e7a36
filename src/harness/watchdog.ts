/**
 * The watchdog: a CPU whose owner passes no preemption point for `limitMs` while not asleep in
 * its idle loop is stuck (a strategy that loops, or blocks in hardirq context); it is reported
 * as a machine fault naming the CPU, its owner and the strategy in force.
 * Context: main thread (a timer; never blocks).
 */
import type { Machine } from '../machine/machine.js';

/** How often the watchdog looks at the CPUs. */
export const WATCHDOG_PERIOD_MS = 100;

export function startWatchdog(m: Machine, limitMs: number, activeLabel: () => string | undefined): { stop(): void } {
  const n = m.opts.cpus;
  const last = new Array<number>(n).fill(-1);
  const since = new Array<number>(n).fill(Date.now());
  const timer = setInterval(() => {
    const now = Date.now();
    for (let c = 0; c < n; c++) {
      const hb = m.heartbeat(c);
      if (hb !== last[c] || (m.owner(c) === c && m.cpuThreadSleeping(c))) {
        last[c] = hb;
        since[c] = now;
        continue;
      }
      if (now - since[c] >= limitMs) {
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
