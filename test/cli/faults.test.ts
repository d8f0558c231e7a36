/**
 * Faults through the real CLI: a strategy from test/fixtures/faulty/ breaks in one way each,
 * in its first trial (after inline's first trial has finished; see test/fixtures/arm.ts). The
 * run must end by itself (the hangs by the watchdog: the line says so), stop at the fault (no
 * trial after it), exit 1 with one line naming what broke and where, and leave partial results
 * (results.json with status 'failed' and inline's finished trial, report.html). And SIGINT:
 * exit 130, status 'interrupted'.
 *
 * Each fixture writes the wall-clock time of its fault to $DEFERLAB_TEST_MARK: the time from the
 * fault to the CLI's exit is printed, not asserted (a busy host stretches it: 6-15 s against
 * 1-3 s on a quiet one); a run that does not end is killed after KILL_AFTER_MS and fails.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { roundOrder } from '../../src/harness/schedule.js';
import { readResults } from '../../src/report/run/write.js';
import { type CliResult, fixture, markedRun, runCli, stackLines, tmpLeftovers, whenMarked } from '../fixtures/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-faults-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** 3 s: a CPU thread that a busy host leaves unscheduled for 1 s is not a hang. */
const WATCHDOG_MS = 3_000;
/** A run that has not ended after this is killed (SIGKILL) and fails its test, ms. */
const KILL_AFTER_MS = 60_000;
/** Per test: one run, killed after KILL_AFTER_MS (or the case's own), and the checks. */
const TEST_TIMEOUT_MS = 90_000;

interface FaultCase {
  name: string;
  /** test/fixtures/faulty/<file> */
  file: string;
  /** The label the CLI gives it. */
  label: string;
  /** Options given with the file (`FILE:OPTIONS`): the check-strategy hint must keep them. */
  options?: string;
  nodeArgs?: string[];
  /** Each must match the stderr line. */
  message: RegExp[];
  /** The context the fault happened in, as the line names it (`context X`). */
  context: string;
  /** The thread died (exit, out of memory): the strategy is the one in force, not attested. */
  deadThread?: boolean;
  /** --watchdog for this case, ms (default WATCHDOG_MS). */
  watchdogMs?: number;
  /** Kill the run after this, ms (default KILL_AFTER_MS); the test's own timeout is 30 s more. */
  killAfterMs?: number;
}

