/**
 * Every scenario's help says what it runs with, and the config it resolves does that (issue #27
 * item 6): --control, --until and its cap from the "runs with" row, the sweep from its sweeps
 * row, and the boots per point from the command's text. Pure: nothing is run.
 */
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../src/cli/args.js';
import { helpText } from '../src/cli/help.js';
import { resolveConfig } from '../src/config/schema.js';
import { durationMsIn } from '../src/config/units.js';
import { bootConfig } from '../src/harness/boots.js';
import { SCENARIO_BOOTS } from '../src/scenarios/common.js';
import { ENTROPY_RATES } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { DEFAULT_SIZES, regressionPlan } from '../src/scenarios/random-regression.js';
import { netGroupRun } from '../src/scenarios/random-regression-net.js';

function resolvedFor(name: string, args: string[] = []) {
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

/** A duration as the help prints it (`15s`), in ms. */
function msOf(text: string): number {
  const p = durationMsIn(0, 86_400_000)(text);
  if (!p.ok) throw new Error(`not a duration: ${text}`);
  return p.value;
}

/** The help's "runs with" row, unwrapped: `--control`, `--until N`, the cap. */
function runsWith(name: string) {
  const text = helpText('scenario', SCENARIOS, name).replace(/\n\s+/g, ' ');
  const row = /runs with ([^;]*);/.exec(text)?.[1] ?? '';
  const until = /--until (\d+(?:\.\d+)?)/.exec(row);
  const cap = /--max-time (\S+)/.exec(row);
  return {
    text,
    control: row.includes('--control'),
    until: until ? Number(until[1]) : null,
    cap: cap ? msOf(cap[1]) : null,
  };
}

describe('each scenario resolves what its help says', () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(`${name}: --control and --until as its "runs with" row says`, () => {
      const h = runsWith(name);
      const c = resolvedFor(name);
      expect(Boolean(c.control), `${name} --control`).toBe(h.control);
      if (name === 'random-regression') {
        // "--until 10 on part 2": parts 1 and 3 run --trials rounds (tested in scenarios.test.ts).
        const plan = regressionPlan(c);
        expect(DEFAULT_SIZES.net.map((g) => netGroupRun(plan.net, g).config.until)).toEqual(
          DEFAULT_SIZES.net.map(() => ({ pct: h.until, maxTimeMs: h.cap })),
        );
        expect(plan.main.until).toBeNull();
      } else if (h.until === null) expect(c.until, `${name} --until`).toBeNull();
      else expect(c.until, `${name} --until`).toMatchObject({ pct: h.until, maxTimeMs: h.cap });
    });
  }

  it("each scenario's help gives examples of that scenario, every one of which it takes", () => {
    for (const name of Object.keys(SCENARIOS)) {
      const text = helpText('scenario', SCENARIOS, name);
      const cmds = [...text.matchAll(/^ {2}deferlab (scenario .*)$/gm)].map((m) => m[1].split(' '));
      expect(cmds.length, name).toBeGreaterThanOrEqual(2);
      for (const argv of cmds) {
        expect(argv[1], `${name}'s example names it`).toBe(name);
        expect(() => resolvedFor(name, argv.slice(2)), argv.join(' ')).not.toThrow();
      }
    }
  });

  it('entropy sweeps the rates its help names', () => {
    const { text } = runsWith('entropy');
    const rates = /sweeps irq_rate ([\dk, ]+) per CPU/.exec(text)?.[1];
    expect(rates?.split(', ').map((r) => (r.endsWith('k') ? Number(r.slice(0, -1)) * 1000 : Number(r)))).toEqual(
      ENTROPY_RATES,
    );
    expect(resolvedFor('entropy').sweep).toEqual({ param: 'irq_rate', values: ENTROPY_RATES });
  });

  it('every sweep point on the boots the help states, --trials and --max-time split between them', () => {
    const text = helpText('scenario', SCENARIOS).replace(/\n\s*/g, ' ');
    expect(text).toContain(
      `Every sweep point runs on ${SCENARIO_BOOTS} machine boots, its --trials and --max-time split between them (at least 2 trials a boot)`,
    );
    const c = resolvedFor('cpu-hog');
    const b = bootConfig(c, SCENARIO_BOOTS);
    expect(b.trials).toBe(Math.max(2, Math.ceil(c.trials / SCENARIO_BOOTS)));
    expect(b.until?.maxTimeMs).toBe(Math.ceil((c.until?.maxTimeMs ?? 0) / SCENARIO_BOOTS));
  });
});
