/**
 * Where each setting came from, so that a message names it the way the user gave it.
 *
 * A config is resolved from layers, lowest first: the defaults, a scenario's preset, the config
 * file, the flags. A setting is named after the highest layer that sets it: `--msg-size` for a
 * flag, `workload.msgSize in cfg.json` for the file, `workload.msgSize in scenario cpu-hog` for
 * a preset, and by its flag (or path) when it was left at its default.
 */
import { formatValue } from './errors.js';
import { flagForPath } from './flags.js';

export type Source =
  | { readonly kind: 'default' }
  | { readonly kind: 'preset'; readonly name: string }
  | { readonly kind: 'file'; readonly name: string }
  | { readonly kind: 'flags' };

/** A field path: `['workload', 'msgSize']`, `['strategies', 2]`. */
export type Path = readonly (string | number)[];

/** `workload.msgSize`, `strategies[2]`, `topology.smt[0][1]`. */
export function pathText(path: Path): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text ? `.${part}` : part;
  return text;
}

/** The setting at `path` as the user of `source` calls it. */
export function settingName(source: Source, path: Path): string {
  const field = path.filter((p) => typeof p === 'string').join('.');
  switch (source.kind) {
    case 'flags':
    case 'default':
      return flagForPath(field) ?? pathText(path);
    case 'file':
      return `${pathText(path)} in ${source.name}`;
    case 'preset':
      return `${pathText(path)} in scenario ${source.name}`;
  }
}

/** The value at `path` inside `root`, or undefined. */
export function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

export interface Layer<T> {
  readonly source: Source;
  /** The input as given (strings from flags, JSON from the file): shown after "got". */
  readonly raw: unknown;
  /** The input once validated and parsed. */
  readonly data: T;
}

const DEFAULT_SOURCE: Source = { kind: 'default' };

export class Origins<T> {
  /** Lowest first. */
  constructor(private readonly layers: readonly Layer<T>[]) {}

  /** The highest layer that sets `path`; undefined when it is left at its default. */
  layerOf(path: Path): Layer<T> | undefined {
    for (let i = this.layers.length - 1; i >= 0; i--) {
      if (valueAt(this.layers[i].data, path) !== undefined) return this.layers[i];
    }
    return undefined;
  }

  name(path: Path): string {
    return settingName(this.layerOf(path)?.source ?? DEFAULT_SOURCE, path);
  }

  isDefault(path: Path): boolean {
    return this.layerOf(path) === undefined;
  }

  /** The value as the user gave it, or `resolved` when the setting was left at its default. */
  got(path: Path, resolved: unknown): unknown {
    const layer = this.layerOf(path);
    return layer ? valueAt(layer.raw, path) : resolved;
  }

  /** "the default" when the setting was left at its default (said after "got"). */
  defaultNote(path: Path): string | undefined {
    return this.isDefault(path) ? 'the default' : undefined;
  }

  /**
   * The setting and its value, for use inside another setting's message:
   * `--cpus 4`, `cpus 4 in cfg.json`, `the default --cpus 2`. `shown` renders a default.
   */
  describe(path: Path, shown: string): string {
    const layer = this.layerOf(path);
    if (!layer) return `the default ${settingName(DEFAULT_SOURCE, path)} ${shown}`;
    const raw = valueAt(layer.raw, path);
    const value = typeof raw === 'string' ? raw : formatValue(raw);
    const source = layer.source;
    switch (source.kind) {
      case 'file':
        return `${pathText(path)} ${value} in ${source.name}`;
      case 'preset':
        return `${pathText(path)} ${value} in scenario ${source.name}`;
      default:
        return `${settingName(source, path)} ${value}`;
    }
  }
}
