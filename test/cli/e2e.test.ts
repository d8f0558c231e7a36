/**
 * The real CLI, end to end, in a child process (`node bin/deferlab.js ...`, test/fixtures/cli.ts):
 * bad input, one case per layer (exit 2, one line naming the problem, nothing run), a short real
 * run and every file it writes, `report DIR`, --help, --version, list, and a user's strategy file
 * from outside the repository. Outputs go to a temp dir, never into the repository.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../../src/cli/main.js';
import { parseHgrm, sanitizeLabel } from '../../src/report/run/hgrm.js';
import { readResults } from '../../src/report/run/write.js';
import { STAGE_NAMES } from '../../src/report/types.js';
import { SCENARIOS } from '../../src/scenarios/index.js';
import { BUILTINS } from '../../src/strategies/registry.js';
import { type CliResult, limiter, repoRoot, runCli, stackLines, tmpLeftovers } from '../fixtures/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-e2e-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A test that runs the machine (a run takes ~3-10 s on 2 busy cores). */
const RUN_TEST_TIMEOUT_MS = 90_000;

// ---------------------------------------------------------------------------------------------
// Bad input: exit 2, one line, key words. One case per kind of input, through the process
// (bin/deferlab.js, the restart in a child, stderr, the exit status); every case of every layer
// runs in-process in test/cli/bad-input.test.ts, and each rule's exact message is in
// test/cli/validation.test.ts.
// ---------------------------------------------------------------------------------------------

const notJson = join(tmp, 'not-json.json');
writeFileSync(notJson, '{ "cpus": 2, }\n');
// A strategy file whose constructor throws, in a directory whose package.json makes .ts files ES
// modules (a plain directory is tested below, with a good strategy).
const bad = join(tmp, 'bad');
mkdirSync(bad);
writeFileSync(join(bad, 'package.json'), '{ "type": "module" }\n');
const ctorThrows = join(bad, 'ctor-throws.ts');
writeFileSync(
  ctorThrows,
  "export default class CtorThrows {\n  constructor() {\n    throw new Error('ctor says no');\n  }\n  handoff(): boolean {\n    return true;\n  }\n}\n",
);

/** `run ARGS --no-output`: nothing would be written even if validation let it through. */
const run = (...args: string[]) => ['run', ...args, '--no-output'];

/** [layer, argv, what the message must match]. */
const BAD_INPUT: [string, string[], RegExp[]][] = [
  ['a flag', run('--cpus', '0'), [/--cpus/, /integer from 1 to 64/, /\(got 0\)/]],
  [
    'a config file',
    run('--config', notJson),
    [/not-json\.json is not valid JSON/, /line 1, column \d+/, /no trailing commas/],
  ],
  [
    'a strategy file (loaded in a thread before the run)',
    run('--strategy', ctorThrows, '--strategy', 'inline'),
    [/ctor-throws\.ts/, /constructor threw/, /ctor says no/],
  ],
  [
    "a scenario's option",
    ['scenario', 'cpu-hog', '--strategy', 'tasklet', '--no-output'],
    [/scenario cpu-hog sets --strategy itself/, /drop --strategy/, /'deferlab run'/],
  ],
];

describe('bad input: exit 2, one line naming the problem, nothing run', () => {
  const slot = limiter(2);
  for (const [layer, args, expected] of BAD_INPUT) {
    it.concurrent(layer, async ({ expect }) => {
      const r = await slot(() => runCli(args, { timeoutMs: 60_000 }));
      const lines = r.stderr.trimEnd().split('\n');
      expect.soft(r.killedByTimeout, 'the process ended by itself').toBe(false);
      expect.soft(r.code, `exit status (stderr: ${r.stderr})`).toBe(2);
      expect.soft(stackLines(r.stderr), 'no stack trace').toEqual([]);
      expect.soft(lines[0]).toMatch(/^deferlab: \S/);
      // The message, then at most the pointer to --help.
      expect.soft(lines.slice(1), `stderr:\n${r.stderr}`).toEqual(lines.length > 1 ? [USAGE_HINT] : []);
      for (const re of expected) expect.soft(lines[0]).toMatch(re);
      expect.soft(r.stdout, 'nothing was run').toBe('');
    });
  }
});

