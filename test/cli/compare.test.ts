/**
 * `deferlab compare` at the command line: argument checks through main() with a fake command,
 * then the real CLI (a child process) on synthetic results directories: the table, --json,
 * --out, and each bad input as one line with exit status 2 (one through the child process, the
 * rest in this process through main() with the real commands, test/fixtures/cli-main.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliDeps, type CompareRequest, main, USAGE_HINT } from '../../src/cli/main.js';
import { writeResults } from '../../src/report/run/write.js';
import { limiter, runCli, stackLines } from '../fixtures/cli.js';
import { fakeIo } from '../fixtures/cli-io.js';
import { runMain } from '../fixtures/cli-main.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-compare-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const runA = join(tmp, 'runA');
const runB = join(tmp, 'runB');
const strategies = DEFAULT_STRATEGIES.slice(0, 2);
const a = syntheticResults({ seed: 1, samples: 200, trials: 2, strategies });
(a.meta.options as Record<string, unknown>).hz = 250;
await writeResults(runA, a);
const b = syntheticResults({ seed: 2, samples: 200, trials: 2, strategies });
(b.meta.options as Record<string, unknown>).hz = 1000;
await writeResults(runB, b);

/** main() with a fake compare command: what it was asked, and what was printed. */
async function parse(argv: string[]) {
  const requests: CompareRequest[] = [];
  const { io, stdout, stderr } = fakeIo({ cwd: tmp });
  const none = async () => 0;
  const deps: CliDeps = {
    version: '0.0.0',
    run: none,
    list: none,
    checkStrategy: none,
    report: none,
    scenario: none,
    demo: none,
    compare: async (r) => {
      requests.push(r);
      return 0;
    },
  };
  const status = await main(argv, deps, io);
  return { status, requests, stdout: stdout(), stderr: stderr() };
}

describe('compare arguments', () => {
  it('resolves each run (a directory or a results.json) and passes the options', async () => {
    const r = await parse([
      'compare',
      'runA',
      'runB/results.json',
      '--merge',
      '--stage',
      'one_way',
      '--json',
      'c.json',
    ]);
    expect(r.status).toBe(0);
    expect(r.requests).toEqual([
      {
        runs: [
          { name: 'runA', path: runA },
          { name: 'runB/results.json', path: join(runB, 'results.json') },
        ],
        merge: true,
        stages: ['one_way'],
        json: join(tmp, 'c.json'),
      },
    ]);
  });

  it.each([
    ['one run', ['compare', 'runA'], "'compare' needs at least 2 results DIRs (got 1: runA), like: deferlab compare"],
    ['no run', ['compare'], "'compare' needs at least 2 results DIRs (got 0)"],
    [
      'an unknown stage',
      ['compare', 'runA', 'runB', '--stage', 'one-way'],
      '--stage must be one of one_way, irq_entry',
    ],
    [
      'a missing directory',
      ['compare', 'runA', 'nowhere'],
      'compare DIR must be an existing results directory (got "nowhere"',
    ],
    ['an empty path', ['compare', 'runA', ''], 'compare DIR must not be empty'],
    ['--out in a run', ['compare', 'runA', 'runB', '--out', 'runA'], "--out must not be a run's results directory"],
    [
      '--json over a run',
      ['compare', 'runA', 'runB', '--json', 'runA/results.json'],
      '--json must not be named results.json',
    ],
    [
      '--json in no directory',
      ['compare', 'runA', 'runB', '--json', 'no/such/c.json'],
      '--json must be a path in an existing directory',
    ],
  ])('refuses %s in one line, exit 2, nothing run', async (_what, argv, message) => {
    const r = await parse(argv);
    expect(r.status).toBe(2);
    expect(r.requests).toEqual([]);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toContain(`deferlab: ${message}`);
    expect(lines.slice(1)).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
  });

  it('has its own --help, with examples', async () => {
    for (const argv of [
      ['compare', '--help'],
      ['help', 'compare'],
    ]) {
      const r = await parse(argv);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^Usage: deferlab compare DIR DIR\.\.\./);
      expect(r.stdout).toContain('--merge');
      expect(r.stdout).toContain('deferlab compare results/laptop results/server');
    }
    expect((await parse(['--help'])).stdout).toContain('  compare DIR DIR...');
  });
});

