/**
 * main() with fake commands that record what they were called with.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliDeps, type CompareRequest, main } from '../../src/cli/main.js';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { runFailed } from '../../src/config/errors.js';
import type { ResolvedConfig, StrategySpec } from '../../src/config/schema.js';
import { formatSize } from '../../src/config/units.js';
import { DeferlabError } from '../../src/errors.js';
import { ENTROPY_RATES } from '../../src/scenarios/entropy.js';
import { SCENARIOS } from '../../src/scenarios/index.js';
import { DEFAULT_SIZES } from '../../src/scenarios/random-regression.js';
import { fakeIo } from '../fixtures/cli-io.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-main-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
writeFileSync(join(cwd, 'my-strategy.ts'), 'export default class {}\n');
mkdirSync(join(cwd, 'results'));

type Call =
  | { command: 'run' | 'demo'; config: ResolvedConfig }
  | { command: 'scenario'; name: string; config: ResolvedConfig }
  | { command: 'list' }
  | { command: 'checkStrategy'; spec: StrategySpec }
  | { command: 'report'; dir: string }
  | { command: 'compare'; request: CompareRequest };

function harness(overrides: Partial<CliDeps> = {}, env: Record<string, string> = {}) {
  const calls: Call[] = [];
  const { io, stdout, stderr } = fakeIo({ cwd, env });
  const record = (call: Call) => {
    calls.push(call);
    return Promise.resolve(0);
  };
  const deps: CliDeps = {
    version: '1.2.3',
    run: (config) => record({ command: 'run', config }),
    demo: (config) => record({ command: 'demo', config }),
    scenario: (name, config) => record({ command: 'scenario', name, config }),
    list: () => record({ command: 'list' }),
    checkStrategy: (spec) => record({ command: 'checkStrategy', spec }),
    report: (dir) => record({ command: 'report', dir }),
    compare: (request) => record({ command: 'compare', request }),
    ...overrides,
  };
  return {
    calls,
    run: (argv: string[]) => main(argv, deps, io),
    stdout,
    stderr,
  };
}

function onlyConfig(calls: Call[]): ResolvedConfig {
  expect(calls).toHaveLength(1);
  const call = calls[0];
  if (!('config' in call)) throw new Error(`expected a command with a config, got ${call.command}`);
  return call.config;
}

describe('dispatch', () => {
  it('runs the comparison when no command is given', async () => {
    const h = harness();
    expect(await h.run([])).toBe(0);
    expect(h.calls[0].command).toBe('run');
    expect(onlyConfig(h.calls).strategies.map((s) => s.label)).toEqual([
      'inline',
      'workqueue',
      'workqueue(wq=system)',
      'tasklet',
      'timer',
      'timer(deferrable=true)',
      'unbound',
      'irq_work',
      'bh_workqueue',
    ]);
    expect(h.stderr()).toBe('');
  });

  it('passes the resolved flags to run', async () => {
    const h = harness();
    expect(await h.run(['run', '--cpus', '4', '--duration', '1.5s', '--msg-size', '4K', '--no-output'])).toBe(0);
    const config = onlyConfig(h.calls);
    expect(config.cpus).toBe(4);
    expect(config.trialMs).toBe(1500);
    expect(config.workload).toEqual(tcpLatOptions({ msgSize: 4096 }));
    expect(config.outDir).toBeNull();
  });

  it('parses -oo msg_size:4K:1024K:*2 into 9 sizes', async () => {
    const h = harness();
    expect(await h.run(['-oo', 'msg_size:4K:1024K:*2'])).toBe(0);
    expect(onlyConfig(h.calls).sweep).toEqual({
      param: 'msg_size',
      values: [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576],
    });
  });

  it("resolves a user's strategy path against io.cwd", async () => {
    const h = harness();
    expect(await h.run(['--strategy', './my-strategy.ts', '--strategy', 'inline'])).toBe(0);
    expect(onlyConfig(h.calls).strategies).toEqual([
      { label: 'my-strategy.ts', name: 'my-strategy', kind: 'file', file: join(cwd, 'my-strategy.ts'), options: {} },
      { label: 'inline', name: 'inline', kind: 'builtin', options: {} },
    ]);
  });

  it('runs demo and scenario with their configs', async () => {
    const h = harness();
    expect(await h.run(['demo', '--cpus', '3'])).toBe(0);
    expect(await h.run(['scenario', 'cpu-hog', '--trials', '2'])).toBe(0);
    expect(h.calls[0]).toMatchObject({ command: 'demo', config: { cpus: 3 } });
    expect(h.calls[1]).toMatchObject({ command: 'scenario', name: 'cpu-hog', config: { trials: 2 } });
  });

  it('applies a known scenario preset below the flags, and rejects an unknown scenario', async () => {
    const scenarios = {
      'cpu-hog': { summary: 'a hog on CPU 0', config: { cpus: 4, trials: 3, workload: { kind: 'irq_only' } } },
    } as const;
    const h = harness({ scenarios });
    expect(await h.run(['scenario', 'cpu-hog', '--trials', '7'])).toBe(0);
    expect(h.calls[0]).toMatchObject({ config: { cpus: 4, trials: 7, workload: { kind: 'irq_only' } } });

    expect(await h.run(['scenario', 'cpu-hgo'])).toBe(2);
    expect(h.stderr()).toBe(
      'deferlab: scenario must be one of cpu-hog (got "cpu-hgo"); \'deferlab list\' describes them\n' +
        "Run 'deferlab --help' for usage.\n",
    );
  });

  it('names a preset setting by its scenario', async () => {
    const scenarios = { tiny: { summary: '', config: { cpus: 1 } } };
    const h = harness({ scenarios });
    expect(await h.run(['scenario', 'tiny'])).toBe(2);
    expect(h.stderr()).toBe(
      'deferlab: --server-cpu must be a CPU id from 0 to 0 (cpus 1 in scenario tiny) (got 1, the default); ' +
        'tcp_lat needs 2 CPUs: raise the CPU count to 2, or use the irq_only workload\n' +
        "Run 'deferlab --help' for usage.\n",
    );
  });

  it('lists', async () => {
    const h = harness();
    expect(await h.run(['list'])).toBe(0);
    expect(h.calls).toEqual([{ command: 'list' }]);
  });

  it('checks a strategy file with its options, resolved against io.cwd', async () => {
    const h = harness();
    expect(await h.run(['check-strategy', 'my-strategy.ts', '--option', 'batch=8', '--option', 'eager=true'])).toBe(0);
    expect(h.calls).toEqual([
      {
        command: 'checkStrategy',
        spec: {
          label: 'my-strategy.ts(batch=8,eager=true)',
          name: 'my-strategy',
          kind: 'file',
          file: join(cwd, 'my-strategy.ts'),
          options: { batch: 8, eager: true },
        },
      },
    ]);
  });

  it('reports from an absolute results directory', async () => {
    const h = harness();
    expect(await h.run(['report', 'results'])).toBe(0);
    expect(h.calls).toEqual([{ command: 'report', dir: join(cwd, 'results') }]);
  });

  it("returns the command's exit status", async () => {
    const h = harness({ run: async () => 1 });
    expect(await h.run([])).toBe(1);
  });
});

describe('beforeCommand (where the CLI starts itself again)', () => {
  it('is called with the command once its input is checked, before the command runs', async () => {
    const seen: string[] = [];
    const h = harness({
      beforeCommand: async (command) => {
        seen.push(`before ${command}`);
      },
      run: async () => {
        seen.push('run');
        return 0;
      },
    });
    expect(await h.run(['run', '--trials', '2'])).toBe(0);
    expect(seen).toEqual(['before run', 'run']);
  });

  it('is not called for bad input: the first process refuses it alone', async () => {
    const seen: string[] = [];
    const h = harness({
      beforeCommand: async (command) => {
        seen.push(command);
      },
    });
    expect(await h.run(['run', '--trials', '0'])).toBe(2);
    expect(await h.run(['run', '--hz', '7'])).toBe(2);
    expect(seen).toEqual([]);
    expect(await h.run(['--version'])).toBe(0);
    expect(seen).toEqual(['version']);
  });
});

describe('the default baseline', () => {
  it.each([
    [['--strategy', 'tasklet'], 'tasklet'],
    [['--strategy', 'workqueue', '--strategy', 'tasklet'], 'workqueue'],
    [['--strategy', 'tasklet', '--strategy', 'inline'], 'inline'],
    [['--strategy', 'timer:deferrable=true', '--strategy', 'tasklet'], 'timer(deferrable=true)'],
    [[], 'inline'],
  ])('%j: inline when listed, else the first strategy', async (argv, baseline) => {
    const h = harness();
    expect(await h.run(argv)).toBe(0);
    expect(onlyConfig(h.calls).baseline).toBe(baseline);
    expect(h.stderr()).toBe('');
  });

  it.each([
    ['the spec as given to --strategy', './my-strategy.ts:delay=2'],
    ['the spec with an absolute path', `${join(cwd, 'my-strategy.ts')}:delay=2`],
    ['the label', 'my-strategy.ts(delay=2)'],
  ])('--baseline names a strategy file by %s', async (_what, baseline) => {
    const h = harness();
    const argv = ['run', '--strategy', './my-strategy.ts:delay=2', '--strategy', 'inline', '--baseline', baseline];
    expect(await h.run(argv)).toBe(0);
    expect(h.stderr()).toBe('');
    expect(onlyConfig(h.calls).baseline).toBe('my-strategy.ts(delay=2)');
  });

  it('a given --baseline is never replaced', async () => {
    const h = harness();
    expect(await h.run(['--strategy', 'workqueue', '--strategy', 'tasklet', '--baseline', 'tasklet'])).toBe(0);
    expect(onlyConfig(h.calls).baseline).toBe('tasklet');
  });
});

/**
 * [scenario, argv after its name, what the command receives]: the options each scenario honours
 * reach it, over the scenario's own settings (the real scenario definitions; nothing run).
 */
