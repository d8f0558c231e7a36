/**
 * Loading strategies: built-ins by name, a user's class from a .ts/.js file.
 *
 * Every thread that may run strategy code loads the same list in the same order (the main
 * thread too, to validate before any worker starts). A user's file is imported by its file://
 * URL; TypeScript files go through tsx's `tsImport` (Node 20 cannot strip types itself), so
 * they load the same way from source, from dist/ and from a directory outside the repository.
 * Each failure is one line naming the file and the problem (StrategyLoadError).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { DeferralStrategy, StrategyClass } from '../api/types.js';
import { StrategyLoadError } from '../errors.js';
import { importsDeferlab, registerApiResolver } from './api-resolver.js';
import { type CompiledStrategies, compileFiles, TS_EXT } from './compile.js';
import type { StrategyRef } from './ref.js';
import { instantiateBuiltin } from './registry.js';

async function importModule(url: string): Promise<Record<string, unknown>> {
  let mod: Record<string, unknown>;
  const file = url.startsWith('file:') ? fileURLToPath(url) : '';
  if (file && existsSync(file) && importsDeferlab(await readFile(file, 'utf8'))) {
    // A file loaded as CommonJS (tsx does so outside a "type": "module" package) is out of the
    // module hooks' reach: compile it (compile.ts resolves 'deferlab' there); should that fail,
    // the resolve hook serves an ES module.
    const built = (await compileFiles([url]))[url];
    if (built) return unwrap((await import(built)) as Record<string, unknown>);
    registerApiResolver();
  }
  if (TS_EXT.test(url)) {
    const { tsImport } = await import('tsx/esm/api');
    mod = (await tsImport(url, { parentURL: import.meta.url, tsconfig: false })) as Record<string, unknown>;
  } else {
    mod = (await import(url)) as Record<string, unknown>;
  }
  return unwrap(mod);
}

/**
 * A .ts file outside a "type": "module" package is loaded as CommonJS: its exports arrive as
 * the default export's properties. Look inside.
 */
function unwrap(mod: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(mod);
  if (keys.length === 1 && keys[0] === 'default' && mod.default && typeof mod.default === 'object') {
    return mod.default as Record<string, unknown>;
  }
  return mod;
}

/**
 * Node reports a JavaScript syntax error without its place; esbuild (tsx's parser, a direct
 * dependency for this) gives file, line and column. Only on the error path.
 */
async function syntaxErrorOf(file: string): Promise<string | undefined> {
  try {
    const { transform } = await import('esbuild');
    await transform(await readFile(file, 'utf8'), { loader: 'js', format: 'esm', sourcefile: file });
  } catch (e) {
    if ((e as { errors?: unknown[] }).errors) return firstLine(e);
  }
  return undefined;
}

function isClass(v: unknown): v is StrategyClass {
  return (
    typeof v === 'function' && typeof (v as { prototype?: { handoff?: unknown } }).prototype?.handoff === 'function'
  );
}

function firstLine(e: unknown): string {
  // esbuild (through tsx) reports syntax errors as a list: give the first, with its position.
  const errs = (e as { errors?: { text?: string; location?: { line?: number; column?: number } | null }[] }).errors;
  if (Array.isArray(errs) && errs[0]?.text) {
    const loc = errs[0].location;
    return `${loc?.line !== undefined ? `line ${loc.line}:${(loc.column ?? 0) + 1}: ` : ''}${errs[0].text}`;
  }
  const msg = e instanceof Error ? e.message : String(e);
  const lines = msg
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  // Skip a header line like "Transform failed with 1 error:" and keep the problem itself.
  const useful = lines.find((l) => !/failed with \d+ errors?:$/i.test(l) && !/^Parse failure/i.test(l));
  // esbuild's text form, `FILE:LINE:COL: ERROR: text` (the column 0-based): as the list's form above,
  // without the file, which the message names already.
  const esbuild = useful ? /^.*:(\d+):(\d+): ERROR: (.*)$/.exec(useful) : null;
  if (esbuild) return `line ${esbuild[1]}:${Number(esbuild[2]) + 1}: ${esbuild[3]}`;
  return useful ?? lines[0] ?? msg;
}

