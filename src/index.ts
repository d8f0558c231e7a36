/**
 * deferlab as a library. What a strategy author needs is the API types (`import type {
 * DeferralStrategy, Kernel, ... } from 'deferlab'`) and the conformance suite; the rest lets a
 * program run experiments and render reports itself.
 */
// The plugin API: types, values and option helpers (src/api/index.ts).
export * from './api/index.js';
export { type ResolvedConfig, resolveConfig } from './config/schema.js';
export * from './conformance/index.js';
export { type RunHooks, runExperiment } from './harness/run.js';
export { readResults, renderHtml, renderTable, writeResults } from './report/index.js';
export type { RunResults, StrategyResult, Summary } from './report/types.js';
export { BUILTINS } from './strategies/registry.js';
