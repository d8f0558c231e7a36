/**
 * What a strategy claims about where its work runs, and how the conformance suite reads it.
 *
 * A strategy class may declare
 *
 *   static readonly claims = { cpu: 'same', context: 'softirq' } as const;
 *
 * `cpu: 'same'` promises the mix runs on the CPU that took the interrupt (random.c's mix
 * refuses to run anywhere else: it notices and skips); `'any'` admits it may not. `context`
 * names the one context the mix runs in, or `'any'`. Undeclared parts take DEFAULT_CLAIMS:
 * the same CPU, any context. The suite checks the claims against the counters of a real run.
 */
import type { StrategyClaims, StrategyClass } from '../api/types.js';
import { StrategyLoadError } from '../errors.js';

export type ClaimedCpu = 'same' | 'any';
export type ClaimedContext = 'hardirq' | 'softirq' | 'task' | 'any';

export type { StrategyClaims };

/** Claims of a class that declares none, and of the parts a class leaves out. */
export const DEFAULT_CLAIMS: Readonly<Required<StrategyClaims>> = Object.freeze({ cpu: 'same', context: 'any' });

const CPU_VALUES: readonly ClaimedCpu[] = ['same', 'any'];
const CONTEXT_VALUES: readonly ClaimedContext[] = ['hardirq', 'softirq', 'task', 'any'];

/**
 * The claims of strategy class `cls`, defaults filled in. `who` names the class in errors (its
 * file, or the built-in's name). Throws StrategyLoadError for a malformed declaration.
 */
export function claimsOf(cls: StrategyClass | undefined, who: string): Required<StrategyClaims> {
  const raw = (cls as { claims?: unknown } | undefined)?.claims;
  if (raw === undefined) return { ...DEFAULT_CLAIMS };
  if (typeof raw !== 'object' || raw === null) {
    throw new StrategyLoadError(
      `${who}: static claims must be an object like { cpu: 'same', context: 'softirq' } (got ${JSON.stringify(raw)})`,
    );
  }
  const { cpu = DEFAULT_CLAIMS.cpu, context = DEFAULT_CLAIMS.context, ...rest } = raw as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    throw new StrategyLoadError(`${who}: static claims has unknown key ${extra[0]} (known: cpu, context)`);
  if (!(CPU_VALUES as readonly unknown[]).includes(cpu)) {
    throw new StrategyLoadError(
      `${who}: static claims.cpu must be ${CPU_VALUES.map((v) => `'${v}'`).join(' or ')} (got ${JSON.stringify(cpu)})`,
    );
  }
  if (!(CONTEXT_VALUES as readonly unknown[]).includes(context)) {
    throw new StrategyLoadError(
      `${who}: static claims.context must be one of ${CONTEXT_VALUES.map((v) => `'${v}'`).join(', ')} (got ${JSON.stringify(context)})`,
    );
  }
  return { cpu: cpu as ClaimedCpu, context: context as ClaimedContext };
}
