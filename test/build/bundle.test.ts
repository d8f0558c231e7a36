/**
 * The build's bundles (src/build/bundle.ts), as the tests' global setup made them in dist/: each
 * thread entry and the CLI's entry is one file in which every `import.meta.url` of a bundled
 * module names that module's own file, and the modules shared with users' strategies (the plugin
 * API, the errors) are imported, never copied in: a copy would be a second StrategyOptionError
 * class that a strategy's errors are not instances of.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WORKER_ENTRIES } from '../../src/build/bundle.js';

const dist = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');
const BUNDLES = [...WORKER_ENTRIES.map((e) => join(dist, 'workers', `${e}.js`)), join(dist, 'src', 'main.js')];

describe.each(BUNDLES.map((path) => ({ path, name: path.slice(dist.length + 1) })))('$name', ({ path }) => {
  const text = readFileSync(path, 'utf8');

  it('is a bundle: it imports no deferlab module but the shared ones', () => {
    const relative = [...text.matchAll(/^import .* from "(\.[^"]+)";$/gm)].map((m) => m[1]);
    for (const spec of relative)
      expect(spec).toMatch(/\/src\/(api\/[a-z]+|errors)\.js$|^\.\/(api\/[a-z]+|errors)\.js$/);
    // What tsc emitted for the entry imported src/ modules; the bundle holds them.
    expect(text.length).toBeGreaterThan(10_000);
  });

  it('holds no copy of the shared modules (one error class, one API)', () => {
    expect(text).not.toMatch(/class (StrategyOptionError|StrategyLoadError|DeferlabError)\b/);
    // src/api/options.ts's helpers (the CLI has a badOption of its own, src/config/errors.ts).
    expect(text).not.toMatch(/function (pickOption|pickBool|checkKeys)\(/);
  });

  it("resolves every module's own URL to that module's file in dist/", () => {
    const own = [...text.matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)].map((m) => m[1]);
    for (const rel of own) expect(existsSync(resolve(dirname(path), rel)), rel).toBe(true);
    // No other import.meta.url outside a string or a comment: each would be the bundle's URL
    // where a module meant its own.
    const rest = text.replace(/new URL\("[^"]+", import\.meta\.url\)/g, '');
    const outside = rest.split('\n').filter((line) => {
      const at = line.indexOf('import.meta.url');
      if (at < 0) return false;
      const before = line.slice(0, at);
      const inString = (before.match(/"/g) ?? []).length % 2 === 1 || (before.match(/'/g) ?? []).length % 2 === 1;
      return !inString && !/^\s*(\/\/|\*|\/\*)/.test(line);
    });
    expect(outside).toEqual([]);
  });
});
