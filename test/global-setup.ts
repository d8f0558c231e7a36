/**
 * Vitest global setup: build dist/ once before any test file runs.
 *
 * The CLI tests (test/fixtures/cli.ts) run the built command, `node bin/deferlab.js ...`, not
 * `node --import tsx src/cli.ts`: under tsx every process and every worker thread it starts
 * compiles TypeScript on start-up (2-4 s per process on two busy cores, a few hundred of them).
 * The build runs on every `vitest run`, so the tests never see a dist/ older than the source;
 * it fails the run if the TypeScript does not compile (dist/ would not match the source).
 * TypeScript 7 builds the tree in about a second.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export default function buildOnce(): void {
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(
      `the build the CLI tests run (tsc -p tsconfig.json) failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`,
    );
  }
}
