/**
 * Thread entry: load and instantiate the strategies of a run, off the main thread, and say how
 * it went. A strategy file whose top level or constructor never returns then costs a timeout
 * and a message, not a main thread that no longer hears Ctrl-C (src/strategies/validate.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StrategyRef } from '../src/machine/options.js';
import { instantiate, loadStrategyClass } from '../src/strategies/load.js';

const refs = workerData as StrategyRef[];
for (const [i, ref] of refs.entries()) {
  parentPort?.postMessage({ type: 'start', index: i });
  try {
    instantiate(ref, await loadStrategyClass(ref));
  } catch (e) {
    parentPort?.postMessage({
      type: 'error',
      index: i,
      message: e instanceof Error ? e.message : String(e),
      bad:
        (e as Error)?.constructor?.name === 'StrategyLoadError' ||
        (e as Error)?.constructor?.name === 'StrategyOptionError',
    });
    process.exit(0);
  }
}
parentPort?.postMessage({ type: 'done' });