// ---------------------------------------------------------------------------------------------
// A real run and every file it writes
// ---------------------------------------------------------------------------------------------

function expectCleanSuccess(r: CliResult): void {
  expect(r.killedByTimeout).toBe(false);
  expect(stackLines(r.stderr)).toEqual([]);
  expect(r.code, `stderr:\n${r.stderr}`).toBe(0);
}

describe('a short real run through the CLI', () => {
  const out = join(tmp, 'run-out');
  const labels = ['inline', 'workqueue'];
  let result: CliResult;

  it(
    'runs 2 strategies on 2 CPUs and writes results.json, results.csv, report.html and the .hgrm files',
    async () => {
      result = await runCli(
        ['run', '--cpus', '2', '--trials', '1', '--duration', '300ms', '--warmup', '100ms', '--seed', '7']
          .concat(labels.flatMap((l) => ['--strategy', l]))
          .concat(['--out', out]),
      );
      expectCleanSuccess(result);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^status: completed/m);
      // A row per strategy, with figures or '-' (a loaded host can leave a short trial with no sample).
      for (const l of labels) expect(result.stdout).toMatch(new RegExp(`^${l}\\s+(\\d|-\\s)`, 'm'));
      expect(result.stdout).toContain(`results: ${out}`);

      const results = await readResults(out); // validates against the results model
      expect(results.status).toBe('completed');
      expect(results.meta.seed).toBe(7);
      expect(results.meta.options).toMatchObject({ cpus: 2, hostHelpers: 'nice' });
      // --host-helpers nice (the default): the process's other threads (V8's, libuv's) reniced, and said so.
      expect(results.meta.hostHelpersNiced).toBeGreaterThan(0);
      expect(result.stdout).toMatch(/\d+\s+helper\s+threads\s+at\s+nice\s+10/); // the setup line may wrap
      expect(results.points).toHaveLength(1);
      const strategies = results.points[0].strategies;
      expect(strategies.map((s) => s.label)).toEqual(labels);
      for (const s of strategies) expect(s.trials).toHaveLength(1);
      // The host calibration block: measured (finite, positive), summarised under the table.
      const cal = results.meta.calibration;
      expect(cal, 'meta.calibration').toBeDefined();
      for (const [k, v] of Object.entries(cal ?? {})) {
        if (typeof v === 'number') expect(Number.isFinite(v) && v > 0, `calibration.${k} = ${v}`).toBe(true);
      }
      // Prose lines wrap (continuations indented by two): read the host line whole.
      const unwrapped = result.stdout.replace(/\n {2}(?=\S)/g, ' ');
      expect(unwrapped).toMatch(/^host: futex wake .* µs p50, hand-off .*; \d+ cores?, load .* → .*$/m);

      const files = readdirSync(out);
      expect(files).toEqual(expect.arrayContaining(['results.json', 'results.csv', 'report.html']));
      expect(tmpLeftovers(out)).toEqual([]);
      const csv = readFileSync(join(out, 'results.csv'), 'utf8');
      expect(csv.split('\n')[0]).toMatch(/^point,label,/);
      for (const l of labels) expect(csv).toMatch(new RegExp(`^0,${l},`, 'm'));
      const html = readFileSync(join(out, 'report.html'), 'utf8');
      expect(html).toMatch(/<html/i);
      for (const l of labels) expect(html).toContain(l);
      expect(html).toContain('id="calibration"');

      // One .hgrm per strategy × recorded stage, one_way at least; each parses back to its count.
      // one_way is recorded (a strategy without a sample in its 300 ms on a loaded host has none).
      expect(strategies.some((s) => 'one_way' in s.merged)).toBe(true);
      for (const s of strategies) {
        for (const stage of STAGE_NAMES) {
          const m = s.merged[stage];
          if (!m) continue;
          const name = `0-${sanitizeLabel(s.label)}-${stage}.hgrm`;
          expect(files).toContain(name);
          const parsed = parseHgrm(readFileSync(join(out, name), 'utf8'));
          expect(parsed.totalCount, name).toBe(m.summary.count);
          expect(parsed.rows.at(-1)?.totalCount, name).toBe(m.summary.count);
        }
      }
      const hgrms = files.filter((f) => f.endsWith('.hgrm'));
      expect(hgrms.length).toBe(strategies.reduce((a, s) => a + Object.keys(s.merged).length, 0));
    },
    RUN_TEST_TIMEOUT_MS,
  );

  it('`report DIR` re-renders the derived files from results.json', async () => {
    expect(result?.code, 'the run above succeeded').toBe(0);
    const json = readFileSync(join(out, 'results.json'), 'utf8');
    const derived = readdirSync(out).filter((f) => f !== 'results.json');
    for (const f of derived) rmSync(join(out, f));
    const r = await runCli(['report', out], { timeoutMs: 30_000 });
    expectCleanSuccess(r);
    expect(r.stderr).toBe('');
    for (const l of labels) expect(r.stdout).toMatch(new RegExp(`^${l}\\s+(\\d|-\\s)`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`re-rendered ${derived.length} files in `));
    expect(readdirSync(out).sort()).toEqual([...derived, 'results.json'].sort());
    expect(readFileSync(join(out, 'results.json'), 'utf8')).toBe(json);
    expect(tmpLeftovers(out)).toEqual([]);
  });
});