/** Find the strategy class a module exports. */
export function pickClass(mod: Record<string, unknown>, file: string, exportName?: string): StrategyClass {
  if (exportName) {
    const v = mod[exportName];
    if (v === undefined)
      throw new StrategyLoadError(
        `${file}: no export named "${exportName}" (exports: ${Object.keys(mod).join(', ') || 'none'})`,
      );
    if (!isClass(v))
      throw new StrategyLoadError(
        `${file}: export "${exportName}" is not a strategy class (a class with a handoff(k, d) method)`,
      );
    return v;
  }
  const d = mod.default;
  if (d !== undefined) {
    if (isClass(d)) return d;
    if (typeof d === 'function')
      throw new StrategyLoadError(
        `${file}: the default export has no handoff(k, d) method; a strategy class needs one`,
      );
  }
  const classes = Object.entries(mod).filter(([, v]) => isClass(v));
  if (classes.length === 1) return classes[0][1] as StrategyClass;
  if (classes.length > 1) {
    throw new StrategyLoadError(
      `${file}: exports several strategy classes (${classes.map(([k]) => k).join(', ')}); export the one to run as default`,
    );
  }
  const fns = Object.entries(mod).filter(([, v]) => typeof v === 'function');
  // A plain object's methods (export default { handoff() {} }) arrive here as its properties
  // (unwrap: a CommonJS module's exports look the same).
  if (fns.some(([k]) => k === 'handoff'))
    throw new StrategyLoadError(
      `${file}: exports a handoff function (found ${fns.map(([k]) => k).join(', ')}) but no class; ` +
        'a strategy is a class with a handoff(k, d) method, not a plain object: export default class Mine { handoff(k, d) { ... } } (see docs/strategies.md)',
    );
  if (fns.length > 0) {
    throw new StrategyLoadError(
      `${file}: no exported class has a handoff(k, d) method (its exports: ${fns.map(([k]) => k).join(', ')}); see docs/strategies.md`,
    );
  }
  throw new StrategyLoadError(
    `${file}: exports no strategy class; export a class with a handoff(k, d) method (see docs/strategies.md)`,
  );
}

/** Load the class of a strategy reference. Context: any thread, at start-up. */
export async function loadStrategyClass(
  ref: StrategyRef,
  compiled: CompiledStrategies = {},
): Promise<StrategyClass | null> {
  if (ref.kind === 'builtin') return null;
  const url = ref.url;
  if (!url) throw new StrategyLoadError(`strategy ${ref.label}: no file URL`);
  const file = fileURLToPath(url);
  let mod: Record<string, unknown>;
  try {
    // A TypeScript file the main thread compiled (compile.ts) is a plain ES module; should the
    // compiled copy not load (it runs as an ES module from elsewhere), tsx loads the file itself.
    const built = compiled[url];
    mod = built ? await importModule(built).catch(() => importModule(url)) : await importModule(url);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && !existsSync(file)) throw new StrategyLoadError(`${file}: file not found`);
    if (!TS_EXT.test(url)) {
      // Whatever the loader said (Node: "Unexpected token", with no place), a syntax error comes first.
      const located = await syntaxErrorOf(file);
      if (located) throw new StrategyLoadError(`${file}: failed to load: ${located}`);
    }
    throw new StrategyLoadError(`${file}: failed to load: ${firstLine(e)}`);
  }
  return pickClass(mod, file, ref.exportName);
}

/** Instantiate a strategy (built-in or loaded class) with its options, checking the instance. */
export function instantiate(ref: StrategyRef, cls: StrategyClass | null): DeferralStrategy {
  if (ref.kind === 'builtin') return instantiateBuiltin(ref.name, ref.options);
  const file = ref.url ? fileURLToPath(ref.url) : ref.label;
  let s: DeferralStrategy;
  try {
    s = new (cls as StrategyClass)(Object.freeze({ ...ref.options }));
  } catch (e) {
    throw new StrategyLoadError(`${file}: the constructor threw: ${firstLine(e)}`);
  }
  if (!s || typeof s.handoff !== 'function')
    throw new StrategyLoadError(`${file}: the instance has no handoff(k, d) method`);
  for (const m of ['setup', 'teardown'] as const) {
    if (s[m] !== undefined && typeof s[m] !== 'function') throw new StrategyLoadError(`${file}: ${m} must be a method`);
  }
  return s;
}

/** Load and instantiate every strategy, in order. */
export async function loadStrategies(
  refs: StrategyRef[],
  compiled: CompiledStrategies = {},
): Promise<DeferralStrategy[]> {
  const out: DeferralStrategy[] = [];
  for (const ref of refs) out.push(instantiate(ref, await loadStrategyClass(ref, compiled)));
  return out;
}

/** The description a strategy class declares (static `description`). */
export async function describe(ref: StrategyRef): Promise<string> {
  if (ref.kind === 'builtin') {
    const { builtin } = await import('./registry.js');
    return builtin(ref.name)?.cls.description ?? '';
  }
  const cls = await loadStrategyClass(ref);
  return typeof cls?.description === 'string' ? cls.description : '(no description)';
}
