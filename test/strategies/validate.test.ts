/**
 * Strategies are loaded and constructed in a thread of their own before a run: a bad file is
 * one line, a constructor that never returns is named after the limit, and a signal stops the
 * wait at once (the main thread never runs the user's code before the machine starts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { StrategyLoadError, ValidationInterrupted } from '../../src/errors.js';
import type { StrategyRef } from '../../src/machine/options.js';
import { validateStrategiesIsolated } from '../../src/strategies/validate.js';

const dir = mkdtempSync(join(tmpdir(), 'deferlab-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileRef(name: string, text: string): StrategyRef {
  const path = join(dir, name);
  writeFileSync(path, text);
  return { label: name, name, kind: 'file', url: pathToFileURL(path).href, options: {} };
}

const OK = 'export default class Ok { handoff(k, d) { d.run(k); return true; } }\n';
const HANGS = 'export default class H { constructor() { for (;;) {} } handoff() { return true; } }\n';
const THROWS =
  'export default class T { constructor() { throw new Error("no, thanks"); } handoff() { return true; } }\n';
const builtin: StrategyRef = { label: 'tasklet', name: 'tasklet', kind: 'builtin', options: {} };

describe('validateStrategiesIsolated', () => {
  it('accepts good strategies, built-in and from files', async () => {
    await expect(validateStrategiesIsolated([builtin, fileRef('ok.mjs', OK)])).resolves.toBeUndefined();
  }, 60_000);

  it('says which file and what, for a constructor that throws', async () => {
    const ref = fileRef('throws.mjs', THROWS);
    const e = await validateStrategiesIsolated([builtin, ref]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StrategyLoadError);
    expect((e as Error).message).toBe(`${join(dir, 'throws.mjs')}: the constructor threw: no, thanks`);
  }, 60_000);

  it('names a constructor that never returns, after the limit', async () => {
    const ref = fileRef('hangs.mjs', HANGS);
    const e = await validateStrategiesIsolated([builtin, ref], { timeoutMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StrategyLoadError);
    expect((e as Error).message).toBe(
      `${join(dir, 'hangs.mjs')}: loading it and constructing the class did not finish within 10 s (an endless loop at its top level or in its constructor?)`,
    );
  }, 60_000);

  it('stops waiting when its signal fires', async () => {
    const ref = fileRef('hangs2.mjs', HANGS);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const e = await validateStrategiesIsolated([ref], { signal: ac.signal }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ValidationInterrupted);
  }, 60_000);
});
