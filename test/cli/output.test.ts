/**
 * What the CLI says around a run, through the real CLI in a child process (test/fixtures/cli.ts):
 * an output directory it cannot write is refused before anything runs (exit 2, one line, never a
 * hang); results it cannot write after the run are saved elsewhere and the line says where;
 * `report` on an invalid results.json names the first problem; Ctrl-C on `scenario` and
 * `check-strategy` says one line; and the estimate a long run announces. Of the bad inputs, one
 * per kind (an --out directory, a results file) runs in a child process, the rest in this process
 * through main() with the real commands (test/fixtures/cli-main.ts), which checks the same.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareOut } from '../../src/app.js';
import { resolveConfig } from '../../src/config/schema.js';
import { estimateBootsSeconds, estimateLine, subRunEstimateLine, wholeTrialsLine } from '../../src/harness/estimate.js';
import { readResults } from '../../src/report/run/write.js';
import { limiter, runCli, stackLines, treeThreads } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';
import { syntheticResults } from '../fixtures/synthetic.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-output-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A test that runs the machine (a run takes ~3-10 s on 2 busy cores). */
const RUN_TEST_TIMEOUT_MS = 90_000;
/** Bad input must be refused without a run; a hang is killed after this and fails the test. */
const BAD_INPUT_KILL_MS = 30_000;

/**
 * `deferlab ARGS` with bad input: its exit status, stderr and stdout, and whether it ran on
 * (a hang killed, or accepted input interrupted). Through a child process, or in this process.
 */
async function refused(args: string[], via: 'main' | 'process') {
  if (via === 'process') {
    const r = await runCli(args, { timeoutMs: BAD_INPUT_KILL_MS });
    return { status: r.code, stderr: r.stderr, stdout: r.stdout, ranOn: r.killedByTimeout };
  }
  const r = await runMain(args, tmp);
  return { status: r.status, stderr: r.stderr, stdout: r.stdout, ranOn: r.ranUntilStopped };
}

const SHORT_RUN = ['--trials', '1', '--duration', '100ms', '--warmup', '50ms'];
const TWO = ['--strategy', 'inline', '--strategy', 'tasklet'];

const aFile = join(tmp, 'a-file');
writeFileSync(aFile, 'not a directory\n');

/** Exactly one line on stderr, no stack trace: returns the line. */
function oneLine(r: { stderr: string }): string {
  // Plain expect (not soft): this also runs inside concurrent tests.
  expect(stackLines(r.stderr), 'no stack trace').toEqual([]);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, `one line on stderr:\n${r.stderr}`).toHaveLength(1);
  return lines[0];
}

