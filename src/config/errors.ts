/**
 * The messages of bad input (and of a failed run), built as {@link DeferlabError}s of the
 * catalogue (src/errors.ts, where every error class, its code and exit status are).
 *
 * Every message names the setting, the constraint, the value given and, where one helps, the
 * fix, in one line: `--cpus must be an integer from 1 to 64 (got 0)`. The CLI prints it as
 * `deferlab: <message>` and exits with the error's `exitStatus`; nobody prints a stack trace
 * for an error in this catalogue.
 */
import { DeferlabError } from '../errors.js';

/**
 * The parts of a complaint about one value, before we know which setting it belongs to.
 * Value parsers return it; the caller adds the setting's name (`--cpus`, `cpus in cfg.json`).
 */
export interface Problem {
  /** Starts with "must": `must be an integer from 1 to 64`. */
  readonly constraint: string;
  /** Said after the value, inside the parentheses: `which never ends`. */
  readonly detail?: string;
  /** What to do instead: `raise --ring-size to 8M`. */
  readonly fix?: string;
}

/** A parser's answer: a value, or the problem with the input. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: Problem };

export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

export function fail<T = never>(constraint: string, extra: { detail?: string; fix?: string } = {}): Parsed<T> {
  return { ok: false, problem: { constraint, ...extra } };
}

/** Numbers as the user would type them: `0`, `1.5`, `-5`. */
const NUMERIC = /^-?\d+(\.\d+)?$/;
const MAX_SHOWN = 80;

/**
 * A value as it appears after "got": numbers bare, strings quoted (unless they are plain
 * numbers, so `--cpus 0` reads `got 0`), lists and objects as JSON, cut at 80 characters.
 */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  let text: string;
  if (typeof value === 'string') text = NUMERIC.test(value) ? value : JSON.stringify(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}

/**
 * A setting has a value it cannot take.
 * `badOption('--cpus', 'must be an integer from 1 to 64', '0')` →
 * `--cpus must be an integer from 1 to 64 (got 0)`.
 * Errors about a flag point to `--help`; errors about a config file do not.
 */
export function badOption(
  setting: string,
  constraint: string,
  got: unknown,
  fix?: string,
  detail?: string,
): DeferlabError {
  const gotText = `got ${formatValue(got)}${detail ? `, ${detail}` : ''}`;
  const message = `${setting} ${constraint} (${gotText})${fix ? `; ${fix}` : ''}`;
  return new DeferlabError('E_BAD_OPTION', message, 2, setting.startsWith('-'));
}

/** {@link badOption} from a parser's {@link Problem}; `extraDetail` (e.g. "the default") goes first. */
export function badValue(setting: string, problem: Problem, got: unknown, extraDetail?: string): DeferlabError {
  const detail = [extraDetail, problem.detail].filter(Boolean).join(', ');
  return badOption(setting, problem.constraint, got, problem.fix, detail || undefined);
}

/** Two or more settings that are fine alone but not together. */
export function conflict(message: string, fix?: string, usage = false): DeferlabError {
  return new DeferlabError('E_CONFLICT', fix ? `${message}; ${fix}` : message, 2, usage);
}

export function unknownOption(flag: string, command: string, suggestion?: string): DeferlabError {
  const hint = suggestion ? `; did you mean ${suggestion}?` : '';
  return new DeferlabError('E_UNKNOWN_OPTION', `unknown option ${flag} for '${command}'${hint}`, 2, true);
}

/** `typed`: the flag as the user spelled it, where it is an alias (qperf's `-oo` for --sweep). */
export function missingValue(flag: string, example: string, got?: string, typed?: string): DeferlabError {
  const what = got === undefined ? 'got nothing' : `got the option ${got}`;
  const named = typed ? `${typed} (${flag})` : flag;
  return new DeferlabError(
    'E_MISSING_VALUE',
    `${named} needs a value, like ${typed ?? flag} ${example} (${what})`,
    2,
    true,
  );
}

export function unexpectedValue(flag: string, got: string): DeferlabError {
  return new DeferlabError('E_UNEXPECTED_VALUE', `${flag} takes no value (got ${formatValue(got)})`, 2, true);
}

