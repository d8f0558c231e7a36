/**
 * `--out DIR` into a directory that already holds something else (src/cli/out-dir.ts): `run`,
 * `scenario` and `compare --out` refuse it before anything starts, one line, exit 2, naming the
 * setting as given (--out, outDir in a config file, the default directory); a missing or empty
 * directory, and an earlier output of the same command (which it replaces), are accepted.
 * main() with fake commands (nothing runs), and one case through the real CLI's process.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliDeps, main } from '../../src/cli/main.js';
import { checkOutDir, foreignOutDir } from '../../src/cli/out-dir.js';
import { SCENARIOS } from '../../src/scenarios/index.js';
import { runCli, stackLines } from '../fixtures/cli.js';
import { fakeIo } from '../fixtures/cli-io.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-outdir-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Make `rel` under cwd, with these files (paths relative to it; `x/` is a directory). */
function dir(rel: string, files: string[] = []): string {
  const path = join(cwd, rel);
  mkdirSync(path, { recursive: true });
  for (const f of files) {
    if (f.endsWith('/')) mkdirSync(join(path, f), { recursive: true });
    else {
      mkdirSync(join(path, f, '..'), { recursive: true });
      // A results.json as deferlab writes one begins (what `run --out` takes for an earlier run).
      writeFileSync(join(path, f), f.endsWith('results.json') ? '{"schemaVersion": 1, "points": []}\n' : '{}\n');
    }
  }
  return path;
}

const foreign = dir('foreign', ['notes.txt', 'b.ts', 'c.ts', 'src/']);
const prevRun = dir('prev-run', ['results.json', 'report.html', 'summary.csv']);
const prevScenario = dir('prev-scenario', ['cpu-hog-fifo/results.json', 'cpu-hog-nice-20/results.json']);
const prevStorm = dir('prev-storm', ['ipi-storm.json']);
const prevCompare = dir('prev-compare', ['compare.json', 'report.html']);
const empty = dir('empty');
const otherResults = dir('other-results', ['important.txt']);
writeFileSync(join(otherResults, 'results.json'), '{"hello": 1}\n'); // another program's
writeFileSync(join(cwd, 'lab.json'), '{"outDir": "foreign"}\n');

/** main() with commands that only record that they were called. */
async function cli(argv: string[]) {
  const called: string[] = [];
  const record = (name: string) => () => {
    called.push(name);
    return Promise.resolve(0);
  };
  const deps: CliDeps = {
    version: '0.0.0',
    run: record('run'),
    demo: record('demo'),
    scenario: record('scenario'),
    list: record('list'),
    checkStrategy: record('checkStrategy'),
    report: record('report'),
    compare: record('compare'),
    scenarios: SCENARIOS,
  };
  const { io, stdout, stderr } = fakeIo({ cwd });
  const status = await main(argv, deps, io);
  return { status, called, stdout: stdout(), stderr: stderr() };
}

const RUN_REFUSED = "must be a new or empty directory, or an earlier run's results directory, which it replaces (got";