const CASES: FaultCase[] = [
  {
    name: 'handoff throws',
    file: 'handoff-throws.ts',
    label: 'handoff-throws.ts(why=test)',
    options: 'why=test',
    message: [/fixture: handoff threw \(thrown by the strategy's handoff\(\)\)/, /thread cpu\d/],
    context: 'hardirq',
  },
  {
    name: 'the deferred work (a workqueue callback) throws',
    file: 'work-throws.ts',
    label: 'work-throws.ts',
    message: [/fixture: work callback threw/, /thread kworker\/\d/],
    context: 'task',
  },
  {
    name: 'handoff hangs (an endless loop in hardirq)',
    file: 'handoff-loops.ts',
    label: 'handoff-loops.ts',
    message: [/passed no preemption point for \d/, /inside the strategy's hand-off/, /stuck/],
    context: 'hardirq',
  },
  {
    name: 'the deferred work (a workqueue callback) loops forever, named by the watchdog',
    file: 'work-loops.ts',
    label: 'work-loops.ts',
    message: [/passed no preemption point for \d/, /in the callback of work "loops\/\d+"/, /stuck/],
    context: 'task',
  },
  {
    name: 'handoff blocks in hardirq (Atomics.wait, no timeout)',
    file: 'handoff-blocks.ts',
    label: 'handoff-blocks.ts',
    message: [/passed no preemption point for \d/, /inside the strategy's hand-off/, /stuck/],
    context: 'hardirq',
  },
  {
    name: 'a tasklet callback calls mightSleep() in softirq (the kernel BUG)',
    file: 'might-sleep.ts',
    label: 'might-sleep.ts',
    message: [/BUG: sleeping function called from invalid context \(softirq\)/],
    context: 'softirq',
  },
  {
    name: 'a work callback calls process.exit(3)',
    file: 'exits.ts',
    label: 'exits.ts',
    message: [/thread kworker\/\d+:\d+ exited unexpectedly \(exit code 3\)/],
    context: 'thread',
    deadThread: true,
  },
  {
    // Each machine thread has a 512 MiB heap limit (WORKER_HEAP_MB), and a kworker that
    // allocates without a preemption point is rightly "stuck" to a 1 s watchdog. Filling the
    // heap took 20-30 s here with the cores busy while the fixture filled sparse arrays (a 10 s
    // watchdog fired first); copying a dense one, 5-8 s. The watchdog at its largest, 60 s, and
    // the kill after it: the out-of-memory always comes first.
    name: 'a work callback allocates until its thread runs out of memory',
    file: 'oom.ts',
    label: 'oom.ts',
    watchdogMs: 60_000,
    killAfterMs: 120_000,
    message: [/thread kworker\/\d+:\d+ ran out of memory/],
    context: 'thread',
    deadThread: true,
  },
];

function expectOneLine(r: CliResult): string {
  const lines = r.stderr.trimEnd().split('\n');
  expect.soft(stackLines(r.stderr), 'no stack trace').toEqual([]);
  expect.soft(lines, 'one line on stderr').toHaveLength(1);
  return lines[0];
}

/**
 * The order of each round is drawn from the run's seed (src/harness/schedule.ts): a seed, from
 * 1 up, whose first three rounds of inline (0) and the fixture (1) run inline first and then put
 * inline between two of the fixture's trials. The fixture arms only after another strategy was
 * in force (../fixtures/arm.ts); inline running first keeps a trial finished before the fault
 * even when a host stall arms the fixture early.
 */
const FAULT_ARMS = String(
  Array.from({ length: 1000 }, (_, s) => s + 1).find((s) => {
    const flat = [0, 1, 2].flatMap((r) => roundOrder(s, 2, r));
    const first = flat.indexOf(1);
    return flat[0] === 0 && flat.slice(first + 1).some((x, i, rest) => x === 0 && rest.slice(i + 1).includes(1));
  }),
);

describe('a faulty strategy fails the run: exit 1, one line saying where, partial results', () => {
  for (const c of CASES) {
    it(
      c.name,
      async () => {
        const out = join(tmp, c.file.replace(/\.ts$/, ''));
        const mark = join(tmp, `${c.file}.mark`);
        const opts = c.options ? `:${c.options}` : '';
        const r = await runCli(
          [
            'run',
            '--trials',
            '3',
            '--duration',
            '400ms',
            '--warmup',
            '100ms',
            // Whole trials: arm.ts tells a new period in force by a gap of 450 ms, longer than a slice.
            '--slice',
            '0',
            '--watchdog',
            `${c.watchdogMs ?? WATCHDOG_MS}ms`,
            '--seed',
            FAULT_ARMS,
            // kworkers as threads of their own: a fault in a work callback kills or stalls that
            // thread, not a CPU's (under the default --kthreads cpu it is CPU n's thread).
            '--kthreads',
            'thread',
          ].concat(['--strategy', 'inline', '--strategy', `${fixture(`faulty/${c.file}`)}${opts}`, '--out', out]),
          { nodeArgs: c.nodeArgs, env: { DEFERLAB_TEST_MARK: mark }, timeoutMs: c.killAfterMs ?? KILL_AFTER_MS },
        );
        expect(r.killedByTimeout, 'the process ended by itself').toBe(false);
        expect(r.code, `exit status; stderr:\n${r.stderr}`).toBe(1);
        expect(existsSync(mark), `the fixture faulted (stderr: ${r.stderr})`).toBe(true);
        const endedAfterMs = r.endedAt - Number(readFileSync(mark, 'utf8'));

        const line = expectOneLine(r);
        expect.soft(line).toMatch(/^deferlab: run failed: /);
        for (const re of c.message) expect.soft(line).toMatch(re);
        expect.soft(line, 'names the strategy').toContain(`strategy ${c.label}`);
        expect.soft(line, 'names the CPU').toMatch(/\bCPU \d+\b/);
        expect.soft(line, 'names the context').toContain(`context ${c.context}`);
        // It failed in its first trial: the line points at the command that checks it alone.
        expect
          .soft(line)
          .toContain(
            `; to check the strategy alone: deferlab check-strategy ${resolve(fixture(`faulty/${c.file}`))}${opts}`,
          );

        // Partial results: status failed, the error, inline's finished trial, the report.
        const results = await readResults(out);
        expect(results.status).toBe('failed');
        expect.soft(results.error?.message).toMatch(c.message[0]);
        // A thread that died cannot attest whose code it ran: the product names the strategy
        // that was in force then, as "LABEL (in force)".
        const named = c.deadThread ? [c.label, `${c.label} (in force)`] : [c.label];
        expect.soft(named, 'results.error.strategy').toContain(results.error?.strategy);
        expect.soft(results.error?.cpu, 'results.error.cpu').toEqual(expect.any(Number));
        expect.soft(results.error?.context, 'results.error.context').toBe(c.context);
        const [inline, faulty] = results.points[0].strategies;
        expect(inline.label).toBe('inline');
        expect(faulty.label).toBe(c.label);
        expect(inline.trials.length, 'inline trials finished').toBeGreaterThanOrEqual(1);
        // The run stopped at the fault, in the fixture's first trial: nothing ran after it.
        expect(faulty.trials, 'the faulty strategy finished no trial').toHaveLength(0);
        expect(inline.trials.length, 'inline did not go on to its 3 trials').toBeLessThan(3);
        // How many exchanges inline's 400 ms trial held is the host's business (a starved host can
        // leave it none): its .hgrm is asserted when it holds any.
        const exchanges = inline.merged.one_way?.summary.count ?? 0;
        expect(existsSync(join(out, 'report.html')), 'report.html').toBe(true);
        expect(existsSync(join(out, 'results.csv')), 'results.csv').toBe(true);
        if (exchanges > 0) expect(existsSync(join(out, '0-inline-one_way.hgrm')), 'inline one_way .hgrm').toBe(true);
        expect(tmpLeftovers(out)).toEqual([]);
        console.log(
          `${c.name}: exit ${r.code} after ${r.ms} ms, ${endedAfterMs} ms after the fault: ${r.stderr.trim()}`,
        );
      },
      (c.killAfterMs ?? KILL_AFTER_MS) + 30_000,
    );
  }
});

describe('SIGINT', () => {
  it(
    'ends a run with exit 130, keeps what was measured, status interrupted, written atomically',
    async () => {
      const out = join(tmp, 'interrupted');
      const mark = join(tmp, 'interrupted.mark');
      let signalledAt = 0;
      // Interrupt the run once marks-inline.ts starts its first trial (inline's first is done).
      const r = await runCli(markedRun(out), {
        env: { DEFERLAB_TEST_MARK: mark },
        onSpawn: (child) =>
          whenMarked(mark, child, () => {
            signalledAt = Date.now();
            child.kill('SIGINT');
          }),
      });
      expect(signalledAt, `the run got under way (stderr: ${r.stderr})`).toBeGreaterThan(0);
      expect(r.killedByTimeout).toBe(false);
      console.log(`SIGINT: exit ${r.code}, ${r.endedAt - signalledAt} ms after the signal`);
      expect(r.code, `stderr:\n${r.stderr}`).toBe(130);
      // A run this long (50 trials) first announces how long it would take: that line, then one.
      expect.soft(stackLines(r.stderr), 'no stack trace').toEqual([]);
      const [estimate, ...rest] = r.stderr.trimEnd().split('\n');
      expect(estimate).toMatch(/^deferlab: 2 strategies × 50 trials × 1 sweep point, about \d+ (s|min) /);
      expect(rest).toHaveLength(1);
      expect(rest[0]).toMatch(
        /^deferlab: interrupted; the \d+ trials finished so far \(\d+(–\d+)? per strategy\) are in the results$/,
      );
      expect(r.stdout).toMatch(/^status: interrupted/m);

      const results = await readResults(out);
      expect(results.status).toBe('interrupted');
      const [inline] = results.points[0].strategies;
      expect(inline.trials.length).toBeGreaterThanOrEqual(1);
      expect(inline.trials.length, 'it stopped well before its 50 trials').toBeLessThan(50);
      expect(existsSync(join(out, 'report.html'))).toBe(true);
      expect(tmpLeftovers(out), 'no half-written file').toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
