/**
 * The watchdog: a CPU whose owner passes no preemption point for `limitMs` while not asleep in
 * its idle loop is stuck (a strategy that loops, or blocks in hardirq context); it is reported
 * as a machine fault naming the CPU, its owner and the strategy in force.
 *
 * It also watches the process's resident memory: past `rssLimitBytes` (default
 * {@link MEMORY_GUARD_FRACTION} of the host's memory) the run ends as a fault, with what was
 * measured written, before the kernel's OOM killer ends it with nothing (a run at `--tdf 8` once
 * grew to 24 GB and was killed: src/machine/full-gc.ts).
 * Context: main thread (a timer; never blocks).
 */
import { totalmem } from 'node:os';
import type { Machine } from '../machine/machine.js';

/** How often the watchdog looks at the CPUs. */
export const WATCHDOG_PERIOD_MS = 100;

/** The share of the host's memory past which the watchdog ends a run: a safety limit, not a model
 *  parameter; the quarter left is for the host's other processes and the run's own writing of results. */
export const MEMORY_GUARD_FRACTION = 0.75;

const GiB = 1 << 30;

export function startWatchdog(
  m: Machine,
  limitMs: number,
  activeLabel: () => string | undefined,
  rssLimitBytes = Math.floor(totalmem() * MEMORY_GUARD_FRACTION),
): { stop(): void } {
  const n = m.opts.cpus;
  const last = new Array<number>(n).fill(-1);
  const since = new Array<number>(n).fill(Date.now());
  const timer = setInterval(() => {
    const now = Date.now();
    const rss = process.memoryUsage.rss();
    if (rss > rssLimitBytes) {
      clearInterval(timer);
      const label = activeLabel();
      m.injectFault({
        thread: 'main',
        message: `the run's process holds ${(rss / GiB).toFixed(1)} GiB of memory, past the watchdog's limit of ${(rssLimitBytes / GiB).toFixed(1)} GiB (${Math.round(MEMORY_GUARD_FRACTION * 100)}% of the host's ${(totalmem() / GiB).toFixed(1)} GiB)${label ? `, strategy ${label} in force` : ''}: ended before the host runs out of memory; shorter trials (--duration) or fewer strategies per run hold less`,
        cpu: -1,
        task: 'main',
        context: 'operator',
        ...(label ? { strategy: label } : {}),
        kind: 'watchdog',
      });
      return;
    }
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
          thread: m.threadNameOf(m.owner(c)),
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