export function unknownCommand(name: string, known: readonly string[], suggestion?: string): DeferlabError {
  const hint = suggestion ? `; did you mean '${suggestion}'?` : '';
  return new DeferlabError(
    'E_UNKNOWN_COMMAND',
    `unknown command ${formatValue(name)}: the commands are ${known.join(', ')}${hint}`,
    2,
    true,
  );
}

export function missingArgument(command: string, what: string, example: string): DeferlabError {
  return new DeferlabError('E_MISSING_ARGUMENT', `'${command}' needs ${what}, like: deferlab ${example}`, 2, true);
}

export function unexpectedArgument(command: string, got: string, takes: string): DeferlabError {
  return new DeferlabError(
    'E_UNEXPECTED_ARGUMENT',
    `'${command}' takes ${takes} (got the extra argument ${formatValue(got)}); options start with --`,
    2,
    true,
  );
}

export function configNotFound(given: string, resolved: string): DeferlabError {
  return new DeferlabError(
    'E_CONFIG_NOT_FOUND',
    `--config must name an existing file (got ${formatValue(given)}, resolved to ${resolved})`,
    2,
    true,
  );
}

export function configUnreadable(file: string, reason: string): DeferlabError {
  return new DeferlabError('E_CONFIG_UNREADABLE', `${file} could not be read: ${reason}`, 2);
}

export function configSyntax(file: string, reason: string, where?: { line: number; column: number }): DeferlabError {
  const at = where ? ` at line ${where.line}, column ${where.column}` : '';
  return new DeferlabError(
    'E_CONFIG_SYNTAX',
    `${file} is not valid JSON${at}: ${reason}; config files are JSON, which allows no comments and no trailing commas`,
    2,
  );
}

/** A config file with nothing in it (or only white space). */
export function configEmpty(file: string): DeferlabError {
  return new DeferlabError(
    'E_CONFIG_SYNTAX',
    `${file} is empty: a config file is one JSON object, like {"cpus": 4, "irq": {"rate": "20k"}} ({} for the defaults)`,
    2,
  );
}

/** A config file in another format (by its extension: YAML, TOML) that is not JSON. */
export function configFormat(file: string, format: string): DeferlabError {
  return new DeferlabError(
    'E_CONFIG_SYNTAX',
    `${file} is not valid JSON: config files are JSON, not ${format}; convert ${file} to JSON, like {"cpus": 4, "irq": {"rate": "20k"}}`,
    2,
  );
}

/** A key given twice in one JSON object: JSON.parse would silently keep the last. */
export function configDuplicateKey(setting: string, lines: readonly number[]): DeferlabError {
  return new DeferlabError(
    'E_CONFIG_SYNTAX',
    `${setting} is given twice (${lines[0] === lines[1] ? `both on line ${lines[0]}` : `lines ${lines.join(' and ')}`}); give each setting once: JSON would keep only the last`,
    2,
  );
}

export function unknownKey(setting: string, allowed: readonly string[], suggestion?: string): DeferlabError {
  const hint = suggestion ? `did you mean ${suggestion}? ` : '';
  return new DeferlabError(
    'E_UNKNOWN_KEY',
    `${setting} is not a known setting; ${hint}the keys allowed here are ${allowed.join(', ')}`,
    2,
  );
}

export function unknownScenario(name: string, known: readonly string[]): DeferlabError {
  return new DeferlabError(
    'E_UNKNOWN_SCENARIO',
    `scenario must be one of ${known.join(', ')} (got ${formatValue(name)}); 'deferlab list' describes them`,
    2,
    true,
  );
}

/** The run itself failed; the message says what failed and where (worker, strategy, trial). */
export function runFailed(message: string): DeferlabError {
  return new DeferlabError('E_RUN_FAILED', message, 1);
}

/** Levenshtein distance, for "did you mean" hints. Small inputs only. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}

/** The closest of `known` to `given`, if it is close enough to be a typo. */
export function closest(given: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(given.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(given.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
