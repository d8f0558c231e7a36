/**
 * Every scenario runs end to end at a tiny size and prints every verdict line. The verdicts
 * themselves (reproduced or not) are measurements of this machine and are not asserted; how a
 * verdict is decided from given numbers is (pure functions, no run).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgv } from '../src/cli/args.js';
import { helpText } from '../src/cli/help.js';
import { resolveConfig } from '../src/config/schema.js';
import { TRACING_OFF_NOTE } from '../src/report/run/table.js';
import { readResults } from '../src/report/run/write.js';
import {
  beyondFloor,
  effect,
  pointFloor,
  printVerdicts,
  resultsLine,
  SCENARIO_BOOTS,
  type Verdict,
} from '../src/scenarios/common.js';
import { type Requests, runCpuHog, unboundVerdict } from '../src/scenarios/cpu-hog.js';
import { creditedMixes, fewerEventsP, runEntropy, starves } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { intervalText, ipiRatioText, runIpiStorm } from '../src/scenarios/ipi-storm.js';
import {
  DEFAULT_SIZES,
  FULL_SIZES,
  kthreadSwitchesPerHandoff,
  regressionPlan,
} from '../src/scenarios/random-regression.js';
import { netGroupRun } from '../src/scenarios/random-regression-net.js';
import { fakeIo } from './fixtures/cli-io.js';
import { ctxFor, verdictLines } from './fixtures/scenario-ctx.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-scenarios-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('scenarios at a tiny size', () => {
  it('ipi-storm with one trial: its verdicts, no NaN, its seed, and ipi-storm.json with seed, command and status', async () => {
    const dir = join(tmp, 'ipi');
    const { ctx, out } = ctxFor('ipi-storm', { trials: 1, outDir: dir });
    const code = await runIpiStorm(ctx);
    const text = out();
    const v = verdictLines(text);
    expect(code, text).toBe(0);
    expect(v.some((l) => l.includes('IPIs per item') || l.includes('IPIs with'))).toBe(true);
    expect(v.some((l) => l.includes('throughput'))).toBe(true);
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced|contradicted|inconclusive) — \S/);
    for (const l of v) expect(l).toContain('[no CI: n<2]');
    expect(text).not.toContain('NaN');
    expect(text).toMatch(/^seed 1 \(replay: --seed 1\)$/m);
    const file = join(dir, 'ipi-storm.json');
    expect(text).toContain(`results: ${file}`);
    const json = JSON.parse(readFileSync(file, 'utf8'));
    expect(json).toMatchObject({ seed: 1, command: ['deferlab', 'scenario', 'ipi-storm'], status: 'completed' });
    expect(json.trials).toHaveLength(2);
  });

  it('ipi-storm interrupted says so like the other scenarios, and records it', async () => {
    const dir = join(tmp, 'ipi-int');
    const ac = new AbortController();
    ac.abort();
    const { ctx, out } = ctxFor('ipi-storm', { outDir: dir }, ac.signal);
    const code = await runIpiStorm(ctx);
    expect(code).toBe(130);
    const file = join(dir, 'ipi-storm.json');
    expect(out()).toContain(
      `\ndeferlab: interrupted; the trials finished so far are in the table above and in ${file}\n`,
    );
    expect(out()).not.toContain('stopped');
    expect(out()).toContain('VERDICTS skipped: the run was interrupted');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ status: 'interrupted', trials: [] });
  });

  it('cpu-hog emits its verdicts', async () => {
    const { ctx, out } = ctxFor('cpu-hog');
    const code = await runCpuHog(ctx);
    const v = verdictLines(out());
    expect(code, out()).toBe(0);
    expect(v.filter((l) => l.includes('bound kworker delayed')).length).toBe(2);
    expect(v.filter((l) => l.includes('unbound worker starts most requests within 1 ms')).length).toBe(2);
    // Its default A/A control (an identical bound kworker): its row, and the floor in the verdicts.
    expect(out()).toMatch(/^workqueue\(wq=system\) \(control\) /m);
    expect(out()).toMatch(/^cpu-hog-nice-20: every request → its work starts .*; A\/A control /m);
    for (const l of v) expect(l).toMatch(/: (reproduced|not reproduced|contradicted|inconclusive) — \S/);
    // The setup line says what ran: the hog and the driver, not "irq_only".
    const setup = out()
      .replace(/\n {2}(?=\S)/g, ' ') // the setup line wraps (continuations indented by two): read it whole
      .split('\n')
      .filter((l) => l.startsWith('a CPU hog on CPU 0'));
    expect(setup).toEqual([
      expect.stringMatching(
        /^a CPU hog on CPU 0 at nice -20 and a driver: 200 interrupts\/s \(constant\) on CPU 0, each queuing 20 µs of work; 2 CPUs, HZ 1000, kernel 6\.9, idle halt, kthreads on CPU threads, charged their work only \(model\), hogs on CPU threads(, switches (at least \d+\.\d\d µs \(model: this host's kernel switch, measured at start-up; --switch-cost\)|not charged \([^;]*\)))?(, \d+ helper threads at (SCHED_IDLE(, nice 10 after \d+\.\d s \(one starved\))?|nice 10) \(--host-helpers\))?; 2 trials of 150 ms/,
      ),
      expect.stringMatching(/^a CPU hog on CPU 0 SCHED_FIFO 50 and a driver: /),
    ]);
  });

  it('entropy, untraced, on 2 boots a point: a row per strategy and rate, the tracing note, the boots, and where its results are', async () => {
    const dir = join(tmp, 'entropy-out');
    const { ctx, out } = ctxFor('entropy', { outDir: dir, tracing: false });
    // The scenarios' default, 2 (the other tiny runs take 1 for the wall time): each point's
    // trials split over two machines booted one after the other, tagged with their boot, and said so.
    expect(SCENARIO_BOOTS).toBe(2);
    ctx.boots = SCENARIO_BOOTS;
    const code = await runEntropy(ctx, [2000], []);
    expect(code, out()).toBe(0);
    expect(out()).toContain(
      'each point ran on 2 machine boots: 4 trials per strategy at the first point (2 + 2), 2 on each boot',
    );
    for (const s of (await readResults(join(dir, 'entropy'))).points[0].strategies)
      expect(s.trials.map((t) => t.boot)).toEqual([0, 0, 1, 1]);
    expect(verdictLines(out()).length).toBeGreaterThan(0);
    expect(out()).toMatch(/2000 {3}inline/);
    expect(out()).toMatch(/2000 {3}inline \(control\)/); // its default A/A control
    expect(out()).toContain(`\n${TRACING_OFF_NOTE}\n`);
    expect(out()).toContain(
      `\nresults: ${dir} (sub-run: entropy/; 'deferlab report ${join(dir, 'entropy')}' re-renders it)\n`,
    );
    expect(existsSync(join(dir, 'entropy', 'results.json'))).toBe(true);
  });
});

/** Requests of one strategy: `timed` of `interrupts` served in the window, `slow` of them over 1 ms. */
const q = (
  interrupts: number,
  timed: number,
  slow: number,
  p50 = Number.NaN,
  p99 = Number.NaN,
  max = Number.NaN,
  started = timed,
): Requests => ({ interrupts, timed, slow, untimed: 0, started, p50, p99, max });

