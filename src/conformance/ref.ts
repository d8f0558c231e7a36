/** From a parsed strategy spec (the CLI's `check-strategy FILE`) to what the suite checks. */
import { pathToFileURL } from 'node:url';
import type { StrategySpec } from '../config/strategy-spec.js';
import type { StrategyRef } from '../machine/options.js';

/** The StrategyRef of `spec` (as src/harness/options.ts builds them for a run). */
export function strategyRef(spec: StrategySpec, exportName?: string): StrategyRef {
  return {
    label: spec.label,
    name: spec.name,
    kind: spec.kind,
    url: spec.kind === 'file' && spec.file ? pathToFileURL(spec.file).href : undefined,
    ...(exportName ? { exportName } : {}),
    options: { ...spec.options },
  };
}
