/**
 * Every scenario runs end to end at a tiny size and prints every verdict line. The verdicts
 * themselves (reproduced or not) are measurements of this machine and are not asserted.
 */
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../src/cli/main.js';
import { resolveConfig } from '../src/config/schema.js';
import { runCpuHog } from '../src/scenarios/cpu-hog.js';
import { runEntropy } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { runIpiStorm } from '../src/scenarios/ipi-storm.js';
import { runRandomRegression } from '../src/scenarios/random-regression.js';

function capture(): { io: CliIo; out: () => string } {
  let text = '';
  const add = (s: string) => {
    text += s;
  };
  const io: CliIo = {
    stdout: add,
    stderr: add,
    isTTY: false,
    cwd: process.cwd(),
    env: {},
  };
  return { io, out: () => text };
}

function ctxFor(name: string, extra: Record<string, unknown> = {}) {
  const preset = SCENARIOS[name];
  const config = resolveConfig({
    preset: { name, config: preset.config },
    flags: { trials: 2, trialMs: 150, warmupMs: 50, outDir: null, seed: 1, ...extra } as never,
    cwd: process.cwd(),
  });
  const { io, out } = capture();
  return { ctx: { config, io, signal: new AbortController().signal, argv: [] }, out };
}

const verdictLines = (text: string) => text.split('\n').filter((l) => l.startsWith('VERDICT '));

describe('scenarios at a tiny size', () => {
  it('random-regression emits its verdicts', async () => {
    const { ctx, out } = ctxFor('random-regression');
    const code = await runRandomRegression(ctx, { msgSizes: [4096], rates: [20000], triggers: [16] });
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    for (const key of [
      'workqueue measurably worse',
      'workqueue(wq=system) measurably worse',
      'tasklet within noise',
      'timer within noise',
      'timer(deferrable=true) within noise',
      "reaches the seed's 10%",
    ]) {
      expect(
        v.some((l) => l.includes(key)),
        `${key} in:\n${v.join('\n')}`,
      ).toBe(true);
    }
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced) — \S/);
  });

  it('ipi-storm emits its verdicts', async () => {
    const { ctx, out } = ctxFor('ipi-storm');
    const code = await runIpiStorm(ctx);
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    expect(v.some((l) => l.includes('fewer IPIs'))).toBe(true);
    expect(v.some((l) => l.includes('throughput'))).toBe(true);
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced) — \S/);
  });

  it('cpu-hog emits its verdicts', async () => {
    const { ctx, out } = ctxFor('cpu-hog');
    const code = await runCpuHog(ctx);
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    expect(v.filter((l) => l.includes('bound kworker delayed')).length).toBe(2);
    expect(v.filter((l) => l.includes('unbound worker waits')).length).toBe(2);
  });

  it('entropy emits its verdicts and a row per strategy and rate', async () => {
    const { ctx, out } = ctxFor('entropy');
    const code = await runEntropy(ctx, [2000]);
    expect(code, out()).toBe(0);
    expect(verdictLines(out()).length).toBeGreaterThan(0);
    expect(out()).toMatch(/2000 {3}inline/);
  });
});