describe('cpu-hog verdicts from given numbers (every request, pending ones too)', () => {
  // The bound verdict is judged against the A/A control with an interval over trials and boots:
  // test/scenario-cpu-hog-verdicts.test.ts.
  it.each([
    ['against a starved bound kworker', q(100, 100, 2), q(120, 0, 0), Number.NaN, 'reproduced'],
    ['fewer slow requests than bound, beyond the floor', q(100, 100, 5), q(100, 100, 90), 0.1, 'reproduced'],
    ['fewer slow requests than bound, no control', q(100, 100, 5), q(100, 100, 90), Number.NaN, 'reproduced'],
    ['fewer slow requests than bound, inside the floor', q(100, 100, 5), q(100, 100, 40), 0.5, 'inconclusive'],
    ['most requests slow', q(100, 100, 60), q(100, 100, 90), 0.1, 'not reproduced'],
    ['as many slow requests as bound', q(100, 100, 30), q(100, 100, 30), Number.NaN, 'not reproduced'],
    ['more slow requests than bound, beyond the floor', q(100, 100, 20), q(100, 100, 5), 0.1, 'not reproduced'],
    ['more slow requests than bound, inside the floor', q(100, 100, 11), q(100, 100, 8), 0.034, 'inconclusive'],
    ['too few unbound requests', q(5, 5, 0), q(120, 0, 0), Number.NaN, 'inconclusive'],
  ])('unbound: %s', (_what, u, b, floor, outcome) => {
    expect(unboundVerdict('cpu-hog-fifo', u, b, '2s', floor).outcome).toBe(outcome);
  });
});