const SCENARIO_HONOURS: [string, string[], Record<string, unknown>][] = [
  [
    'cpu-hog',
    [],
    { trials: 3, trialMs: 2000, hz: 1000, irq: { rate: 200, cpus: [0] }, workload: { kind: 'irq_only' } },
  ],
  ['cpu-hog', ['--trials', '2', '--duration', '300ms', '--warmup', '0'], { trials: 2, trialMs: 300, warmupMs: 0 }],
  ['cpu-hog', ['--seed', '7', '--hz', '250', '--cpus', '4'], { seed: 7, hz: 250, cpus: 4 }],
  ['cpu-hog', ['--irq-rate', '500'], { irq: { rate: 500, cpus: [0] } }],
  ['cpu-hog', ['--irq-pattern', 'bursts', '--irq-burst', '8'], { irq: { pattern: 'bursts', burstSize: 8 } }],
  ['cpu-hog', ['--notify', 'always', '--unbound-workers', '1'], { notify: 'always', unboundWorkers: 1 }],
  [
    'cpu-hog',
    ['--lock-spins', '10', '--idle', 'halt', '--kthreads', 'cpu', '--watchdog', '5s'],
    { lockSpins: 10, idle: 'halt', kthreads: 'cpu', watchdogMs: 5000 },
  ],
  ['cpu-hog', ['--host-stalls', 'drop', '--host-steal'], { hostStalls: 'drop', hostSteal: true }],
  ['cpu-hog', ['--hogs', 'thread'], { hogs: 'thread' }],
  ['cpu-hog', ['--no-output'], { outDir: null }],
  ['entropy', [], { sweep: { param: 'irq_rate', values: [200, 2000, 20000] }, workload: { kind: 'irq_only' } }],
  ['entropy', ['--sweep', 'irq_rate:5k'], { sweep: { param: 'irq_rate', values: [5000] } }],
  ['entropy', ['--trigger', '16', '--fastmix', '32'], { fastPool: { trigger: 16, variant: '32' } }],
  ['entropy', ['--irq-cpus', '0', '--irq-pattern', 'poisson'], { irq: { cpus: [0], pattern: 'poisson' } }],
  ['entropy', ['--no-tracing', '--cpus', '3', '--trials', '4'], { tracing: false, cpus: 3, trials: 4 }],
  ['ipi-storm', [], { trials: 5, irq: { rate: 0 }, notify: 'if-idle' }],
  [
    'ipi-storm',
    ['--trials', '3', '--duration', '500ms', '--warmup', '0', '--seed', '9'],
    { trials: 3, trialMs: 500, warmupMs: 0, seed: 9 },
  ],
  ['ipi-storm', ['--cpus', '3', '--hz', '100', '--no-tracing'], { cpus: 3, hz: 100, tracing: false }],
  ['ipi-storm', ['--notify', 'if-idle'], { notify: 'if-idle' }],
  ['random-regression', [], { trials: 3, trialMs: 800, workload: { kind: 'tcp_lat', msgSize: 64 }, sweep: null }],
  [
    'random-regression',
    ['--client-cpu', '1', '--server-cpu', '0', '--ring-size', '16M'],
    { workload: { clientCpu: 1, serverCpu: 0, ringBytes: 16 << 20 } },
  ],
  [
    'random-regression',
    ['--irq-rate', '50k', '--irq-cpus', '0', '--trigger', '64'],
    { irq: { rate: 50_000, cpus: [0] }, fastPool: { trigger: 64 } },
  ],
  ['random-regression', ['-oo', 'msg_size:4K:16K:*2'], { sweep: { param: 'msg_size', values: [4096, 8192, 16384] } }],
  ['random-regression', ['--sweep', 'irq_rate:1k,2k'], { sweep: { param: 'irq_rate', values: [1000, 2000] } }],
  [
    'random-regression',
    ['--trials', '10', '--duration', '2s', '--seed', '1', '--cpus', '4'],
    { trials: 10, trialMs: 2000, seed: 1, cpus: 4 },
  ],
];

