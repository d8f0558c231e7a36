/**
 * `--switch-cost`: bad values are one line and exit 2, in the flag and in a config file; good
 * values reach the machine options; the probe's output is read strictly; and where this host has
 * a C compiler, the probe runs and measures a switch.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { machineOptions } from '../../src/harness/options.js';
import { measureHostSwitch, parseProbe, resolveSwitchCost } from '../../src/harness/switch-cost.js';
import { switchCostText } from '../../src/report/run/setup-line.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-switch-cost-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('--switch-cost bad values', () => {
  it.each([['-1'], ['fast'], ['100001'], ['1e9'], ['']])('%j: one line, exit 2', async (value) => {
    const r = await runMain(['run', '--switch-cost', value, '--no-output'], tmp);
    expect(r.status, r.stderr).toBe(2);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stderr.split('\n')[0]).toMatch(/--switch-cost must be host, off, or a number of ns from 0 to 100000/);
    expect(r.stdout).toBe('');
  });
  it('a config file with "switchCost": true names the key', async () => {
    const cfg = join(tmp, 'bad.json');
    writeFileSync(cfg, '{ "switchCost": true }\n');
    const r = await runMain(['run', '--config', cfg, '--no-output'], tmp);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/switchCost.*must be host, off, or a number of ns/);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});

describe('--switch-cost good values', () => {
  const resolve = (switchCost?: unknown) =>
    resolveConfig({
      flags: switchCost === undefined ? {} : ({ switchCost } as never),
      cwd: tmp,
      random: () => 0.5,
    });
  it('host by default; off and 0 put no floor in the machine options; a number is the floor', () => {
    expect(resolve().switchCost).toBe('host');
    expect(resolve('OFF').switchCost).toBe('off');
    expect(machineOptions(resolve('off')).switchFloorNs).toBeUndefined();
    expect(machineOptions(resolve('0')).switchFloorNs).toBeUndefined();
    expect(machineOptions(resolve('2500')).switchFloorNs).toBe(2500);
  });
  it('the setup line names the model and its source', () => {
    expect(switchCostText({ switchCost: resolveSwitchCost(2500) })).toBe(
      'switches at least 2.50 µs (model: given; --switch-cost)',
    );
    expect(switchCostText({ switchCost: resolveSwitchCost('off') })).toMatch(/--switch-cost off/);
    expect(
      switchCostText({
        switchCost: { ns: 0, mode: 'host', how: 'not charged: no C compiler (cc: spawn cc ENOENT); give' },
      }),
    ).toBe('switches not charged (no C compiler (cc: spawn cc ENOENT))');
    expect(switchCostText({})).toBe('');
  });
});

describe('the probe', () => {
  it('reads its one line, and refuses anything else', () => {
    expect(parseProbe('pingpong_ns=3100 syscalls_ns=800 switch_ns=2300 cpus=2\n')).toEqual({
      pingpongNs: 3100,
      syscallsNs: 800,
      switchNs: 2300,
    });
    expect(parseProbe('')).toHaveProperty('problem');
    expect(parseProbe('pingpong_ns=700 syscalls_ns=800 switch_ns=-100 cpus=2')).toHaveProperty('problem');
  });
  const hasCc = process.platform === 'linux' && !spawnSync('cc', ['--version']).error;
  it.skipIf(!hasCc)('where there is a C compiler, measures a switch on this host', () => {
    const m = measureHostSwitch();
    expect(m, JSON.stringify(m)).toHaveProperty('switchNs');
    if ('switchNs' in m) {
      expect(m.switchNs).toBeGreaterThan(0);
      expect(m.switchNs).toBe(m.pingpongNs - m.syscallsNs);
    }
  });
  it.skipIf(!hasCc || process.platform !== 'linux')(
    'a cache directory that cannot be made (under /proc, where a recursive mkdir hangs) falls back to the temp directory',
    () => {
      const old = process.env.XDG_CACHE_HOME;
      process.env.XDG_CACHE_HOME = '/proc/deferlab-no-such-dir';
      try {
        expect(measureHostSwitch()).toHaveProperty('switchNs');
      } finally {
        if (old === undefined) delete process.env.XDG_CACHE_HOME;
        else process.env.XDG_CACHE_HOME = old;
      }
    },
  );
});
