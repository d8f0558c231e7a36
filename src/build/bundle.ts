/**
 * The build's second step (`npm run build`: tsc, then `node dist/src/build/bundle.js`): each thread
 * entry tsc wrote to dist/workers/, and the CLI's entry dist/src/main.js, rewritten as one file
 * holding every deferlab module it imports. A machine starts a dozen threads and each one loads
 * its module graph anew (~80 files): as separate ES modules that cost each thread ~150 ms of wall
 * time and ~210 ms of CPU here, as one file ~95 ms and ~130 ms (measured in one process, Node 20,
 * quiet host); `deferlab --version` went from 0.47 to 0.40 s (the CLI imports ~190 files, and
 * zod and hdr-histogram-js, which stay packages).
 *
 * esbuild (already the dependency that compiles users' TypeScript strategies, src/strategies/
 * compile.ts) bundles dist/'s JavaScript, not the TypeScript source, so the threads run what tsc
 * emitted, and follows tsc's source maps into its own. Left outside the bundle, imported at run
 * time as before:
 *   - packages (hdr-histogram-js, esbuild, tsx, @noble/hashes): resolved from node_modules;
 *   - the plugin API (dist/src/api/) and the errors it throws (dist/src/errors.js): a user's
 *     strategy imports them too, and must get the very module instances the thread uses (one
 *     StrategyOptionError class for `instanceof`, one set of constants).
 * `import.meta.url` in a bundled module is replaced by that module's own URL in dist/ (computed
 * from the bundle's), so that the paths modules resolve against their own location (the workers'
 * entries, the API for compiled strategies, package.json) stay what they were.
 *
 * Context: a build step, run once per build; exits 1 with one line when esbuild fails.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/** The thread entries under dist/workers/ (workers/*.ts). */
export const WORKER_ENTRIES = ['cpu', 'kthread', 'irq', 'calibrate', 'validate'] as const;

/** dist/ (this file is dist/src/build/bundle.js). */
const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Modules shared with user strategies: imported at run time, never copied into a bundle. */
function sharedWithStrategies(abs: string): boolean {
  const rel = relative(DIST, abs).split(sep).join('/');
  return rel.startsWith('src/api/') || rel === 'src/errors.js';
}

/** `abs` as a specifier relative to `dir`, the directory a bundle is written to. */
function from(dir: string, abs: string): string {
  const rel = relative(dir, abs).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * A comment, a string literal (left as they are: compile.ts writes `import.meta.url` into a
 * banner string for the compiled strategy), or the expression `import.meta.url` (replaced).
 */
const CODE_OR_META_URL =
  /(\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|import\.meta\.url/g;

/** The plugin for bundles written to `dir`. */
const keepModulePaths = (dir: string): Plugin => ({
  name: 'deferlab-keep-module-paths',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const abs = resolve(args.resolveDir, args.path);
      return sharedWithStrategies(abs) ? { path: from(dir, abs), external: true } : undefined;
    });
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(DIST + sep)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
      const own = `new URL(${JSON.stringify(from(dir, args.path))}, import.meta.url).href`;
      return { contents: text.replace(CODE_OR_META_URL, (_m, kept) => kept ?? own), loader: 'js' };
    });
  },
});

const OPTIONS = {
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'silent',
} as const;

/** Bundle every entry in place: the threads', and the CLI's (dist/src/main.js, what bin/deferlab.js runs). Rejects with esbuild's error when one fails. */
export async function bundleEntries(): Promise<void> {
  const workers = join(DIST, 'workers');
  await build({
    ...OPTIONS,
    entryPoints: WORKER_ENTRIES.map((e) => join(workers, `${e}.js`)),
    outdir: workers,
    plugins: [keepModulePaths(workers)],
  });
  const main = join(DIST, 'src', 'main.js');
  await build({ ...OPTIONS, entryPoints: [main], outfile: main, plugins: [keepModulePaths(dirname(main))] });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await bundleEntries();
  } catch (e) {
    process.stderr.write(`deferlab build: bundling dist/'s entries failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