describe('--out deferlab cannot write: exit 2 before anything runs, one line saying why', () => {
  const slot = limiter(2);
  // `via`: the one case through a child process is the one that could hang (Node's mkdir in /proc).
  const cases: Array<{ name: string; out: string; expect: string | RegExp; leaves?: string; via?: 'process' }> = [
    {
      name: 'an existing file',
      out: aFile,
      expect: `deferlab: --out must name a directory deferlab can write (got "${aFile}", which is a file); choose another path`,
    },
    {
      name: 'a path under a file (ENOTDIR)',
      out: join(aFile, 'sub'),
      expect: `deferlab: --out must name a directory deferlab can write (got "${join(aFile, 'sub')}", and ${aFile} is a file, not a directory); choose another path`,
    },
    {
      name: 'a name longer than NAME_MAX',
      out: join(tmp, 'new', 'n'.repeat(300)),
      leaves: join(tmp, 'new'), // refused before its parent is made
      expect:
        /^deferlab: --out must name a directory deferlab can write \(got ".*…, one of its names is 300 bytes long, more than the 255 a file name may have\); choose a shorter path$/,
    },
    {
      // Node 20's mkdir(..., { recursive: true }) loops forever here: the kill timeout catches a hang.
      name: 'a directory under /proc',
      out: '/proc/deferlab-x',
      via: 'process',
      expect:
        'deferlab: --out must name a directory deferlab can write (got "/proc/deferlab-x", and the kernel refuses new directories in /proc (a virtual file system)); choose another path',
    },
  ];
  for (const c of cases) {
    it.concurrent.skipIf(c.out.startsWith('/proc') && !existsSync('/proc/self'))(c.name, async ({ expect }) => {
      const r = await slot(() => refused(['run', ...SHORT_RUN, ...TWO, '--out', c.out], c.via ?? 'main'));
      expect(r.ranOn, 'it ended by itself (no hang, nothing run)').toBe(false);
      expect(r.status, `exit status; stderr:\n${r.stderr}`).toBe(2);
      const line = oneLine(r);
      if (typeof c.expect === 'string') expect(line).toBe(c.expect);
      else expect(line).toMatch(c.expect);
      expect(r.stdout, 'no run happened (no table)').toBe('');
      if (c.leaves) expect(existsSync(c.leaves), `${c.leaves} was not made`).toBe(false);
    });
  }
});

describe('the default results directory, when it cannot be written', () => {
  it('is named as such, with --out as the way out (no --out on the command line)', async () => {
    const dir = join(aFile, 'deferlab-results', '20250101-120000');
    await expect(prepareOut(dir, ['run', '--trials', '1'])).rejects.toMatchObject({
      exitStatus: 2,
      message: `the results directory must be one deferlab can write (got "${dir}", and ${aFile} is a file, not a directory); choose another path with --out DIR`,
    });
  });
});

describe('results that cannot be written after the run are not lost', () => {
  it(
    'prints the table and the seed, saves results.json under the temp directory, says where, exits 1',
    async () => {
      const out = join(tmp, 'replaced');
      // The directory is made and probed before the machine boots; once the machine's threads
      // exist (the processes have many more threads than Node's own ~10 each), replace it with a
      // file. The machine runs in the CLI's child process: its threads are counted with the parent's.
      // --kthreads thread: the machine's kthreads are threads of their own, which the poll counts.
      const r = await runCli(['run', ...SHORT_RUN, ...TWO, '--seed', '7', '--kthreads', 'thread', '--out', out], {
        onSpawn: (child) => {
          const poll = setInterval(() => {
            if (child.exitCode !== null || child.signalCode !== null) clearInterval(poll);
            else if (existsSync(out) && treeThreads(child.pid) >= 28) {
              clearInterval(poll);
              rmSync(out, { recursive: true, force: true });
              writeFileSync(out, 'in the way\n');
            }
          }, 10);
        },
      });
      expect(r.killedByTimeout).toBe(false);
      expect(r.code, `stderr:\n${r.stderr}`).toBe(1);
      expect(r.stdout).toMatch(/^status: completed/m);
      // The table's row, with figures or '-' (a loaded host can leave a 100 ms trial with no sample).
      expect(r.stdout).toMatch(/^inline\s+(\d|-\s)/m);
      expect(r.stdout).toMatch(/^seed 7 \(replay: --seed 7\)$/m);
      const line = oneLine(r);
      const m = line.match(
        /^deferlab: could not write (\S+): .*; a copy of results\.json was saved in (\S+) instead \('deferlab report \2' renders the rest\)$/,
      );
      expect(m, line).not.toBeNull();
      expect(m![1]).toBe(join(out, 'results.json'));
      const rescued = m![2];
      try {
        const results = await readResults(rescued);
        expect(results.status).toBe('completed');
        expect(results.meta.seed).toBe(7);
        expect(results.points[0].strategies.map((s) => s.label)).toEqual(['inline', 'tasklet']);
      } finally {
        rmSync(rescued, { recursive: true, force: true });
      }
    },
    RUN_TEST_TIMEOUT_MS,
  );
});

describe('report DIR on a results.json that fails the schema names the first problem', () => {
  const cases = [
    {
      name: 'a skeleton without meta',
      json: '{"schemaVersion":1,"points":[],"status":"completed"}',
      reason: 'meta is missing (expected an object) (and 2 more problems)',
      via: 'main' as const,
    },
    {
      name: 'a counter set to "many"',
      json: (() => {
        const r = syntheticResults({ samples: 10, trials: 1 });
        (r.points[0].strategies[1].trials[0].counters as Record<string, unknown>).handoffs = 'many';
        return JSON.stringify(r);
      })(),
      reason: 'points[0].strategies[1].trials[0].counters.handoffs must be a number (got "many")',
      via: 'process' as const,
    },
  ];
  for (const [i, c] of cases.entries()) {
    it.concurrent(c.name, async ({ expect }) => {
      const dir = join(tmp, `rep-bad-${i}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'results.json'), c.json);
      const r = await refused(['report', dir], c.via);
      expect(r.ranOn).toBe(false);
      expect(r.status, `stderr:\n${r.stderr}`).toBe(2);
      expect(oneLine(r)).toBe(
        `deferlab: ${join(dir, 'results.json')} is not a valid deferlab results file: ${c.reason}`,
      );
      expect(r.stdout).toBe('');
    });
  }
});

/** Send SIGINT once `ready()` says the command is under way. */
function interruptWhen(ready: (stdout: string) => boolean) {
  let sentAt = 0;
  return {
    sent: () => sentAt > 0,
    onSpawn: (child: import('node:child_process').ChildProcess) => {
      let stdout = '';
      child.stdout?.on('data', (s: Buffer | string) => {
        stdout += String(s);
      });
      const poll = setInterval(() => {
        if (child.exitCode !== null || child.signalCode !== null) clearInterval(poll);
        else if (ready(stdout)) {
          clearInterval(poll);
          sentAt = Date.now();
          child.kill('SIGINT');
        }
      }, 20);
    },
  };
}

describe('Ctrl-C says one line on every command', () => {
  it(
    'scenario: exit 130 and one line',
    async () => {
      const sig = interruptWhen((out) => out.includes('== cpu-hog-nice-20 =='));
      const r = await runCli(
        ['scenario', 'cpu-hog', '--trials', '3', '--duration', '2s', '--warmup', '100ms', '--no-output'],
        { onSpawn: sig.onSpawn },
      );
      expect(sig.sent(), `the scenario got under way (stderr: ${r.stderr})`).toBe(true);
      expect(r.killedByTimeout).toBe(false);
      expect(r.code, `stderr:\n${r.stderr}`).toBe(130);
      // Besides the sub-run's estimate (`deferlab: cpu-hog-nice-20: 2 strategies × ..., about 25 s`).
      const estimate = /^deferlab: cpu-hog-[\w-]+: \d+ strateg.*, about \d+ (s|min)/;
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines.filter((l) => !estimate.test(l)).length, r.stderr).toBe(1);
      expect(oneLine({ stderr: lines.filter((l) => !estimate.test(l)).join('\n') })).toBe(
        'deferlab: interrupted; the trials finished so far are in the tables above',
      );
      expect(lines[0], 'the first sub-run says how long it will take').toMatch(estimate);
    },
    RUN_TEST_TIMEOUT_MS,
  );

  it(
    'check-strategy: exit 130 and one line, without waiting for the suite',
    async () => {
      // A strategy that marks when it is constructed: on the main thread, once the CLI's signal
      // handlers are installed and the check is under way.
      const dir = mkdtempSync(join(tmp, 'check-'));
      const file = join(dir, 'marks.mjs');
      const mark = join(dir, 'mark');
      writeFileSync(
        file,
        `import { writeFileSync } from 'node:fs';
export default class Marks {
  static description = 'test: inline, marking when constructed';
  constructor() {
    try { writeFileSync(process.env.DEFERLAB_TEST_MARK, 'x', { flag: 'wx' }); } catch {}
  }
  handoff(k, d) { d.run(k); return true; }
}
`,
      );
      const sig = interruptWhen(() => existsSync(mark));
      const r = await runCli(['check-strategy', file], { env: { DEFERLAB_TEST_MARK: mark }, onSpawn: sig.onSpawn });
      expect(sig.sent(), `the check got under way (stderr: ${r.stderr}, stdout: ${r.stdout})`).toBe(true);
      expect(r.killedByTimeout).toBe(false);
      expect(r.code, `stderr:\n${r.stderr}`).toBe(130);
      expect(oneLine(r)).toBe('deferlab: interrupted; the conformance check stopped before its verdict');
      expect(r.stdout, 'no verdict printed').toBe('');
      expect(readFileSync(mark, 'utf8')).toBe('x');
    },
    RUN_TEST_TIMEOUT_MS,
  );
});

describe('a long run announces how long it will take', () => {
  const config = (flags: Record<string, unknown>) => resolveConfig({ flags: flags as never, cwd: tmp });

  it('the default comparison: strategies × trials × points, and the total', () => {
    expect(estimateLine(config({}))).toMatch(
      /^deferlab: 9 strategies × 5 trials × 1 sweep point, about \d+ s \(Ctrl-C stops early and keeps the finished trials\)$/,
    );
  });

  it('counts sweep points and grows with them', () => {
    const line = estimateLine(config({ sweep: 'msg_size:4K:1024K:*2' }));
    expect(line).toMatch(/^deferlab: 9 strategies × 5 trials × 9 sweep points, about \d+ min /);
  });

  it('counts the control, and with --until says how much longer it may run, even for a short run', () => {
    expect(estimateLine(config({ control: true }))).toMatch(/^deferlab: 10 strategies × 5 trials /);
    const short = { trials: 1, trialMs: 100, warmupMs: 50, strategies: ['inline', 'tasklet'] };
    expect(estimateLine(config({ ...short, until: 3, maxTimeMs: '2min' }))).toMatch(
      /, about 5 s, then up to 2 min more while a Δ-mean interval is wider than ±3% \(--until\) \(Ctrl-C/,
    );
    // The cap is a bound: said as given, never rounded up like the estimate.
    expect(estimateLine(config({ ...short, until: 3, maxTimeMs: '3s' }))).toContain(', then up to 3 s more ');
    expect(estimateLine(config({ ...short, until: 3, maxTimeMs: '90s' }))).toContain(', then up to 90 s more ');
  });

  it("a scenario's sub-run: on its boots, with the trials and duration the scenario gave it", () => {
    const c = config({ trials: 3, trialMs: 1000, warmupMs: 100, strategies: ['workqueue', 'unbound'] });
    const two = subRunEstimateLine('cpu-hog-fifo', c, 2);
    // 3 trials over 2 boots: at least 2 a boot, so 4; a boot and a warm-up pass each.
    expect(two).toMatch(/^deferlab: cpu-hog-fifo: 2 strategies × 4 trials of 1 s on 2 boots, about \d+ s$/);
    expect(estimateBootsSeconds(c, 2)).toBeGreaterThan(estimateBootsSeconds(c, 1));
    expect(subRunEstimateLine('x', c, 1)).toMatch(/^deferlab: x: 2 strategies × 3 trials of 1 s on 1 boot, about /);
    const capped = subRunEstimateLine(
      'x',
      config({ trials: 1, trialMs: 100, until: 3, maxTimeMs: '60s', strategies: ['inline', 'tasklet'] }),
      2,
    );
    expect(capped).toMatch(/ × 4 trials of 100 ms on 2 boots, about \d+ s/);
    expect(capped).toContain(', then up to 1 min more while a Δ-mean interval is wider than ±3% (--until)');
  });

  it("a scenario's sub-run counts the A/A control its run adds to the scenario's own strategies", () => {
    const c = config({ trials: 3, trialMs: 1000, warmupMs: 100, strategies: ['workqueue', 'unbound'] });
    // A scenario replaces the strategies and baseline; withControl adds the control of its baseline.
    const sub = { ...c, strategies: c.strategies, baseline: c.strategies[0].label, control: 'x (control)' };
    expect(subRunEstimateLine('cpu-hog-fifo', sub, 2)).toMatch(/^deferlab: cpu-hog-fifo: 3 strategies × /);
    expect(subRunEstimateLine('cpu-hog-fifo', { ...sub, control: null }, 2)).toMatch(/: 2 strategies × /);
  });

  it('says nothing about a run of a few seconds', () => {
    expect(
      estimateLine(config({ trials: 1, trialMs: 100, warmupMs: 50, strategies: ['inline', 'tasklet'] })),
    ).toBeUndefined();
  });
});

describe('a --slice not shorter than a trial says the trials are measured whole', () => {
  const config = (flags: Record<string, unknown>) => resolveConfig({ flags: flags as never, cwd: tmp });

  it('for a slice the user chose at or above --duration, and for nothing else', () => {
    expect(wholeTrialsLine(config({ sliceMs: '500ms', trialMs: '300ms' }))).toBe(
      'deferlab: --slice 500 ms is not shorter than a trial (--duration 300 ms): each trial is measured whole, as with --slice 0 (give a slice below the duration to interleave slices)',
    );
    expect(wholeTrialsLine(config({ sliceMs: '300ms', trialMs: '300ms' }))).toContain('--slice 300 ms');
    expect(wholeTrialsLine(config({ sliceMs: '200ms', trialMs: '300ms' })), 'two slices').toBeUndefined();
    expect(wholeTrialsLine(config({ sliceMs: 0, trialMs: '300ms' })), 'whole trials asked for').toBeUndefined();
    expect(wholeTrialsLine(config({ trialMs: '50ms' })), 'the default slice').toBeUndefined();
  });
});
