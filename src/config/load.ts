/**
 * Reading the JSON config file given with `--config FILE`.
 *
 * This module reads and parses; `resolveConfig` validates the fields (unknown keys, types,
 * ranges) with the file's name in every message. Every failure is one line naming the file
 * and exits with status 2.
 */
import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { jsonSyntaxLocation, jsonSyntaxReason } from '../json-error.js';
import {
  badOption,
  configDuplicateKey,
  configEmpty,
  configFormat,
  configNotFound,
  configSyntax,
  configUnreadable,
} from './errors.js';
import { type Path, pathText } from './origins.js';

export interface LoadedConfigFile {
  /** The path as given: messages name the file this way. */
  readonly name: string;
  /** Absolute path. */
  readonly path: string;
  /** The parsed JSON, not yet validated: pass it to `resolveConfig` as `file`. */
  readonly data: unknown;
}

/**
 * Read and parse a config file. Context: main thread, before the run. Returns the parsed JSON;
 * throws a DeferlabError when the file is missing, unreadable or not JSON.
 */
export function loadConfigFile(given: string, cwd: string): LoadedConfigFile {
  if (given.trim() === '') {
    throw badOption(
      '--config',
      'must not be empty',
      given,
      'give the path of a JSON config file, like --config lab.json',
    );
  }
  const path = resolve(cwd, given);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw configNotFound(given, path);
    if (code === 'EISDIR') throw configUnreadable(given, 'it is a directory, not a file');
    if (code === 'EACCES') throw configUnreadable(given, 'permission denied');
    throw configUnreadable(given, (err as Error).message);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a BOM is not JSON, but editors write it
  if (text.trim() === '') throw configEmpty(given);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    const format = OTHER_FORMATS[extname(given).toLowerCase()];
    if (format) throw configFormat(given, format);
    const message = (err as Error).message;
    throw configSyntax(given, jsonSyntaxReason(message), jsonSyntaxLocation(message, text));
  }
  const twice = duplicateKey(text);
  if (twice) throw configDuplicateKey(`${pathText(twice.path)} in ${given}`, twice.lines);
  return { name: given, path, data };
}

/** Extensions of config formats people write instead of JSON. */
const OTHER_FORMATS: Readonly<Record<string, string>> = { '.yaml': 'YAML', '.yml': 'YAML', '.toml': 'TOML' };

/**
 * The first key given twice in one object of a JSON text that JSON.parse accepted (which keeps
 * the last silently), with its path and the lines of both. A scan of the tokens: strings
 * (escapes included) are skipped whole, so braces and colons inside them do not count.
 */
export function duplicateKey(text: string): { path: Path; lines: [number, number] } | undefined {
  type Frame =
    | { kind: 'object'; path: Path; keys: Map<string, number>; key?: string }
    | { kind: 'array'; path: Path; index: number };
  const stack: Frame[] = [];
  let line = 1;
  let i = 0;
  const childPath = (): Path => {
    const top = stack[stack.length - 1];
    if (!top) return [];
    return top.kind === 'object' ? [...top.path, top.key ?? ''] : [...top.path, top.index];
  };
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\n') line++;
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const literal = text.slice(i, j + 1);
      i = j + 1;
      let k = i;
      while (k < text.length && /\s/.test(text[k])) k++;
      const top = stack[stack.length - 1];
      if (text[k] === ':' && top?.kind === 'object') {
        const key = JSON.parse(literal) as string;
        const first = top.keys.get(key);
        if (first !== undefined) return { path: [...top.path, key], lines: [first, line] };
        top.keys.set(key, line);
        top.key = key;
      }
      continue;
    }
    if (ch === '{' || ch === '[') {
      const path = childPath();
      stack.push(ch === '{' ? { kind: 'object', path, keys: new Map() } : { kind: 'array', path, index: 0 });
    } else if (ch === '}' || ch === ']') {
      stack.pop();
    } else if (ch === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'array') top.index++;
    }
    i++;
  }
  return undefined;
}
