/**
 * Thread entry: load and instantiate the strategies of a run, off the main thread, and say how
 * it went (messages: src/strategies/protocol.ts). A strategy file whose top level or constructor
 * never returns then costs a timeout and a message, not a main thread that no longer hears
 * Ctrl-C (src/strategies/validate.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StrategyLoadError, StrategyOptionError } from '../src/errors.js';
import { instantiate, loadStrategyClass } from '../src/strategies/load.js';
import type { ValidateMessage, ValidateStartup } from '../src/strategies/protocol.js';

const post = (m: ValidateMessage) => parentPort?.postMessage(m);

const refs = workerData as ValidateStartup;
for (const [index, ref] of refs.entries()) {
  post({ type: 'start', index });
  try {
    instantiate(ref, await loadStrategyClass(ref));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const refused = e instanceof StrategyLoadError || e instanceof StrategyOptionError;
    post({ type: refused ? 'refused' : 'threw', index, message });
    process.exit(0);
  }
}
post({ type: 'done' });
