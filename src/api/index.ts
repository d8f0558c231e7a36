/**
 * The plugin API, all of it: what a strategy file imports from 'deferlab'. The types
 * (src/api/types.ts), the values they name (WORK_CPU_UNBOUND, the softirq vectors) and the option
 * helpers (src/api/options.ts). A strategy file anywhere on disk may import these values: the
 * loader resolves 'deferlab' to this module (src/strategies/api-resolver.ts).
 */
export * from './options.js';
export * from './types.js';
