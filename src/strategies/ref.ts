/**
 * StrategyRef, what every thread loads a strategy from (src/machine/options.ts), built in this
 * one place: from a parsed spec (a run's strategies, `check-strategy FILE`), or from a
 * built-in's name or a file's path (the demo, the benchmarks, the tests).
 */
import { basename, extname } from 'node:path';
import { pathToFileURL } from 'node:url';

type Options = Readonly<Record<string, string | number | boolean>>;

export interface StrategyRef {
  label: string;
  name: string;
  kind: 'builtin' | 'file';
  /** file:// URL of a user's strategy module (kind 'file'). */
  url?: string;
  /** Named export to use; default: the default export, else the only exported class. */
  exportName?: string;
  options: Record<string, string | number | boolean>;
}

/** A built-in by name; its label is the name unless given. Options are not checked here. */
export function builtinRef(name: string, options: Options = {}, label = name): StrategyRef {
  return { label, name, kind: 'builtin', options: { ...options } };
}

/** A strategy file by absolute path; its label is the file's name unless given. */
export function fileRef(file: string, options: Options = {}, label = basename(file)): StrategyRef {
  return {
    label,
    name: basename(file, extname(file)),
    kind: 'file',
    url: pathToFileURL(file).href,
    options: { ...options },
  };
}
