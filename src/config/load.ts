/**
 * Reading the JSON config file given with `--config FILE`.
 *
 * This module reads and parses; `resolveConfig` validates the fields (unknown keys, types,
 * ranges) with the file's name in every message. Every failure is one line naming the file
 * and exits with status 2.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configNotFound, configSyntax, configUnreadable } from './errors.js';

export interface LoadedConfigFile {
  /** The path as given: messages name the file this way. */
  readonly name: string;
  /** Absolute path. */
  readonly path: string;
  /** The parsed JSON, not yet validated: pass it to `resolveConfig` as `file`. */
  readonly data: unknown;
}

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/**
 * Where JSON.parse says the error is. V8 says "at position N" (Node 20) and, on newer
 * versions, "(line L column C)"; the position is turned into a line and column here.
 */
function syntaxLocation(message: string, text: string): { line: number; column: number } | undefined {
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /at position (\d+)/.exec(message);
  if (pos) return lineAndColumn(text, Number(pos[1]));
  if (/Unexpected end of JSON input/.test(message)) return lineAndColumn(text, text.length);
  return undefined;
}

/** V8's reason without its position and without the echo of the input. */
function syntaxReason(message: string): string {
  return (
    message
      .replace(/,\s*".*" is not valid JSON$/s, '')
      .replace(/\s*(in JSON )?at position \d+.*$/s, '')
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .trim() || 'invalid syntax'
  );
}

/**
 * Read and parse a config file. Context: main thread, before the run. Returns the parsed JSON;
 * throws a DeferlabError when the file is missing, unreadable or not JSON.
 */
export function loadConfigFile(given: string, cwd: string): LoadedConfigFile {
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
  try {
    return { name: given, path, data: JSON.parse(text) };
  } catch (err) {
    const message = (err as Error).message;
    throw configSyntax(given, syntaxReason(message), syntaxLocation(message, text));
  }
}
