/**
 * parseArgv: commands, the flags layer it builds (strings, untouched), qperf's -oo.
 */
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../src/cli/args.js';
import { DeferlabError } from '../../src/errors.js';

describe('parseArgv', () => {
  it('defaults to run with an empty flags layer', () => {
    expect(parseArgv([])).toEqual({ command: 'run', flags: {} });
  });

  it('puts each flag at its config field, as the string typed', () => {
    expect(
      parseArgv([
        '--cpus',
        '4',
        '--duration=1.5s',
        '--msg-size',
        '4K',
        '--irq-cpus',
        '0,1',
        '--fastmix',
        '32',
        '--workload',
        'tcp_lat',
      ]),
    ).toEqual({
      command: 'run',
      flags: {
        cpus: '4',
        trialMs: '1.5s',
        workload: { kind: 'tcp_lat', msgSize: '4K' },
        irq: { cpus: '0,1' },
        fastPool: { variant: '32' },
      },
    });
  });

  it('collects repeated --strategy in order; other repeated flags: the last wins', () => {
    expect(parseArgv(['--strategy', 'inline', '--cpus', '2', '--strategy', './x.ts:k=1', '--cpus', '8'])).toEqual({
      command: 'run',
      flags: { strategies: ['inline', './x.ts:k=1'], cpus: '8' },
    });
  });

  it('switches store their value: --no-tracing false, --no-output null', () => {
    expect(parseArgv(['--no-tracing', '--no-output'])).toEqual({
      command: 'run',
      flags: { tracing: false, outDir: null },
    });
  });

  it.each([
    [['-oo', 'msg_size:4K:1024K:*2']],
    [['--oo', 'msg_size:4K:1024K:*2']],
    [['-oo=msg_size:4K:1024K:*2']],
    [['--sweep', 'msg_size:4K:1024K:*2']],
  ])('accepts qperf spellings of the sweep: %j', (argv) => {
    expect(parseArgv(argv)).toEqual({ command: 'run', flags: { sweep: 'msg_size:4K:1024K:*2' } });
  });

  it('does not respell -oo after --', () => {
    expect(() => parseArgv(['scenario', 'x', '--', '-oo'])).toThrow(
      '\'scenario\' takes one NAME (got the extra argument "-oo")',
    );
  });

  it('accepts a negative number as a value (the range check then names it)', () => {
    expect(parseArgv(['--irq-rate', '-5'])).toEqual({ command: 'run', flags: { irq: { rate: '-5' } } });
  });

  it('keeps --config apart from the flags layer', () => {
    expect(parseArgv(['demo', '--config', 'c.json', '--hz', '1000'])).toEqual({
      command: 'demo',
      configFile: 'c.json',
      flags: { hz: '1000' },
    });
  });

  it('parses each command’s arguments', () => {
    expect(parseArgv(['list'])).toEqual({ command: 'list' });
    expect(parseArgv(['report', 'out/1'])).toEqual({ command: 'report', dir: 'out/1' });
    expect(parseArgv(['scenario', 'cpu-hog', '--cpus', '4'])).toEqual({
      command: 'scenario',
      name: 'cpu-hog',
      flags: { cpus: '4' },
    });
    expect(parseArgv(['check-strategy', 'a.ts', '--option', 'k=1', '--option', 'j=x'])).toEqual({
      command: 'check-strategy',
      spec: 'a.ts',
      options: ['k=1', 'j=x'],
    });
  });

  it('help: global, per command, and help COMMAND', () => {
    expect(parseArgv(['--help'])).toEqual({ command: 'help' });
    expect(parseArgv(['report', '-h'])).toEqual({ command: 'help', topic: 'report' });
    expect(parseArgv(['help', 'scenario'])).toEqual({ command: 'help', topic: 'scenario' });
    expect(parseArgv(['scenario', 'cpu-hog', '--help'])).toEqual({
      command: 'help',
      topic: 'scenario',
      scenario: 'cpu-hog',
    });
    expect(parseArgv(['scenario', '--trials', '3', '--help', 'cpu-hog'])).toEqual({
      command: 'help',
      topic: 'scenario',
      scenario: 'cpu-hog',
    });
    expect(parseArgv(['scenario', '--help'])).toEqual({ command: 'help', topic: 'scenario' });
    expect(parseArgv(['-V'])).toEqual({ command: 'version' });
  });

  it('throws usage errors with exit status 2', () => {
    let caught: unknown;
    try {
      parseArgv(['--bogus']);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DeferlabError);
    expect(caught).toMatchObject({ code: 'E_UNKNOWN_OPTION', exitStatus: 2, usage: true });
  });

  it('scenario without a NAME names the scenarios it was told of', () => {
    expect(() => parseArgv(['scenario', '--trials', '2'], { scenarios: ['cpu-hog', 'entropy', 'ipi-storm'] })).toThrow(
      "'scenario' needs a scenario NAME (cpu-hog, entropy or ipi-storm; 'deferlab scenario --help' describes them), " +
        'like: deferlab scenario cpu-hog',
    );
    expect(() => parseArgv(['scenario'])).toThrow("'scenario' needs a scenario NAME, like: deferlab scenario cpu-hog");
  });

  it("help scenario NAME is that scenario's help; an unknown NAME is an error, with --help too", () => {
    const ctx = { scenarios: ['cpu-hog', 'entropy'] };
    expect(parseArgv(['help', 'scenario', 'cpu-hog'], ctx)).toEqual({
      command: 'help',
      topic: 'scenario',
      scenario: 'cpu-hog',
    });
    expect(() => parseArgv(['help', 'scenario', 'nosuch'], ctx)).toThrow(/scenario must be one of cpu-hog, entropy/);
    expect(() => parseArgv(['scenario', 'nosuch', '--help'], ctx)).toThrow(/\(got "nosuch"\)/);
    expect(() => parseArgv(['help', 'scenario', 'cpu-hog', 'x'], ctx)).toThrow(/at most scenario NAME/);
    expect(() => parseArgv(['help', 'run', 'x'], ctx)).toThrow(/at most one COMMAND/);
  });

  it('help with an unknown topic is an unknown command', () => {
    expect(() => parseArgv(['help', 'rnu'])).toThrow(/unknown command "rnu".*did you mean 'run'\?/);
  });
});
