/**
 * Starting worker threads the same way from compiled JS and from TypeScript source.
 *
 * On Node 20 a loader hook registered on the main thread (tsx's, vitest's) does not reach
 * worker threads, so a worker started from `.ts` source cannot import TypeScript by itself.
 * Worker entries are always named by their `.js` URL. From compiled `dist/` that file exists
 * and is started directly. From source (under vitest or `tsx`), the worker is started with a
 * tiny ESM bootstrap (a `data:` URL) that registers tsx's ESM loader inside the worker and then
 * imports the entry; tsx maps `x.js` to `x.ts`. Import failures are rethrown so that they
 * reach the Worker's `error` event.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** True when this module itself runs from TypeScript source (tsx or vitest), not from dist/. */
export const RUNNING_FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The tsx ESM API, resolved once; only needed when running from source. */
let tsxApiUrl: string | undefined;

function bootstrapFor(entry: URL): URL {
  tsxApiUrl ??= import.meta.resolve('tsx/esm/api');
  const code =
    `const { register } = await import(${JSON.stringify(tsxApiUrl)});\n` +
    `register();\n` +
    `await import(${JSON.stringify(entry.href)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

/**
 * Start a worker thread on `entry` (a `.js` URL next to the calling module).
 *
 * Context: main thread. Returns at once; the worker signals readiness through its own protocol.
 */
export function spawnWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if (!RUNNING_FROM_SOURCE) return new Worker(entry, options);
  return new Worker(bootstrapFor(entry), options);
}
