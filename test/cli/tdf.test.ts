/**
 * `--tdf`: bad values (0, negative, not a number, above the maximum) are one line and exit 2, in
 * the flag and in a config file; a good value reaches the machine options.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../../src/cli/main.js';
import { resolveConfig } from '../../src/config/schema.js';
import { machineOptions } from '../../src/harness/options.js';
import { TDF_MAX } from '../../src/harness/tdf.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-tdf-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const BAD: [string, string, RegExp][] = [
  ['zero', '0', /\(got 0\)/],
  ['negative', '-2', /\(got -2\)/],
  ['not a number', 'fast', /\(got "fast"\)/],
  ['above the maximum', String(TDF_MAX + 1), new RegExp(`\\(got ${TDF_MAX + 1}\\)`)],
  ['below 1', '0.5', /\(got 0\.5\)/],
];

describe('--tdf bad values', () => {
  it.each(BAD)('%s: one line, exit 2', async (_name, value, got) => {
    const r = await runMain(['run', '--tdf', value, '--no-output'], tmp);
    const lines = r.stderr.trimEnd().split('\n');
    expect(r.ranUntilStopped).toBe(false);
    expect(r.status, r.stderr).toBe(2);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(lines[0]).toMatch(new RegExp(`^deferlab: --tdf must be a number from 1 to ${TDF_MAX}, or auto`));
    expect(lines[0]).toMatch(got);
    expect(lines.slice(1)).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
    expect(r.stdout).toBe('');
  });

  it('a config file with "tdf": 0 names the key and the file', async () => {
    const cfg = join(tmp, 'tdf0.json');
    writeFileSync(cfg, '{ "tdf": 0 }\n');
    const r = await runMain(['run', '--config', cfg, '--no-output'], tmp);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/tdf.*must be a number from 1 to 16, or auto/);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});

describe('--tdf good values', () => {
  const resolve = (tdf?: unknown) =>
    resolveConfig({ flags: tdf === undefined ? {} : ({ tdf } as never), cwd: tmp, random: () => 0.5 });
  it('default 1: the machine options carry no dilation', () => {
    expect(resolve().tdf).toBe(1);
    expect(machineOptions(resolve()).tdf).toBeUndefined();
  });
  it('a number (fractions too) reaches the machine options', () => {
    expect(machineOptions(resolve('2.5')).tdf).toBe(2.5);
    expect(machineOptions(resolve(TDF_MAX)).tdf).toBe(TDF_MAX);
  });
  it('auto is kept as auto until the run resolves it', () => {
    expect(resolve('auto').tdf).toBe('auto');
    expect(resolve('AUTO').tdf).toBe('auto');
  });
});
