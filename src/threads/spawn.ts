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
import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** True when this module itself runs from TypeScript source (tsx or vitest), not from dist/. */
export const RUNNING_FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * Set (to "1") only by the tests' global setup (test/global-setup.ts), right after it has built
 * dist/ from this source: worker entries that dist/ holds then start from there even when the
 * main thread runs from source. Under tsx every thread costs ~1 s of CPU at start-up, and a
 * machine has up to a dozen; the tests boot hundreds. Never set it by hand: dist/ would not be
 * known to match the source.
 */
export const WORKERS_FROM_DIST_ENV = 'DEFERLAB_TEST_WORKERS_FROM_DIST';

const ROOT = new URL('../../', import.meta.url);

/** `<root>/workers/cpu.js` → `<root>/dist/workers/cpu.js`, when the tests' build made it. */
function builtEntry(entry: URL): URL | undefined {
  if (process.env[WORKERS_FROM_DIST_ENV] !== '1' || !entry.href.startsWith(ROOT.href)) return undefined;
  const built = new URL(`dist/${entry.href.slice(ROOT.href.length)}`, ROOT);
  return existsSync(built) ? built : undefined;
}

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
  const built = builtEntry(entry);
  return new Worker(built ?? bootstrapFor(entry), options);
}
