/**
 * deferlab as a library. What a strategy author needs is the API types (`import type {
 * DeferralStrategy, Kernel, ... } from 'deferlab'`) and the conformance suite; the rest lets a
 * program run experiments and render reports itself.
 */
export type {
  AffinityScope,
  Callback,
  CpuView,
  DeferralStrategy,
  Deferred,
  ExecContext,
  IrqWork,
  Kernel,
  StrategyClass,
  StrategySetup,
  SystemWorkqueue,
  Tasklet,
  Timer,
  Work,
  Workqueue,
  WorkqueueAttrs,
} from './api/types.js';
export { WORK_CPU_UNBOUND } from './api/types.js';
export { type ResolvedConfig, resolveConfig } from './config/schema.js';
export * from './conformance/index.js';
export { type RunHooks, runExperiment } from './harness/run.js';
export { readResults, renderHtml, renderTable, writeResults } from './report/index.js';
export type { RunResults, StrategyResult, Summary } from './report/types.js';
export { BUILTINS } from './strategies/registry.js';
