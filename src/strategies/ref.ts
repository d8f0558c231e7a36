/**
 * StrategyRef, what every thread loads a strategy from (src/machine/options.ts), built in this
 * one place: from a parsed spec (a run's strategies, `check-strategy FILE`), or from a
 * built-in's name or a file's path (the demo, the benchmarks, the tests).
 */
import { basename, extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StrategyOptionValue, StrategySpec } from '../config/strategy-spec.js';
import type { StrategyRef } from '../machine/options.js';

type Options = Readonly<Record<string, StrategyOptionValue>>;

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

/** A built-in by name; its label is the name unless given. Options are not checked here. */
export function builtinRef(name: string, options: Options = {}, label = name): StrategyRef {
  return strategyRef({ label, name, kind: 'builtin', options });
}

/** A strategy file by absolute path; its label is the file's name unless given. */
export function fileRef(file: string, options: Options = {}, label = basename(file)): StrategyRef {
  return strategyRef({ label, name: basename(file, extname(file)), kind: 'file', file, options });
}
