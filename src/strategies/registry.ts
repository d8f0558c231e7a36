/**
 * The built-in strategies by name, with the option keys each accepts.
 * Built-ins are imported statically so that every thread has them without a loader.
 */
import type { StrategyClass } from '../api/types.js';
import { BhWorkqueueStrategy } from './bh-workqueue.js';
import { InlineStrategy } from './inline.js';
import { InlineTrylockStrategy } from './inline-trylock.js';
import { IrqWorkStrategy } from './irq-work.js';
import { checkKeys } from './options.js';
import { TaskletStrategy } from './tasklet.js';
import { TimerStrategy } from './timer.js';
import { UnboundStrategy } from './unbound.js';
import { WorkqueueStrategy } from './workqueue.js';

export interface BuiltinEntry {
  name: string;
  cls: StrategyClass;
  optionKeys: readonly string[];
}

export const BUILTINS: readonly BuiltinEntry[] = [
  { name: 'inline', cls: InlineStrategy, optionKeys: [] },
  { name: 'workqueue', cls: WorkqueueStrategy, optionKeys: ['wq'] },
  { name: 'tasklet', cls: TaskletStrategy, optionKeys: ['hi'] },
  { name: 'timer', cls: TimerStrategy, optionKeys: ['deferrable'] },
  { name: 'unbound', cls: UnboundStrategy, optionKeys: ['scope', 'strict'] },
  { name: 'irq_work', cls: IrqWorkStrategy, optionKeys: ['target'] },
  { name: 'bh_workqueue', cls: BhWorkqueueStrategy, optionKeys: ['highpri'] },
  { name: 'inline_trylock', cls: InlineTrylockStrategy, optionKeys: [] },
];

export function builtin(name: string): BuiltinEntry | undefined {
  return BUILTINS.find((b) => b.name === name);
}

/** Instantiate a built-in, checking its option keys first. Throws StrategyOptionError. */
export function instantiateBuiltin(name: string, options: Record<string, string | number | boolean>) {
  const b = builtin(name);
  if (!b) throw new Error(`unknown built-in strategy "${name}" (known: ${BUILTINS.map((x) => x.name).join(', ')})`);
  checkKeys(name, options, b.optionKeys);
  return new b.cls(options);
}
