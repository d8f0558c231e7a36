/**
 * Every scenario runs end to end at a tiny size and prints every verdict line. The verdicts
 * themselves (reproduced or not) are measurements of this machine and are not asserted; how a
 * verdict is decided from given numbers is (pure functions, no run).
 */
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../src/cli/main.js';
import { resolveConfig } from '../src/config/schema.js';
import { effect, printVerdicts, type Verdict } from '../src/scenarios/common.js';
import { boundVerdict, type Delays, runCpuHog, unboundVerdict } from '../src/scenarios/cpu-hog.js';
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
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced|inconclusive) — \S/);
  });

  it('ipi-storm emits its verdicts', async () => {
    const { ctx, out } = ctxFor('ipi-storm');
    const code = await runIpiStorm(ctx);
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    expect(v.some((l) => l.includes('fewer IPIs'))).toBe(true);
    expect(v.some((l) => l.includes('throughput'))).toBe(true);
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced|inconclusive) — \S/);
  });

  it('cpu-hog emits its verdicts', async () => {
    const { ctx, out } = ctxFor('cpu-hog');
    const code = await runCpuHog(ctx);
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    expect(v.filter((l) => l.includes('bound kworker delayed')).length).toBe(2);
    expect(v.filter((l) => l.includes('unbound worker waits')).length).toBe(2);
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced|inconclusive) — \S/);
  });

  it('entropy emits its verdicts and a row per strategy and rate', async () => {
    const { ctx, out } = ctxFor('entropy');
    const code = await runEntropy(ctx, [2000]);
    expect(code, out()).toBe(0);
    expect(verdictLines(out()).length).toBeGreaterThan(0);
    expect(out()).toMatch(/2000 {3}inline/);
  });
});

const ms = 1e6;
const us = 1e3;
const d = (started: number, interrupts: number, p50 = Number.NaN, p99 = Number.NaN, max = Number.NaN): Delays => ({
  started,
  interrupts,
  p50,
  p99,
  max,
});

describe('cpu-hog verdicts from given numbers', () => {
  it('bound work queued and never started in the window is reproduced: starved', () => {
    const v = boundVerdict('cpu-hog-fifo', d(0, 120), '2s');
    expect(v).toEqual({
      expectation: 'cpu-hog-fifo: bound kworker delayed by milliseconds',
      outcome: 'reproduced',
      detail:
        "bound work never started in the measured window (0 of 120 interrupts' work started: starved) (the seed: up to 30 ms)",
    });
    expect(boundVerdict('cpu-hog-nice-20', d(0, 120), '2s').outcome).toBe('reproduced');
  });

  it('no interrupt, no work: inconclusive', () => {
    expect(boundVerdict('cpu-hog-fifo', d(0, 0), '2s').outcome).toBe('inconclusive');
  });

  it.each([
    ['a millisecond max', d(400, 400, 4 * ms, 20 * ms, 30 * ms), 'reproduced'],
    ['a millisecond max from a starved kworker', d(3, 120, 0.6 * ms, 4 * ms, 4 * ms), 'reproduced'],
    ['microseconds from enough items', d(400, 400, 20 * us, 80 * us, 200 * us), 'not reproduced'],
    ['microseconds from a few items', d(5, 6, 20 * us, 80 * us, 200 * us), 'inconclusive'],
  ])('bound: %s', (_what, b, outcome) => {
    expect(boundVerdict('cpu-hog-nice-20', b, '2s').outcome).toBe(outcome);
  });

  it.each([
    ['against a starved bound kworker', d(100, 100, 40 * us, 2 * ms, 40 * ms), d(0, 120), 'reproduced'],
    [
      'against a bound kworker that rarely ran',
      d(100, 100, 40 * us, 30 * ms, 40 * ms),
      d(3, 120, 1, 4 * ms, 4 * ms),
      'reproduced',
    ],
    [
      'a p99 below the bound one',
      d(100, 100, 40 * us, 900 * us, 5 * ms),
      d(100, 100, 4 * ms, 70 * ms, 200 * ms),
      'reproduced',
    ],
    [
      'a p50 of milliseconds',
      d(100, 100, 2 * ms, 3 * ms, 5 * ms),
      d(100, 100, 4 * ms, 70 * ms, 200 * ms),
      'not reproduced',
    ],
    ['too few unbound items', d(5, 5, 40 * us, 90 * us, 90 * us), d(0, 120), 'inconclusive'],
  ])('unbound: %s', (_what, u, b, outcome) => {
    expect(unboundVerdict('cpu-hog-fifo', u, b, '2s').outcome).toBe(outcome);
  });
});

describe('deciding from a paired interval', () => {
  const base = 100;
  it.each([
    [{ ciLow: 1, ciHigh: 30, baseline: base }, 'up', 'shown'],
    [{ ciLow: -5, ciHigh: 5, baseline: base }, 'up', 'ruled out'],
    [{ ciLow: -5, ciHigh: 15, baseline: base }, 'up', 'open'],
    [{ ciLow: -30, ciHigh: -1, baseline: base }, 'up', 'ruled out'],
    [{ ciLow: -30, ciHigh: -1, baseline: base }, 'down', 'shown'],
    [{ ciLow: -15, ciHigh: 5, baseline: base }, 'down', 'open'],
    [{ ciLow: Number.NaN, ciHigh: Number.NaN, baseline: base }, 'up', 'open'],
    [undefined, 'up', 'open'],
  ] as const)('%j %s: %s', (interval, direction, expected) => {
    expect(effect(interval, direction)).toBe(expected);
  });
});

describe('printing verdicts', () => {
  const verdicts: Verdict[] = [
    { expectation: 'a', outcome: 'reproduced', detail: 'x' },
    { expectation: 'b', outcome: 'inconclusive', detail: 'y (too few trials: 2; try --trials 10)' },
  ];
  it('one line each', () => {
    const { io, out } = capture();
    printVerdicts(io, verdicts, 0);
    expect(out()).toBe(
      '\nVERDICT a: reproduced — x\nVERDICT b: inconclusive — y (too few trials: 2; try --trials 10)\n',
    );
  });

  it('none after an interrupted run: one line says they are skipped', () => {
    const { io, out } = capture();
    printVerdicts(io, verdicts, 130);
    expect(out()).toBe('\nVERDICTS skipped: the run was interrupted, and verdicts from partial data would mislead\n');
  });
});
