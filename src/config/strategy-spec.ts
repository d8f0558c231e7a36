/**
 * Strategy specs: how the command line and the config file name a deferral strategy.
 *
 *   SPEC    = NAME [":" OPTIONS] | PATH [":" OPTIONS]
 *   OPTIONS = KEY "=" VALUE ("," KEY "=" VALUE)*
 *
 * NAME is a built-in (`timer`, `workqueue`, ...). PATH is a user's strategy file: anything
 * containing a `/`, or ending in `.ts`, `.js`, `.mjs` or `.mts`; it is resolved against the
 * caller's working directory and must exist. Values coerce: `true`/`false` → boolean, a plain
 * number → number, anything else stays a string. Option keys are not checked here: each
 * strategy validates its own options when it is constructed.
 *
 * The label (what reports show, what `--baseline` names) is canonical: option keys sorted,
 * values as coerced, so `timer:b=2,a=1` and `timer:a=1,b=02` are the same strategy.
 */

import { statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StrategyRef } from '../strategies/ref.js';
import { closest, fail, ok, type Parsed } from './errors.js';
import { coerceOptionValue } from './units.js';

export const BUILTIN_STRATEGY_NAMES = [
  'inline',
  'workqueue',
  'tasklet',
  'timer',
  'unbound',
  'irq_work',
  'bh_workqueue',
  'inline_trylock',
] as const;
export type BuiltinStrategyName = (typeof BUILTIN_STRATEGY_NAMES)[number];

/** What `deferlab run` compares when no `--strategy` is given, in this order. */
export const DEFAULT_STRATEGY_SPECS: readonly string[] = Object.freeze([
  'inline',
  'workqueue',
  'workqueue:wq=system',
  'tasklet',
  'timer',
  'timer:deferrable=true',
  'unbound',
  'irq_work',
  'bh_workqueue',
]);

export const STRATEGY_FILE_EXTENSIONS = ['.ts', '.js', '.mjs', '.mts'] as const;

export type StrategyOptionValue = string | number | boolean;

export interface StrategySpec {
  /** Unique within a run: `timer(deferrable=true)`, `my-strategy.ts(k=1)`. */
  readonly label: string;
  /** The built-in's name, or the file's basename without its extension. */
  readonly name: string;
  readonly kind: 'builtin' | 'file';
  /** Absolute path of a user's strategy file (kind 'file' only). */
  readonly file?: string;
  readonly options: Readonly<Record<string, StrategyOptionValue>>;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const EXTENSIONS_TEXT = '.ts, .js, .mjs or .mts';

function isBuiltin(name: string): name is BuiltinStrategyName {
  return (BUILTIN_STRATEGY_NAMES as readonly string[]).includes(name);
}

function hasStrategyExtension(path: string): boolean {
  return (STRATEGY_FILE_EXTENSIONS as readonly string[]).includes(extname(path));
}

/** Splits `SPEC` into the name-or-path and the option text (undefined when there is no `:`). */
function splitSpec(text: string): { head: string; optionText: string | undefined } {
  const lastSlash = text.lastIndexOf('/');
  const colon = text.indexOf(':', lastSlash + 1);
  if (colon < 0) return { head: text, optionText: undefined };
  return { head: text.slice(0, colon), optionText: text.slice(colon + 1) };
}

/** `["a=1", "b=x"]` → `{ a: 1, b: 'x' }`; the problem names the offending pair. */
export function parseOptionPairs(pairs: readonly string[]): Parsed<Record<string, StrategyOptionValue>> {
  const options: Record<string, StrategyOptionValue> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (eq < 0 || !KEY.test(key)) {
      return fail('must give options as key=value pairs separated by commas, like timer:deferrable=true', {
        detail: `${JSON.stringify(pair)} is not key=value`,
      });
    }
    if (Object.hasOwn(options, key)) {
      return fail('must give each option once', { detail: `${key} is given twice` });
    }
    options[key] = coerceOptionValue(pair.slice(eq + 1));
  }
  return ok(options);
}