describe('an output directory holding something else is refused: one line, exit 2, nothing run', () => {
  it.each([
    [
      'run --out a foreign directory',
      ['run', '--out', 'foreign'],
      `deferlab: --out ${RUN_REFUSED} "foreign", which holds 4 entries and no results.json: b.ts, c.ts, notes.txt, …); choose another path, like --out deferlab-results/mine`,
    ],
    [
      "run --out a directory whose results.json is another program's",
      ['run', '--out', 'other-results'],
      `deferlab: --out ${RUN_REFUSED} "other-results", whose results.json is not a deferlab results file, among 2 entries: important.txt, results.json); choose another path, like --out deferlab-results/mine`,
    ],
    [
      "run --out a scenario's directory (no results.json of its own)",
      ['run', '--out', 'prev-scenario'],
      `deferlab: --out ${RUN_REFUSED} "prev-scenario", which holds 2 entries and no results.json: cpu-hog-fifo, cpu-hog-nice-20); choose another path, like --out deferlab-results/mine`,
    ],
    [
      'run with outDir from a config file',
      ['run', '--config', 'lab.json'],
      `deferlab: outDir in lab.json ${RUN_REFUSED} "foreign", which holds 4 entries and no results.json: b.ts, c.ts, notes.txt, …); choose another path`,
    ],
    [
      'scenario --out a foreign directory',
      ['scenario', 'cpu-hog', '--out', 'foreign'],
      `deferlab: --out must be a new or empty directory, or an earlier scenario's output directory, which it replaces (got "foreign", which holds 4 entries and no sub-run directory with a results.json: b.ts, c.ts, notes.txt, …); choose another path, like --out deferlab-results/mine`,
    ],
    [
      "scenario --out a run's directory",
      ['scenario', 'cpu-hog', '--out', 'prev-run'],
      `deferlab: --out must be a new or empty directory, or an earlier scenario's output directory, which it replaces (got "prev-run", which holds 3 entries and no sub-run directory with a results.json: report.html, results.json, summary.csv); choose another path, like --out deferlab-results/mine`,
    ],
    [
      'compare --out a foreign directory',
      ['compare', 'prev-run', 'prev-run', '--out', 'foreign'],
      `deferlab: --out must be a new or empty directory, or an earlier comparison's output directory, which it replaces (got "foreign", which holds 4 entries and no compare.json: b.ts, c.ts, notes.txt, …); choose another path, like --out compare-out`,
    ],
  ])('%s', async (_name, argv, message) => {
    const before = readdirSync(foreign).sort();
    const r = await cli(argv);
    expect(r.status).toBe(2);
    expect(r.called).toEqual([]);
    expect(r.stderr).toBe(`${message}\n`);
    expect(r.stdout).toBe('');
    expect(readdirSync(foreign).sort()).toEqual(before);
  });

  it('names the default directory as such, with --out as the way out', () => {
    expect(() => checkOutDir(foreign, 'run', { given: foreign, example: 'x' })).toThrow(
      `the results directory ${RUN_REFUSED} ${JSON.stringify(foreign)}, which holds 4 entries and no results.json: b.ts, c.ts, notes.txt, …); choose another path with --out DIR`,
    );
  });

  it('through the real CLI: exit 2, the one line, no stack trace, no file written', async () => {
    const before = readdirSync(foreign).sort();
    // A short run, so that wrongly accepted input fails the test quickly.
    const r = await runCli(['run', '--strategy', 'inline', '--trials', '1', '--duration', '50ms', '--out', foreign]);
    expect(r.code, r.stderr).toBe(2);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stderr).toBe(
      `deferlab: --out ${RUN_REFUSED} ${JSON.stringify(foreign)}, which holds 4 entries and no results.json: b.ts, c.ts, notes.txt, …); choose another path, like --out deferlab-results/mine\n`,
    );
    expect(readdirSync(foreign).sort()).toEqual(before);
  });
});

describe('a new, empty or earlier output directory of the same command is accepted', () => {
  it.each([
    ['run into a path not made yet', ['run', '--out', 'new/deeper']],
    ['run into an empty directory', ['run', '--out', 'empty']],
    ["run into an earlier run's directory (replaced)", ['run', '--out', 'prev-run']],
    ["scenario into an earlier scenario's directory", ['scenario', 'cpu-hog', '--out', 'prev-scenario']],
    ["scenario into ipi-storm's earlier directory", ['scenario', 'ipi-storm', '--out', 'prev-storm']],
    ["compare into an earlier comparison's directory", ['compare', 'prev-run', 'prev-run', '--out', 'prev-compare']],
    ['the default directory', ['run']],
  ])('%s', async (_name, argv) => {
    const r = await cli(argv);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.called).toEqual([argv[0]]);
  });

  it('leaves a path that is not a directory to the writability check, which says why', () => {
    expect(foreignOutDir(join(prevRun, 'results.json'), 'run')).toBeUndefined();
    expect(foreignOutDir(join(cwd, 'missing'), 'scenario')).toBeUndefined();
    expect(foreignOutDir(empty, 'compare')).toBeUndefined();
    expect(foreignOutDir(prevStorm, 'scenario')).toBeUndefined();
    expect(foreignOutDir(prevScenario, 'scenario')).toBeUndefined();
    expect(foreignOutDir(prevCompare, 'run')).toMatch(
      /^which holds 2 entries and no results\.json: compare\.json, report\.html$/,
    );
  });
});