describe('help, version, list', () => {
  it('--help prints the usage and exits 0', async () => {
    const r = await runCli(['--help'], { timeoutMs: 30_000 });
    expectCleanSuccess(r);
    expect(r.stdout).toMatch(/^Usage: deferlab \[COMMAND\] \[OPTIONS\]/m);
    expect(r.stdout).toContain('--strategy SPEC');
    expect(r.stderr).toBe('');
  });

  it('--version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version'], { timeoutMs: 30_000 });
    expectCleanSuccess(r);
    expect(r.stdout).toBe(`deferlab ${version}\n`);
  });

  it('list names every built-in strategy and every scenario', async () => {
    const r = await runCli(['list'], { timeoutMs: 30_000 });
    expectCleanSuccess(r);
    for (const b of BUILTINS) expect(r.stdout).toMatch(new RegExp(`^  ${b.name}\\s+\\S`, 'm'));
    for (const name of Object.keys(SCENARIOS)) expect(r.stdout).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
  });
});

// ---------------------------------------------------------------------------------------------
// A user's strategy file outside the repository
// ---------------------------------------------------------------------------------------------

/** What a user writes: no import from deferlab, no types. A tasklet per CPU runs the mix. */
const USER_STRATEGY = `export default class Mine {
  static description = 'mine: a tasklet per CPU runs the mix';
  tasklets = [];

  setup(s) {
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.tasklets.push(s.createTasklet(\`mine/\${c}\`, (k) => d.run(k)));
    }
  }

  handoff(k, d) {
    return k.taskletHiSchedule(this.tasklets[d.cpu]);
  }
}
`;

async function runUserStrategy(dir: string): Promise<void> {
  const path = join(dir, 'mine.ts');
  writeFileSync(path, USER_STRATEGY);
  const r = await runCli([
    'run',
    '--trials',
    '1',
    '--duration',
    '300ms',
    '--warmup',
    '100ms',
    '--strategy',
    path,
    '--strategy',
    'inline',
    '--no-output',
  ]);
  expectCleanSuccess(r);
  // Each strategy's row, with figures or '-' (a loaded host can leave a short trial with no sample).
  expect(r.stdout).toMatch(/^mine\.ts\s+(\d|-\s)/m);
  expect(r.stdout).toMatch(/^inline\s+(\d|-\s)/m);
}

describe("a user's TypeScript strategy outside the repository", () => {
  it(
    'runs from a plain directory (no package.json), next to inline, and appears in the table',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'deferlab-user-'));
      try {
        await runUserStrategy(dir);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    RUN_TEST_TIMEOUT_MS,
  );

  it(
    'runs from a directory whose package.json says "type": "module"',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'deferlab-user-esm-'));
      try {
        writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
        await runUserStrategy(dir);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    RUN_TEST_TIMEOUT_MS,
  );
});
