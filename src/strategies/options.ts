// The option helpers are part of the plugin API (src/api/options.ts); the built-ins use them too.
export * from '../api/options.js';
