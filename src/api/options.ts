/**
 * Option checking for strategies, the built-ins' and a user's (`import { pickBool } from
 * 'deferlab'`): one message shape for every bad option, which the CLI prints as one line and
 * exits 2 for (StrategyOptionError).
 */
import { StrategyOptionError } from '../errors.js';

export function badOption(strategy: string, key: string, constraint: string, got: unknown): StrategyOptionError {
  return new StrategyOptionError(
    `strategy ${strategy}: option ${key} must be ${constraint} (got ${JSON.stringify(got)})`,
  );
}

/** Reject option keys a strategy does not know. */
export function checkKeys(
  strategy: string,
  options: Readonly<Record<string, unknown>>,
  known: readonly string[],
): void {
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) {
      throw new StrategyOptionError(
        `strategy ${strategy}: unknown option ${k} (${known.length ? `known: ${known.join(', ')}` : 'it takes no options'})`,
      );
    }
  }
}

export function pickOption<T extends string>(
  options: Readonly<Record<string, unknown>>,
  key: string,
  allowed: readonly T[],
  dflt: T,
  strategy: string,
): T {
  const v = options[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw badOption(strategy, key, `one of ${allowed.join(', ')}`, v);
  return v as T;
}

export function pickBool(
  options: Readonly<Record<string, unknown>>,
  key: string,
  dflt: boolean,
  strategy: string,
): boolean {
  const v = options[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw badOption(strategy, key, 'true or false', v);
  return v;
}
