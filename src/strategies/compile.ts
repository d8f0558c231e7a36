/**
 * A run's TypeScript strategy files, compiled once on the main thread for the machine's threads.
 *
 * Node 20 cannot strip types, so a thread that imports a `.ts` strategy goes through tsx's
 * `tsImport`, which registers module hooks, and on Node 20 that starts a loader thread of its own
 * for every thread that asks: measured here, 1.7–2.6 s of start-up per machine thread, half a
 * dozen threads per machine, every boot (one boot per sweep point). Instead, the main thread
 * bundles every `.ts` strategy of the machine with esbuild (already the dependency tsx uses to
 * compile) into plain ES modules in a private temporary directory, and each thread imports those
 * with a plain `import()`.
 *
 * What stays the same: every thread still imports, evaluates and constructs the strategies itself
 * (module-level state is per thread, as before); strategies of one machine are bundled together
 * with code splitting, so a helper module two strategy files import is one module in a thread, as
 * it is under tsx. What a strategy imports from packages and Node's built-ins is bundled or left
 * to Node exactly as esbuild's `platform: 'node'` does. When compiling fails for any reason (an
 * import esbuild cannot resolve, a syntax error), the threads fall back to tsx, whose error
 * messages the run reports (the strategies were validated through tsx before the boot anyway).
 *
 * The directory is removed when the process exits. Context: main thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { apiModuleUrl } from './api-resolver.js';
import type { StrategyRef } from './ref.js';

/** A TypeScript strategy file (what needs tsx or this compilation; load.ts uses it too). */
export const TS_EXT = /\.(ts|mts|cts|tsx)$/;

/** Source file URL → the URL of its compiled module. */
export type CompiledStrategies = Record<string, string>;

/** Where the compiled modules go: a directory `<tmpdir>/<prefix>XXXXXX` per process. */
export const COMPILED_DIR_PREFIX = 'deferlab-strategies-';

let dir: string | undefined;
const cache = new Map<string, Promise<CompiledStrategies>>();

function workDir(): string {
  if (dir) return dir;
  const d = mkdtempSync(join(tmpdir(), COMPILED_DIR_PREFIX));
  dir = d;
  process.once('exit', () => rmSync(d, { recursive: true, force: true }));
  return d;
}

/**
 * The compiled modules of `refs`' TypeScript files (empty when there are none, or when esbuild
 * cannot compile them: the threads then load them through tsx). One compilation per distinct
 * list of files per process.
 */
export function compileStrategies(refs: readonly StrategyRef[]): Promise<CompiledStrategies> {
  return compileFiles(refs.filter((r) => r.kind === 'file' && r.url && TS_EXT.test(r.url)).map((r) => r.url!));
}

/** The compiled modules of these TypeScript files' URLs (empty when esbuild cannot compile them). */
export function compileFiles(files: readonly string[]): Promise<CompiledStrategies> {
  const urls = [...new Set(files)];
  if (urls.length === 0) return Promise.resolve({});
  const key = urls.join('\n');
  let p = cache.get(key);
  if (!p) {
    p = compile(urls, cache.size);
    cache.set(key, p);
  }
  return p;
}

async function compile(urls: string[], n: number): Promise<CompiledStrategies> {
  try {
    const { build } = await import('esbuild');
    const outdir = join(workDir(), String(n));
    const entryPoints = Object.fromEntries(urls.map((u, i) => [`s${i}`, fileURLToPath(u)]));
    await build({
      entryPoints,
      outdir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outExtension: { '.js': '.mjs' },
      // A bundled CommonJS dependency may require() a Node built-in; give ES modules a require.
      banner: {
        js: "import { createRequire as __deferlabCreateRequire } from 'node:module'; const require = __deferlabCreateRequire(import.meta.url);",
      },
      // 'deferlab' is deferlab's own plugin API, imported from where it is (api-resolver.ts).
      plugins: [
        {
          name: 'deferlab-api',
          setup(b) {
            b.onResolve({ filter: /^deferlab$/ }, () => ({ path: apiModuleUrl(), external: true }));
          },
        },
      ],
      logLevel: 'silent',
      write: true,
    });
    return Object.fromEntries(urls.map((u, i) => [u, pathToFileURL(join(outdir, `s${i}.mjs`)).href]));
  } catch {
    return {};
  }
}