describe('the noise-floor rule for metrics without an interval', () => {
  it('the floor is how far the A/A control moved; a difference is a result only beyond it', () => {
    expect(pointFloor(0.9, 0.8)).toBeCloseTo(0.1);
    expect(pointFloor(0.9, undefined)).toBeNaN();
    expect(beyondFloor(0.5, 0.1)).toBe(true);
    expect(beyondFloor(-0.5, 0.1)).toBe(true);
    expect(beyondFloor(0.05, 0.1)).toBe(false);
    expect(beyondFloor(0.01, Number.NaN)).toBe(true); // no control: any difference
    expect(beyondFloor(0, Number.NaN)).toBe(false);
    expect(beyondFloor(Number.NaN, 0.1)).toBe(false);
  });

  it.each([
    [0, 640, Number.NaN, 'starves'],
    [0, 640, 40, 'starves'],
    [2, 5, 4, 'inside floor'], // 2 of 5 bits/s, while an identical inline moved by 4
    [400, 640, 40, 'no'],
    [0, 0, Number.NaN, 'no'], // inline credited nothing: nothing to fall short of
  ] as const)('entropy: %d bits/s against inline %d, floor %d: %s', (bits, inline, floor, says) => {
    expect(starves(bits, inline, floor)).toBe(says);
  });

  it.each([
    // Counts of credited mixes, rates in proportion. The probe's case: inline mixed twice in 0.4 s,
    // the candidate never: chance (p 0.25).
    [0, 2, 'inside floor'],
    [0, 5, 'starves'], // p 1/32
    [3, 40, 'starves'],
    [20, 40, 'no'], // half of inline's: not less than half
    [0, 4, 'inside floor'], // p 1/16
  ] as const)('entropy counted: %d bits against inline %d: %s', (cand, inl, says) => {
    // Rates in proportion to the counts (the same trials on both sides), no control.
    expect(starves(cand, inl, Number.NaN, { cand, inline: inl })).toBe(says);
  });

  it('creditedMixes leaves out the refused and the skipped', () => {
    expect(creditedMixes({ counters: { mixes: 10, mixes_remote: 3, mixes_trylock_skipped: 2 } })).toBe(5);
    expect(creditedMixes({ counters: {} })).toBe(0);
    expect(creditedMixes(undefined)).toBe(0);
  });

  it('fewerEventsP is the binomial tail at 1/2', () => {
    expect(fewerEventsP(0, 2)).toBeCloseTo(0.25, 12);
    expect(fewerEventsP(1, 3)).toBeCloseTo(5 / 16, 12);
    expect(fewerEventsP(0, 0)).toBe(1);
    expect(fewerEventsP(10, 10)).toBeGreaterThan(0.5);
    expect(fewerEventsP(100, 300)).toBeLessThan(1e-10);
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

  it.each([
    // Excludes 0, but an identical copy of the baseline moved as far: no result.
    [{ ciLow: 1, ciHigh: 9, diff: 5, baseline: base, floor: { low: -2, high: 8 } }, 'up', 'open'],
    [{ ciLow: 10, ciHigh: 30, diff: 20, baseline: base, floor: { low: -2, high: 8 } }, 'up', 'shown'],
    [{ ciLow: -30, ciHigh: -10, diff: -20, baseline: base, floor: { low: -8, high: 2 } }, 'down', 'shown'],
    // Below the margin, but the floor reaches past it: what the copy moved cannot be ruled out.
    [{ ciLow: -5, ciHigh: 5, diff: 0, baseline: base, floor: { low: -12, high: 12 } }, 'up', 'open'],
    [{ ciLow: -5, ciHigh: 5, diff: 0, baseline: base, floor: { low: -3, high: 3 } }, 'up', 'ruled out'],
  ] as const)('with an A/A floor %j %s: %s', (interval, direction, expected) => {
    expect(effect(interval, direction)).toBe(expected);
  });
});

describe('printing verdicts', () => {
  const verdicts: Verdict[] = [
    { expectation: 'a', outcome: 'reproduced', detail: 'x' },
    { expectation: 'b', outcome: 'inconclusive', detail: 'y (too few trials: 2; try --trials 10)' },
  ];
  it('one line each', () => {
    const { io, all: out } = fakeIo();
    printVerdicts(io, verdicts, 0);
    expect(out()).toBe(
      '\nVERDICT a: reproduced — x\nVERDICT b: inconclusive — y (too few trials: 2; try --trials 10)\n',
    );
  });

  it('none after an interrupted run: one line says they are skipped', () => {
    const { io, all: out } = fakeIo();
    printVerdicts(io, verdicts, 130);
    expect(out()).toBe('\nVERDICTS skipped: the run was interrupted, and verdicts from partial data would mislead\n');
  });
});

describe('scenario tables from given numbers', () => {
  it('kthread switches per hand-off: summed switches over summed hand-offs, n/a without either', () => {
    expect(kthreadSwitchesPerHandoff({ counters: { kthread_switches: 250, handoffs: 100 } })).toBe('2.50');
    expect(kthreadSwitchesPerHandoff({ counters: { kthread_switches: 0, handoffs: 100 } })).toBe('0.00');
    expect(kthreadSwitchesPerHandoff({ counters: { handoffs: 100 } })).toBe('n/a'); // older results
    expect(kthreadSwitchesPerHandoff({ counters: { kthread_switches: 3, handoffs: 0 } })).toBe('n/a');
    expect(kthreadSwitchesPerHandoff({ counters: { kthread_switches: Number.NaN, handoffs: 5 } })).toBe('n/a');
  });

  it.each([
    [600, 250, '2.40x fewer IPIs per item'],
    [100, 141, '1.41x more IPIs per item'],
    [100, 0, 'no IPIs with if-idle against 100.0 per 1000 items with always'],
    [0, 0, 'no IPIs with either policy'],
    [Number.NaN, 3, 'IPIs per item not measured'],
  ])('ipi-storm: always %d, if-idle %d per 1000 items: %s', (always, ifIdle, text) => {
    expect(ipiRatioText(always, ifIdle)).toBe(text);
  });

  it('ipi-storm intervals: the bounds, or no CI with one trial', () => {
    expect(intervalText(-563.61, -522.3, 1)).toBe('[-563.6, -522.3]');
    expect(intervalText(Number.NaN, Number.NaN, 0)).toBe('[no CI: n<2]');
  });

  it("where a scenario's results went", () => {
    expect(resultsLine(null, ['entropy'])).toBeUndefined();
    expect(resultsLine('/r/hog', ['cpu-hog-nice-20', 'cpu-hog-fifo'])).toBe(
      "results: /r/hog (sub-runs: cpu-hog-nice-20/, cpu-hog-fifo/; 'deferlab report /r/hog/<sub-run>' re-renders one)",
    );
    expect(resultsLine('/r/e', ['entropy'])).toBe(
      "results: /r/e (sub-run: entropy/; 'deferlab report /r/e/entropy' re-renders it)",
    );
  });
});

/** The config `deferlab scenario NAME ARGS` resolves (as src/cli/main.ts does), without running it. */
function resolvedFor(name: string, args: string[]) {
  const cmd = parseArgv(['scenario', name, ...args], { scenarios: Object.keys(SCENARIOS) });
  if (cmd.command !== 'scenario') throw new Error(`not a scenario command: ${cmd.command}`);
  const preset = SCENARIOS[name];
  return resolveConfig({
    flags: cmd.flags,
    preset: { name, config: preset.config },
    ...(preset.rules ? { rules: { command: `scenario ${name}`, rules: preset.rules } } : {}),
    cwd: process.cwd(),
  });
}

describe("random-regression's parts run with the settings its help states", () => {
  /** Each sub-run's --until, by part, at the given sizes. */
  function untilByPart(args: string[], sizes = DEFAULT_SIZES) {
    const plan = regressionPlan(resolvedFor('random-regression', args), sizes);
    return {
      main: plan.main.until,
      beside: plan.beside.map((b) => b.config.until),
      net: sizes.net.map((g) => netGroupRun(plan.net, g).config.until),
      triggers: plan.triggers.map((t) => t.config.until),
      control: [plan.main, plan.net, ...plan.triggers.map((t) => t.config)].map((c) => c.control),
      besideControl: plan.beside.map((b) => b.config.control),
    };
  }

  it('part 2 adds rounds under --until 10, capped by --max-time 15s; parts 1 and 3 run --trials rounds', () => {
    const u = untilByPart([], FULL_SIZES);
    expect(u.net).toEqual(FULL_SIZES.net.map(() => ({ pct: 10, maxTimeMs: 15_000 })));
    expect(u.main).toBeNull();
    expect(u.beside).toEqual([null]); // 6.1 beside 5.15
    expect(u.triggers).toEqual(FULL_SIZES.triggers.map(() => null));
    // 5.15's baseline is the bisected commit's trylock mix; 6.1 beside it has the blocking inline.
    expect(new Set(u.control), 'the A/A control in every part').toEqual(new Set(['inline_trylock (control)']));
    expect(u.besideControl).toEqual(['inline (control)']);
    // What the help says it runs with.
    expect(helpText('scenario', SCENARIOS, 'random-regression')).toMatch(
      /runs with --control, --until 10 on part 2 \(capped by --max-time\s+15s/,
    );
  });

  it("part 2 takes the user's --until and --max-time, and --until off", () => {
    expect(untilByPart(['--until', '5', '--max-time', '30s']).net).toEqual(
      DEFAULT_SIZES.net.map(() => ({ pct: 5, maxTimeMs: 30_000 })),
    );
    const off = untilByPart(['--until', 'off', '--no-control']);
    expect(off.net).toEqual(DEFAULT_SIZES.net.map(() => null));
    expect(new Set(off.control)).toEqual(new Set([null]));
  });

  it('--irq-rate beside a --sweep of irq_rate: part 1 sweeps it, part 2 still runs at it', () => {
    const c = resolvedFor('random-regression', ['--sweep', 'irq_rate:1k,20k', '--irq-rate', '0']);
    const plan = regressionPlan(c);
    expect(plan.main.sweep).toEqual({ param: 'irq_rate', values: [1000, 20000] });
    expect(netGroupRun(plan.net, DEFAULT_SIZES.net[0]).config.irq.rate).toBe(0);
  });

  it("the baseline is the kernel's inline before the change: inline_trylock on 5.15 with the blocking inline beside it", () => {
    const plan = regressionPlan(resolvedFor('random-regression', []), FULL_SIZES);
    const labels = (c: { strategies: readonly { label: string }[] }) => c.strategies.map((s) => s.label);
    expect(plan.main.baseline).toBe('inline_trylock');
    expect(labels(plan.main).slice(0, 3)).toEqual(['inline_trylock', 'inline', 'workqueue']);
    expect([plan.net.baseline, ...plan.triggers.map((t) => t.config.baseline)]).toEqual(
      Array(1 + plan.triggers.length).fill('inline_trylock'),
    );
    expect(labels(plan.net)).toEqual(['inline_trylock', 'workqueue']);
    // 6.1 beside it: no trylock variant, inline is the baseline.
    expect(plan.beside.map((b) => [b.config.kernel, b.config.baseline, labels(b.config)[0]])).toEqual([
      ['6.1', 'inline', 'inline'],
    ]);
    const on69 = regressionPlan(resolvedFor('random-regression', ['--kernel', '6.9']));
    expect(on69.main.baseline).toBe('inline');
    expect(labels(on69.main)).not.toContain('inline_trylock');
  });

  it("each part's sweep: the user's --sweep replaces part 1's sizes only", () => {
    const plan = regressionPlan(resolvedFor('random-regression', ['--sweep', 'msg_size:1K,2K']));
    expect(plan.main.sweep).toEqual({ param: 'msg_size', values: [1024, 2048] });
    expect(DEFAULT_SIZES.net.map((g) => netGroupRun(plan.net, g).config.sweep)).toEqual(
      DEFAULT_SIZES.net.map((g) => ({ param: 'msg_size', values: g.msgSizes })),
    );
    expect(plan.triggers.map((t) => [t.config.fastPool.trigger, t.config.sweep])).toEqual(
      DEFAULT_SIZES.triggers.map((t) => [t, { param: 'irq_rate', values: DEFAULT_SIZES.rates }]),
    );
  });
});