describe('a scenario honours the options it takes, over its own settings', () => {
  it.each(SCENARIO_HONOURS)('scenario %s %j', async (name, argv, expected) => {
    const h = harness({ scenarios: SCENARIOS });
    expect(await h.run(['scenario', name, ...argv])).toBe(0);
    expect(h.stderr()).toBe('');
    expect(h.calls[0]).toMatchObject({ command: 'scenario', name, config: expected });
  });

  it('a config file may set what a scenario honours', async () => {
    writeFileSync(join(cwd, 'hog.json'), JSON.stringify({ trials: 7, irq: { rate: 300 } }));
    const h = harness({ scenarios: SCENARIOS });
    expect(await h.run(['scenario', 'cpu-hog', '--config', 'hog.json'])).toBe(0);
    expect(h.calls[0]).toMatchObject({ config: { trials: 7, irq: { rate: 300, cpus: [0] } } });
  });

  it('demo honours the machine options', async () => {
    const h = harness();
    expect(
      await h.run(['demo', '--cpus', '3', '--irq-rate', '5k', '--duration', '200ms', '--seed', '1', '--no-output']),
    ).toBe(0);
    expect(h.calls[0]).toMatchObject({
      command: 'demo',
      config: { cpus: 3, irq: { rate: 5000 }, trialMs: 200, seed: 1, outDir: null },
    });
  });
});

