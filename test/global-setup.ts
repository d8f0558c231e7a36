/**
 * Vitest global setup: build dist/ once before any test file runs.
 *
 * Under tsx every process and every worker thread loads tsx and its TypeScript on start-up
 * (~1 s of CPU each, 2-4 s of wall time on two busy cores), and the tests start hundreds. So the
 * CLI tests (test/fixtures/cli.ts) run the built command, `node bin/deferlab.js ...`, and the
 * machines the test files boot in-process start their threads from dist/ too
 * (DEFERLAB_TEST_WORKERS_FROM_DIST, src/threads/spawn.ts); test code and the main thread's side
 * still run from source. The build runs on every `vitest run`, so the tests never see a dist/
 * older than the source; it fails the run if the TypeScript does not compile (dist/ would not
 * match the source). TypeScript 7 builds the tree in about a second.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPILED_DIR_PREFIX } from '../src/strategies/compile.js';
import { WORKERS_FROM_DIST_ENV } from '../src/threads/spawn.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The compiled strategies' directories (src/strategies/compile.ts) that this test run's processes
 * left: the product removes its own when the process exits, but vitest ends its worker processes
 * without an 'exit' event. Only those made since the run started.
 */
function removeCompiledStrategyDirs(since: number): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(COMPILED_DIR_PREFIX)) continue;
    const path = join(tmpdir(), name);
    try {
      if (statSync(path).mtimeMs >= since) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
}

export default function buildOnce(): () => void {
  const started = Date.now() - 1000;
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(
      `the build the CLI tests run (tsc -p tsconfig.json) failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`,
    );
  }
  // The build's second step, as `npm run build` runs it: each thread entry, and the CLI's, as one file.
  const b = spawnSync(process.execPath, ['dist/src/build/bundle.js'], { cwd: repoRoot, encoding: 'utf8' });
  if (b.status !== 0)
    throw new Error(
      `the build's bundling step (src/build/bundle.ts) failed (exit ${b.status ?? b.signal}):\n${b.stderr}`,
    );
  // The test files' machines start their threads from the fresh dist/ too (src/threads/spawn.ts).
  process.env[WORKERS_FROM_DIST_ENV] = '1';
  return () => removeCompiledStrategyDirs(started);
}