/** `name` or `name(a=1,b=true)`, keys sorted. */
export function strategyLabel(name: string, options: Readonly<Record<string, StrategyOptionValue>>): string {
  const keys = Object.keys(options).sort();
  if (keys.length === 0) return name;
  return `${name}(${keys.map((k) => `${k}=${String(options[k])}`).join(',')})`;
}

function sortedOptions(options: Record<string, StrategyOptionValue>): Record<string, StrategyOptionValue> {
  const sorted: Record<string, StrategyOptionValue> = {};
  for (const key of Object.keys(options).sort()) sorted[key] = options[key];
  return sorted;
}

/**
 * Parse one spec. `extraOptions` are `key=value` pairs given separately (check-strategy's
 * `--option`); they join the spec's own options. Files are looked up on disk.
 *
 * Context: main thread, while resolving the config. Returns the spec or the problem with it.
 */
export function parseStrategySpec(
  text: string,
  cwd: string,
  extraOptions: readonly string[] = [],
): Parsed<StrategySpec> {
  if (text.trim() === '') {
    return fail('must not be empty', {
      fix: `give a built-in strategy (${BUILTIN_STRATEGY_NAMES.join(', ')}) or the path of a strategy file`,
    });
  }
  const { head, optionText } = splitSpec(text.trim());
  if (head === '') {
    return fail(`must be a built-in strategy (${BUILTIN_STRATEGY_NAMES.join(', ')}) or a path to a strategy file`);
  }
  if (optionText === '') return fail('must have key=value options after the ":", like timer:deferrable=true');
  const pairs = [...(optionText === undefined ? [] : optionText.split(',')), ...extraOptions];
  const parsedOptions = parseOptionPairs(pairs);
  if (!parsedOptions.ok) return parsedOptions;
  const options = sortedOptions(parsedOptions.value);

  const isPath = head.includes('/') || hasStrategyExtension(head);
  if (!isPath) {
    if (!isBuiltin(head)) {
      // `--strategy inline,tasklet`: a list where one strategy is taken (a new user's first try).
      const parts = head.split(/[,\s]+/).filter((p) => p !== '');
      if (/[,\s]/.test(head) && parts.some((p) => isBuiltin(p))) {
        return fail('takes one strategy, not a comma-separated list', {
          fix: `repeat the flag: ${parts.map((p) => `--strategy ${p}`).join(' ')}`,
        });
      }
      const near = closest(head, BUILTIN_STRATEGY_NAMES);
      return fail(
        `must be a built-in strategy (${BUILTIN_STRATEGY_NAMES.join(', ')}) or a path to a ${EXTENSIONS_TEXT} file`,
        {
          fix: near
            ? `did you mean ${near}? (a file path needs a / or one of those extensions)`
            : `for a file, write ./${head}.ts`,
        },
      );
    }
    return ok({ label: strategyLabel(head, options), name: head, kind: 'builtin', options });
  }

  const file = resolve(cwd, head);
  if (!hasStrategyExtension(file)) return fail(`must be a strategy file ending in ${EXTENSIONS_TEXT}`);
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    return fail('must name an existing strategy file', { detail: `resolved to ${file}, which does not exist` });
  }
  if (!isFile) return fail('must name a strategy file', { detail: `${file} is not a file` });
  const name = basename(file, extname(file));
  return ok({ label: strategyLabel(basename(file), options), name, kind: 'file', file, options });
}

/** The StrategyRef of `spec`; `exportName` picks a named export of a file (default: see StrategyRef). */
export function strategyRef(spec: StrategySpec, exportName?: string): StrategyRef {
  return {
    label: spec.label,
    name: spec.name,
    kind: spec.kind,
    ...(spec.kind === 'file' && spec.file ? { url: pathToFileURL(spec.file).href } : {}),
    ...(exportName ? { exportName } : {}),
    options: { ...spec.options },
  };
}
