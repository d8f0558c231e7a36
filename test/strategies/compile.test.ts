/**
 * The main thread compiles a machine's TypeScript strategies once (src/strategies/compile.ts);
 * the threads import the result. It must load as the source would (the class, its options), keep
 * a helper two strategy files share as one module, and step aside (no entry: tsx loads the file)
 * whenever esbuild cannot compile something.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compileStrategies } from '../../src/strategies/compile.js';
import { instantiate, loadStrategyClass } from '../../src/strategies/load.js';
import { builtinRef, fileRef } from '../../src/strategies/ref.js';
import { repoRoot } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'deferlab-compile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

file('shared.ts', 'export const registry: { loaded: string[] } = { loaded: [] };\n');
// a.ts names the helper by its .ts file, b.ts the TypeScript way (.js for a .ts file).
const strategyText = (name: string, ext: string) => `import { registry } from './shared.${ext}';
registry.loaded.push('${name}');
interface Opts { depth?: number }
export default class ${name} {
  static readonly description = '${name}, compiled';
  static readonly registry = registry;
  readonly depth: number;
  constructor(o: Opts) { this.depth = o.depth ?? 1; }
  handoff(): void {}
}
`;
const a = file('a.ts', strategyText('A', 'ts'));
const b = file('b.ts', strategyText('B', 'js'));

describe('compileStrategies', () => {
  it('compiles each TypeScript file to a module that loads as the source does, sharing what they import', async () => {
    const refs = [fileRef(a, { depth: 3 }), builtinRef('inline'), fileRef(b)];
    const compiled = await compileStrategies(refs);
    expect(Object.keys(compiled).sort()).toEqual([pathToFileURL(a).href, pathToFileURL(b).href].sort());
    for (const url of Object.values(compiled)) expect(url).toMatch(/^file:.*\.mjs$/);
    expect(await compileStrategies(refs), 'compiled once per list of files').toBe(compiled);

    const clsA = await loadStrategyClass(refs[0], compiled);
    const clsB = await loadStrategyClass(refs[2], compiled);
    expect(clsA?.description).toBe('A, compiled');
    const inst = instantiate(refs[0], clsA) as unknown as { depth: number };
    expect(inst.depth).toBe(3);
    // One helper module for both, as under tsx: both pushed into the same registry.
    const regA = (clsA as unknown as { registry: { loaded: string[] } }).registry;
    const regB = (clsB as unknown as { registry: { loaded: string[] } }).registry;
    expect(regA).toBe(regB);
    expect(regA.loaded.sort()).toEqual(['A', 'B']);
  });

  it('falls back to the file itself when the compiled copy does not load (__dirname at its top level)', () => {
    const cjsish = file(
      'dirname.ts',
      'const here: string = __dirname;\nexport default class D { static readonly description = here; handoff(): void {} }\n',
    );
    // In a plain Node process, as a machine thread loads it (vitest's own import() would give
    // the copy a __dirname): the built modules (the tests' global setup builds dist/).
    const dist = (m: string) => pathToFileURL(join(repoRoot, 'dist/src/strategies', m)).href;
    const code = `
      const { compileStrategies } = await import(${JSON.stringify(dist('compile.js'))});
      const { loadStrategyClass } = await import(${JSON.stringify(dist('load.js'))});
      const { fileRef } = await import(${JSON.stringify(dist('ref.js'))});
      const ref = fileRef(${JSON.stringify(cjsish)});
      const compiled = await compileStrategies([ref]);
      const copy = await import(Object.values(compiled)[0]).then(() => 'loaded', (e) => String(e));
      const cls = await loadStrategyClass(ref, compiled);
      console.log(JSON.stringify({ n: Object.keys(compiled).length, copy, description: cls.description }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }));
    expect(out.n).toBe(1);
    expect(out.copy, 'the copy itself does not load').toMatch(/__dirname/);
    // Loaded from the file, through tsx (what __dirname reads there is tsx's business).
    expect(typeof out.description).toBe('string');
  });

  it('gives nothing for built-ins and JavaScript files (they load directly)', async () => {
    const js = file('plain.mjs', 'export default class { handoff() {} }\n');
    expect(await compileStrategies([builtinRef('inline'), fileRef(js)])).toEqual({});
  });

  it('gives nothing when esbuild cannot compile the files (the threads then load them through tsx)', async () => {
    const broken = file(
      'broken.ts',
      "import { nothing } from './does-not-exist.ts';\nexport default class { handoff() { nothing(); } }\n",
    );
    expect(await compileStrategies([fileRef(broken)])).toEqual({});
  });
});
