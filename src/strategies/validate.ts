/**
 * Checking a run's strategies before anything starts, in a thread of their own: each file is
 * loaded and each class constructed with its options, as every machine thread will do. A bad
 * file or option is one line (StrategyLoadError); a file whose top level or constructor does
 * not return within the limit is named as such; the main thread stays free to hear Ctrl-C.
 */
import { fileURLToPath } from 'node:url';
import { StrategyLoadError, StrategyOptionError, ValidationInterrupted } from '../errors.js';
import { spawnWorker } from '../threads/spawn.js';
import { instantiate, loadStrategyClass } from './load.js';
import type { ValidateMessage, ValidateStartup } from './protocol.js';
import type { StrategyRef } from './ref.js';

/** How long loading and constructing the strategies may take (tsx compiles a .ts file: ~0.3 s). */
export const VALIDATE_TIMEOUT_MS = 30_000;

/** Resolves when every strategy loads and constructs; rejects with StrategyLoadError (bad input),
 *  ValidationInterrupted (the signal fired), or an Error (anything else). */
export function validateStrategiesIsolated(
  refs: readonly StrategyRef[],
  o: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const timeoutMs = o.timeoutMs ?? VALIDATE_TIMEOUT_MS;
  const who = (i: number) => {
    const r = refs[i];
    return r?.url ? fileURLToPath(r.url) : (r?.label ?? 'a strategy');
  };
  // Built-ins only: our own code, constructed here (with the user's options) as the thread would,
  // without the ~0.3 s of CPU a thread's start-up costs.
  if (refs.every((r) => r.kind === 'builtin')) return constructBuiltins(refs, o.signal);
  return new Promise<void>((resolve, reject) => {
    if (o.signal?.aborted) return reject(new ValidationInterrupted());
    const w = spawnWorker(new URL('../../workers/validate.js', import.meta.url), {
      workerData: refs satisfies ValidateStartup,
      stdout: false,
      stderr: false,
    });
    let current = 0;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      void w.terminate();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () =>
        finish(
          new StrategyLoadError(
            `${who(current)}: loading it and constructing the class did not finish within ${timeoutMs / 1000} s (an endless loop at its top level or in its constructor?)`,
          ),
        ),
      timeoutMs,
    );
    const onAbort = () => finish(new ValidationInterrupted());
    o.signal?.addEventListener('abort', onAbort, { once: true });
    w.on('message', (m: ValidateMessage) => {
      if (m.type === 'start') current = m.index;
      else if (m.type === 'done') finish();
      else if (m.type === 'refused') finish(new StrategyLoadError(m.message));
      else finish(new StrategyLoadError(`${who(m.index)}: ${m.message}`));
    });
    w.on('error', (e) => finish(new StrategyLoadError(`${who(current)}: ${e.message}`)));
    w.on('exit', (code) => {
      if (!settled)
        finish(
          new StrategyLoadError(`${who(current)}: the strategy ended its thread (exit code ${code}) while loading`),
        );
    });
  });
}

/** Construct built-in strategies on this thread; a refused option is a StrategyLoadError, as from the thread. */
async function constructBuiltins(refs: readonly StrategyRef[], signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new ValidationInterrupted();
  for (const ref of refs) {
    try {
      instantiate(ref, await loadStrategyClass(ref));
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (e instanceof StrategyLoadError || e instanceof StrategyOptionError) throw new StrategyLoadError(message);
      throw new StrategyLoadError(`${ref.label}: ${message}`);
    }
  }
}