describe('compare through the real CLI', () => {
  it('prints the table; --json and --out write the comparison and report.html', async () => {
    const out = join(tmp, 'cmp-out');
    const r = await runCli(['compare', runA, runB, '--merge', '--json', join(tmp, 'c.json'), '--out', out]);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^one_way\s+#1 /m);
    expect(r.stdout).toMatch(/^\s+merged \(2\)/m);
    expect(r.stdout).toMatch(/^options\.hz\s+250\s+1000/m);
    const json = JSON.parse(readFileSync(join(tmp, 'c.json'), 'utf8'));
    expect(json.runs.map((x: { name: string }) => x.name)).toEqual([runA, runB]);
    expect(json.metaDifferences).toEqual([{ field: 'options.hz', values: ['250', '1000'], exact: [250, 1000] }]);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg');
    expect(JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8'))).toEqual(json);
  });

  it('--json - prints JSON instead of the table', async () => {
    const r = await runCli(['compare', runA, runB, '--json', '-']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rows.length).toBeGreaterThan(0);
  });

  // Files that are not a valid run: one line naming the file and what is wrong, exit 2.
  const bad = join(tmp, 'bad');
  const file = (name: string, text: string) => {
    mkdirSync(join(bad, name), { recursive: true });
    writeFileSync(join(bad, name, 'results.json'), text);
    return join(bad, name);
  };
  const v2 = JSON.parse(readFileSync(join(runA, 'results.json'), 'utf8'));
  v2.schemaVersion = 2;
  const invalid = JSON.parse(readFileSync(join(runA, 'results.json'), 'utf8'));
  invalid.points[0].strategies[0].counters.handoffs = 'many';
  const damaged = JSON.parse(readFileSync(join(runA, 'results.json'), 'utf8'));
  damaged.points[0].strategies[1].merged.work.histogram = 'bm90IGEgaGlzdG9ncmFt';
  mkdirSync(join(bad, 'no-results'), { recursive: true });
  // [what, arguments after runA, the message, 'process' for the case run through a child process]
  const cases: Array<[string, string[], RegExp, 'process'?]> = [
    [
      'another schemaVersion',
      [file('v2', JSON.stringify(v2))],
      /v2\/results\.json has schemaVersion 2; this deferlab reads schemaVersion 1/,
      'process',
    ],
    [
      'not JSON',
      [file('truncated', '{"schemaVersion": 1, "poi')],
      /truncated\/results\.json is not a deferlab results file: not JSON/,
    ],
    [
      'a damaged field',
      [file('invalid', JSON.stringify(invalid))],
      /invalid\/results\.json is not a valid deferlab results file: points\[0\]/,
    ],
    [
      'a damaged histogram (--merge decodes it)',
      [file('damaged', JSON.stringify(damaged)), '--merge'],
      /damaged\/results\.json is not a valid deferlab results file: the histogram of strategy "\w+", stage work/,
    ],
    ['a directory without results.json', [join(bad, 'no-results')], /no-results\/results\.json does not exist/],
    ['a path that does not exist', [join(bad, 'nowhere')], /compare DIR must be an existing results directory/],
  ];
  const slot = limiter(2);
  for (const [what, args, re, via] of cases) {
    it.concurrent(`refuses ${what}: one line, exit 2${via ? ' (a child process)' : ''}`, async ({ expect }) => {
      const argv = ['compare', runA, ...args];
      const r =
        via === 'process'
          ? await slot(() => runCli(argv)).then((p) => ({ ...p, status: p.code }))
          : await runMain(argv, tmp);
      expect(r.status, r.stderr).toBe(2);
      expect(stackLines(r.stderr)).toEqual([]);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^deferlab: /);
      expect(lines[0]).toMatch(re);
      expect(lines.slice(1)).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
      expect(r.stdout).toBe('');
    });
  }
});