describe('precedence: defaults < config file < flags', () => {
  it('takes each setting from the highest layer that sets it', async () => {
    writeFileSync(
      join(cwd, 'layers.json'),
      JSON.stringify({ cpus: 4, hz: 1000, trials: 9, irq: { rate: '50k', pattern: 'poisson' }, outDir: 'from-file' }),
    );
    const h = harness();
    expect(await h.run(['--config', 'layers.json', '--trials', '3', '--irq-rate', '1M'])).toBe(0);
    const config = onlyConfig(h.calls);
    expect(config.cpus).toBe(4); // file
    expect(config.hz).toBe(1000); // file
    expect(config.trials).toBe(3); // flag over file
    expect(config.irq).toEqual({ rate: 1_000_000, pattern: 'poisson', burstSize: 32, cpus: 'all' }); // merged per field
    expect(config.warmupMs).toBe(300); // default
    expect(config.outDir).toBe(join(cwd, 'from-file'));
  });
});

describe('help and version', () => {
  it.each([['--help'], ['-h'], ['help'], ['run', '--cpus', 'oops', '--help']])(
    '%s prints help and exits 0',
    async (...argv) => {
      const h = harness();
      expect(await h.run(argv)).toBe(0);
      expect(h.stdout()).toMatch(/^(deferlab: benchmark|Usage: deferlab)/);
      expect(h.calls).toEqual([]);
    },
  );

  it('the general help teaches the commands, flags with defaults and ranges, examples and exit statuses', async () => {
    const h = harness();
    await h.run(['--help']);
    const text = h.stdout();
    for (const command of ['run', 'list', 'check-strategy FILE', 'report DIR', 'scenario NAME', 'demo']) {
      expect(text).toContain(`  ${command}`);
    }
    expect(text).toMatch(/--cpus N\s+emulated CPUs, one worker thread each\n\s+1\.\.64; default: 2/);
    expect(text).toContain('deferlab -oo msg_size:4K:1024K:*2');
    expect(text).toContain('deferlab --strategy ./my-strategy.ts --strategy inline');
    expect(text).toContain('deferlab check-strategy ./my-strategy.ts');
    expect(text).toContain('deferlab report deferlab-results/');
    expect(text).toContain('deferlab scenario cpu-hog');
    expect(text).toMatch(
      /Exit status:\n\s+0\s+done\n\s+1\s+the run failed.*\n\s+2\s+bad input.*\n\s+130\s+interrupted/,
    );
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
  });

  it.each(['run', 'list', 'check-strategy', 'report', 'scenario', 'demo'])(
    '%s --help is that command’s help',
    async (command) => {
      const h = harness();
      expect(await h.run([command, '--help'])).toBe(0);
      expect(h.stdout()).toMatch(new RegExp(`^Usage: deferlab (\\[${command}\\]|${command})`));
    },
  );

  it('scenario --help lists every scenario with its summary and the options it does not take', async () => {
    const h = harness({ scenarios: SCENARIOS });
    expect(await h.run(['scenario', '--help'])).toBe(0);
    const text = h.stdout();
    for (const name of Object.keys(SCENARIOS)) expect(text).toMatch(new RegExp(`^  ${name}\\s+seed`, 'm'));
    expect(text).toMatch(/cpu-hog\s+seed 004[\s\S]*?not: --strategy, --baseline, --workload, --irq-cpus,/);
    expect(text).toMatch(/entropy[\s\S]*a --sweep of anything\s+but\s+irq_rate;\s+needs 2\+ CPUs/);
    expect(text).toContain('Every scenario takes --trials, --duration, --warmup, --seed, --hz, --cpus');
    // What each runs with by default, and the cap.
    expect(text).toMatch(
      /cpu-hog[\s\S]*?runs with --control, --until 20 \(capped by --max-time 60s per\s+sub-run\s+and\s+point\)/,
    );
    expect(text).toMatch(/entropy[\s\S]*?runs with --control; --no-control to drop/);
    expect(text).not.toMatch(/ipi-storm(?:(?!cpu-hog)[\s\S])*runs with/); // its own rounds, two policies
    expect(text).toContain('inconclusive');
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
  });

  it('scenario NAME --help is that scenario alone, with what it sweeps, read from its own definition', async () => {
    const h = harness({ scenarios: SCENARIOS });
    expect(await h.run(['scenario', 'random-regression', '--help'])).toBe(0);
    const text = h.stdout().replace(/\n {26}/g, ' '); // the rows unwrapped
    expect(text).toMatch(/^Scenario:\n {2}random-regression +seeds 000\/001/m);
    expect(text).not.toMatch(/^ {2}(cpu-hog|entropy|ipi-storm) /m);
    expect(text).toContain(
      "Others: ipi-storm, cpu-hog, seed-machine, entropy ('deferlab scenario --help' lists them all).",
    );
    expect(text).toContain('runs with --control, --until 10 on part 2 (capped by --max-time 15s');
    // Every group of part 2 (NIC profile, pairs, trigger, sizes), part 1's sizes and kernels,
    // part 3's rates and triggers: the values of DEFAULT_SIZES, as the scenario runs them.
    for (const g of DEFAULT_SIZES.net) {
      const sizes = g.msgSizes.map(formatSize).join(', ');
      expect(text).toContain(
        `${g.nic}, ${g.instances} pair${g.instances > 1 ? 's' : ''}, trigger ${g.trigger}: ${sizes}`,
      );
    }
    expect(text).toContain(
      `msg_size ${DEFAULT_SIZES.msgSizes.map(formatSize).join(', ')} (--sweep replaces it), kernel 5.15`,
    );
    expect(text).toContain(`irq_rate 20k, 200k per CPU, trigger ${DEFAULT_SIZES.triggers.join(', ')}`);
    expect(
      Math.max(
        ...h
          .stdout()
          .split('\n')
          .map((l) => l.length),
      ),
    ).toBeLessThanOrEqual(100);

    const e = harness({ scenarios: SCENARIOS });
    await e.run(['scenario', 'entropy', '--help']);
    expect(e.stdout().replace(/\n {26}/g, ' ')).toContain(
      `sweeps irq_rate ${ENTROPY_RATES.map((r) => (r >= 1000 ? `${r / 1000}k` : r)).join(', ')} per CPU`,
    );
    const c = harness({ scenarios: SCENARIOS });
    await c.run(['scenario', 'cpu-hog', '--help']);
    expect(c.stdout().replace(/\n {26}/g, ' ')).toContain(
      'the hog, a sub-run each: at nice -20 (cpu-hog-nice-20), SCHED_FIFO 50 (cpu-hog-fifo)',
    );
    // A name it does not know is an error (exit 2, naming the scenarios), not the help of all of them.
    const u = harness({ scenarios: SCENARIOS });
    expect(await u.run(['scenario', 'nosuch', '--help'])).toBe(2);
    expect(u.stdout()).toBe('');
  });

  it('demo --help says what demo does and which options it takes', async () => {
    const h = harness();
    expect(await h.run(['help', 'demo'])).toBe(0);
    const text = h.stdout();
    expect(text).toContain('with the inline strategy and background interrupts only');
    expect(text).toMatch(/--cpus, --hz, --duration, --nodes,/);
    expect(text).toMatch(/Not: --strategy, --baseline, --workload, --trials, --warmup, --slice, --sweep, --out/);
    expect(text.replace(/\n/g, ' ')).toContain("tcp_lat's and the NIC's options (--msg-size, --nic, --instances, ...)");
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(text).not.toContain('narrated');
    // demo refuses a recorded trace (src/config/irq-trace.ts): its help lists the trace's flags
    // under Not, never among what it takes (a probe found them there).
    const [takes, not] = text.replace(/\n/g, ' ').split('Not:');
    expect(takes).not.toContain('--irq-trace');
    expect(not).toContain('--irq-trace, --irq-trace-map, --irq-trace-loop, --irq-trace-scale');
    expect(await h.run(['demo', '--irq-trace', 'examples/irq-trace.perf.txt'])).toBe(2);
  });

  it('check-strategy --help shows both ways to give options, and the built-in names', async () => {
    const h = harness();
    expect(await h.run(['check-strategy', '--help'])).toBe(0);
    const text = h.stdout();
    expect(text).toContain('Usage: deferlab check-strategy FILE[:KEY=VALUE,...] [--option KEY=VALUE]...');
    expect(text).toContain('deferlab check-strategy NAME[:KEY=VALUE,...]');
    expect(text).toMatch(/--option KEY=VALUE\s+an option for the strategy \(repeatable\)/);
    expect(text).toContain('inline, workqueue, tasklet, timer, unbound, irq_work, bh_workqueue');
    expect(text).toContain('deferlab check-strategy timer:deferrable=true');
  });

  it('run --help says how the default baseline is chosen', async () => {
    const h = harness();
    await h.run(['run', '--help']);
    expect(h.stdout()).toMatch(
      /--baseline LABEL[\s\S]*the label \(or spec\) of one of the strategies; default: inline, or the\s+first\s+--strategy when inline is not among them/,
    );
  });

  it.each([['--version'], ['-V'], ['list', '--version']])('%s prints the version and exits 0', async (...argv) => {
    const h = harness();
    expect(await h.run(argv)).toBe(0);
    expect(h.stdout()).toBe('deferlab 1.2.3\n');
  });
});

