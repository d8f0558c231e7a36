/**
 * Defaults that depend on `--kernel`, as --help states them: each kernel profile's value in the
 * help must be the one the resolver actually uses (the profile table, src/kernel/profiles.ts),
 * for --hz (5.15 runs at HZ 1000, the others at 250), --softirq-defer, and random-regression's
 * baseline (inline_trylock on 5.15, inline elsewhere).
 */
import { describe, expect, it } from 'vitest';
import { helpText } from '../../src/cli/help.js';
import { resolveConfig } from '../../src/config/schema.js';
import { KERNEL_NAMES, KERNEL_PROFILES, type KernelName } from '../../src/kernel/profiles.js';
import { SCENARIOS } from '../../src/scenarios/index.js';
import { randomRegressionPreset, regressionPlan } from '../../src/scenarios/random-regression.js';

/** The help with its wrapping undone: one space wherever it had spaces or a line break. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** `1000 for 5.15, 250 for 6.1, 6.9 and 6.18` → kernel → value. */
function perKernel(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of text.split(/, (?=\S+ for )/)) {
    const m = /^(\S+) for (.+)$/.exec(group);
    expect(m, `a "VALUE for KERNELS" group: ${group}`).not.toBeNull();
    for (const k of m![2].split(/, | and /)) out.set(k, m![1]);
  }
  return out;
}

/** The text of `flag`'s default in `deferlab --help`, after "the --kernel profile's: ". */
function kernelDefault(flag: string): string {
  const help = flat(helpText('run'));
  const m = new RegExp(`${flag} \\S+ .*? default: the --kernel profile's: (.*?) --[a-z]`).exec(help);
  expect(m, `${flag}'s default is given per kernel profile`).not.toBeNull();
  return m![1];
}

describe('--help states the per-kernel defaults the resolver uses', () => {
  it('--hz: each profile with the HZ a run under it gets (5.15: 1000)', () => {
    const stated = perKernel(kernelDefault('--hz'));
    for (const k of KERNEL_NAMES) {
      const hz = resolveConfig({ cwd: process.cwd(), flags: { kernel: k } }).hz;
      expect(stated.get(k), `--kernel ${k}`).toBe(String(hz));
    }
    expect(stated.get('5.15')).toBe('1000');
    expect(stated.size).toBe(KERNEL_NAMES.length);
  });

  it('--softirq-defer: on or off per profile, every profile named', () => {
    const stated = perKernel(kernelDefault('--softirq-defer'));
    for (const k of KERNEL_NAMES)
      expect(stated.get(k), `--kernel ${k}`).toBe(KERNEL_PROFILES[k].softirq.ksoftirqdDefers ? 'on' : 'off');
  });
});

describe("scenario random-regression --help: part 1's baseline per --kernel", () => {
  it('names, for each kernel, the baseline and strategy count the scenario runs there', () => {
    const help = flat(helpText('scenario', SCENARIOS, 'random-regression'));
    const part1 = /part 1: .*? per --kernel: (.*?); msg_size/.exec(help);
    expect(part1, help).not.toBeNull();
    const stated = new Map<string, { base: string; n: number }>();
    for (const m of part1![1].matchAll(
      /([a-z_]+)(?: with [a-z ]+?)? \((\d+) strategies\) for ((?:[\d.]+(?:, | and )?)+)/g,
    ))
      for (const k of m[3].split(/, | and /).filter(Boolean)) stated.set(k, { base: m[1], n: Number(m[2]) });
    for (const kernel of KERNEL_NAMES) {
      const config = resolveConfig({
        cwd: process.cwd(),
        preset: { name: 'random-regression', config: randomRegressionPreset.config },
        flags: { kernel: kernel as KernelName },
      });
      const main = regressionPlan(config).main;
      expect(stated.get(kernel), `--kernel ${kernel}`).toEqual({ base: main.baseline, n: main.strategies.length });
    }
    expect(stated.get('5.15')?.base).toBe('inline_trylock');
    expect(stated.get('6.1')?.base).toBe('inline');
  });
});
