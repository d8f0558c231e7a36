/**
 * The bench scripts' command lines (bench/cli.ts): `--help` prints what a bench takes and exits 0
 * before anything is measured; anything else not taken is one line and exit 2. In-process for the
 * parser (process.exit stubbed), and each script built in dist/bench for its --help and a bad flag.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type BenchUsage, benchArgs, usageText } from '../../bench/cli.js';

const U: BenchUsage = {
  script: 'bench:demo',
  about: 'What it measures.',
  flags: [
    { flag: '--quick', help: 'a shorter run' },
    { flag: '--tdf', value: 'N', help: 'a dilation factor' },
  ],
  positional: { name: 'SECTION', help: 'a section, 1 or 2', accepts: (a) => a === '1' || a === '2' },
};

/** benchArgs with process.exit and the streams stubbed: what it returned or how it exited. */
function parse(argv: string[]): { args?: string[]; code?: number; out: string; err: string } {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process, 'exit').mockImplementation((code?: string | number | null) => {
    throw Object.assign(new Error('exit'), { exitCode: Number(code) });
  });
  try {
    const args = benchArgs(U, argv);
    vi.restoreAllMocks();
    return { args, out, err };
  } catch (e) {
    vi.restoreAllMocks();
    const code = (e as { exitCode?: number }).exitCode;
    if (code === undefined) throw e;
    return { code, out, err };
  }
}

afterEach(() => vi.restoreAllMocks());

describe('benchArgs', () => {
  it('--help and -h print every flag and the positional, and exit 0', () => {
    for (const h of ['--help', '-h']) {
      const r = parse(['--quick', h]);
      expect(r.code).toBe(0);
      expect(r.out).toBe(usageText(U));
      for (const s of ['usage: npm run bench:demo -- [options]', '--quick', '--tdf N', 'SECTION', 'What it measures.'])
        expect(r.out).toContain(s);
    }
  });

  it('passes what it takes, splitting --flag=value', () => {
    expect(parse(['--tdf=4', '--quick', '2']).args).toEqual(['--tdf', '4', '--quick', '2']);
    expect(parse(['--tdf', 'auto']).args).toEqual(['--tdf', 'auto']);
    expect(parse([]).args).toEqual([]);
  });

  for (const [argv, problem] of [
    [['--quik'], 'unknown option --quik'],
    [['--quick=yes'], '--quick is a switch and takes no value (got --quick=yes)'],
    [['--tdf'], '--tdf needs a value (N)'],
    [['--tdf', '--quick'], '--tdf needs a value (N)'],
    [['--tdf='], '--tdf needs a value (N)'],
    [['3'], '"3" is not SECTION'],
  ] as const) {
    it(`${argv.join(' ')}: one line naming the problem, exit 2`, () => {
      const r = parse([...argv]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`bench:demo: ${problem}; 'npm run bench:demo -- --help' lists what it takes\n`);
      expect(r.out).toBe('');
    });
  }

  it('a bench without positionals names a stray argument', () => {
    const r = (() => {
      const saved = U.positional;
      (U as { positional?: unknown }).positional = undefined;
      try {
        return parse(['extra']);
      } finally {
        (U as { positional?: unknown }).positional = saved;
      }
    })();
    expect(r.code).toBe(2);
    expect(r.err).toContain('unexpected argument "extra"');
  });
});

const dist = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'dist/bench');
const SCRIPTS = ['all', 'aa', 'calibration', 'host', 'net', 'scale', 'scenarios', 'stalls', 'timeline', 'twin'];

/** Run a built bench script (dist/bench/NAME.js) with `args`. */
const runScript = (name: string, args: string[]) =>
  spawnSync(process.execPath, [join(dist, `${name}.js`), ...args], { encoding: 'utf8', timeout: 30_000 });

describe('every bench script', () => {
  for (const name of SCRIPTS) {
    it(`${name}: --help exits 0 with its usage and measures nothing`, () => {
      const help = runScript(name, ['--help']);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage: npm run bench(:\w+)?/);
      expect(help.stdout).toContain('--help, -h');
      expect(help.stderr).toBe('');
    });
  }
  // Every script checks its arguments with benchArgs before anything else; two, one of them with a
  // parser of its own after it (twin), stand for the rest.
  for (const name of ['twin', 'net']) {
    it(`${name}: a bad flag exits 2 with one line, before anything runs`, () => {
      const bad = runScript(name, ['--no-such-flag']);
      expect(bad.status).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain('unknown option --no-such-flag');
    });
  }
  it('twin: a bad --sweep-work exits 2 with one line naming the value, before anything runs', () => {
    const bad = runScript('twin', ['--sweep-work', '20,abc']);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--sweep-work');
    expect(bad.stderr).toContain('"abc"');
  });
  it('twin: --sweep-nice out of range, or without --sweep-work, exits 2 with one line, before anything runs', () => {
    for (const args of [
      ['--sweep-work', '20,30', '--sweep-nice', '25'],
      ['--sweep-nice', '-20'],
    ]) {
      const bad = runScript('twin', args);
      expect(bad.status, args.join(' ')).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain('--sweep-nice');
    }
  });
  it('calibration: a short run prints both sides, a row per statistic; a bad --runs is one line and exit 2', () => {
    const r = runScript('calibration', ['--runs', '20', '--seed', '3']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^A\/A, seed 3: 20 runs in /m);
    expect(r.stdout).toMatch(/^shifted by 2000 ns, seed 4: 20 runs in /m);
    for (const m of ['mean', 'p50', 'p90', 'p99', 'p99_9'])
      expect(r.stdout.match(new RegExp(`^  ${m}\\s+\\d+\\.\\d% ± `, 'gm')), m).toHaveLength(2);
    const bad = runScript('calibration', ['--runs', '5']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'bench:calibration: --runs must be an integer of at least 10 (got 5)',
    ]);
  });
});