describe('errors from a command', () => {
  it('a DeferlabError keeps its exit status and is one line', async () => {
    const h = harness({
      run: async () => {
        throw runFailed('worker cpu1 exited with code 3 during trial 2 (timer)');
      },
    });
    expect(await h.run([])).toBe(1);
    expect(h.stderr()).toBe('deferlab: worker cpu1 exited with code 3 during trial 2 (timer)\n');
  });

  it('a bad-input DeferlabError from a command exits 2', async () => {
    const h = harness({
      checkStrategy: async () => {
        throw new DeferlabError('E_BAD_OPTION', 'option batch of my-strategy.ts must be an integer (got "x")', 2);
      },
    });
    expect(await h.run(['check-strategy', 'my-strategy.ts'])).toBe(2);
    expect(h.stderr()).toBe('deferlab: option batch of my-strategy.ts must be an integer (got "x")\n');
  });

  it('any other error is a failed run: one line, no stack trace', async () => {
    const h = harness({
      run: async () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    expect(await h.run([])).toBe(1);
    expect(h.stderr()).toBe(
      'deferlab: cannot read properties of undefined\n(set DEFERLAB_DEBUG=1 to see where it failed)\n',
    );
  });

  it('DEFERLAB_DEBUG=1 adds the stack', async () => {
    const h = harness(
      {
        run: async () => {
          throw new Error('boom');
        },
      },
      { DEFERLAB_DEBUG: '1' },
    );
    expect(await h.run([])).toBe(1);
    expect(h.stderr()).toMatch(/^deferlab: boom\nError: boom\n\s+at /);
  });
});
