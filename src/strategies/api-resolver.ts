/**
 * `import { WORK_CPU_UNBOUND, Softirq, pickBool } from 'deferlab'` in a user's strategy file,
 * wherever the file lives: 'deferlab' resolves to this deferlab's own plugin API
 * (src/api/index.ts), installed as a package or not. Compiled strategies (compile.ts) get it as
 * an external import of that module; a file imported as it is (a JavaScript strategy, or the tsx
 * fallback) through a resolve hook registered in the importing thread, only when the file
 * names 'deferlab' (a module hook costs a Node 20 thread a loader thread of its own).
 */
import { register } from 'node:module';

/** The URL of the plugin API module next to this one (its .ts when running from source). */
export function apiModuleUrl(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(`../api/index.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
}

/** The file's source imports 'deferlab' (a quick textual test, before the import). */
export function importsDeferlab(source: string): boolean {
  return /from\s*['"]deferlab['"]|import\s*\(\s*['"]deferlab['"]|require\s*\(\s*['"]deferlab['"]/.test(source);
}

let registered = false;

/** Resolve 'deferlab' to the plugin API in this thread's imports from now on (once per thread). */
export function registerApiResolver(): void {
  if (registered) return;
  registered = true;
  const hook =
    'export async function resolve(specifier, context, next) {' +
    ` if (specifier === 'deferlab') return { url: ${JSON.stringify(apiModuleUrl())}, shortCircuit: true };` +
    ' return next(specifier, context); }';
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}
