/**
 * --irq-trace: every bad input is one line, exit status 2, no stack trace, and a malformed line
 * is named by its number (in-process, through main() with the real commands,
 * test/fixtures/cli-main.ts; the first case also through the real CLI in a child process,
 * test/fixtures/cli.ts); a short real run says in its report that its arrivals came from the
 * trace, how fast, and that a trace played once ran out. Traces live in a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_HINT } from '../../src/cli/main.js';
import { runCli, stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-irqtrace-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
};

const tiny = file('tiny.csv', 'time_ns,cpu,irq\n1000000,7,40\n1500000,9,41\n2000000,7,40\n');
const badCsv = file('bad.csv', 'time_ns,cpu,irq\n1000000,7,40\n2000000,7\n3000000,7,40\n');
const badPerf = file(
  'bad.perf.txt',
  [
    '# perf script',
    '         swapper      0 [003] 84215.317214: irq:irq_handler_entry: irq=45 name=eth0',
    '         swapper      0 [003] 84215.317223: irq:irq_handler_entry: irq=4x5 name=eth0',
  ].join('\n'),
);
const empty = file('empty.csv', '# nothing recorded\n\n');
const config = file('cfg.json', JSON.stringify({ irq: { trace: badCsv, traceLoop: true } }));

/** A run's command line that would boot a machine, were its input good. */
const run = (...args: string[]) => ['run', '--workload', 'irq_only', '--strategy', 'inline', '--no-output', ...args];

/**
 * Exit status 2, exactly `lines` on stderr, no stack trace, nothing on stdout: in this process,
 * or through `node bin/deferlab.js` (`via: 'process'`).
 */
async function expectBadInput(args: string[], lines: RegExp[], via: 'main' | 'process' = 'main'): Promise<void> {
  const r =
    via === 'process'
      ? await runCli(args).then((p) => ({ ...p, status: p.code }))
      : await runMain(args, tmp).then((m) => ({ ...m, killedByTimeout: m.ranUntilStopped }));
  expect(r.killedByTimeout, 'refused before anything ran').toBe(false);
  expect(r.status, r.stderr).toBe(2);
  const got = r.stderr.trimEnd().split('\n');
  expect(got, r.stderr).toHaveLength(lines.length);
  for (const [i, l] of got.entries()) expect(l).toMatch(lines[i]);
  expect(stackLines(r.stderr)).toEqual([]);
  expect(r.stdout).toBe('');
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const hint = new RegExp(`^${esc(USAGE_HINT)}$`);

describe('a bad --irq-trace is one line and exit status 2', () => {
  it('a malformed CSV line is named by its number (in-process and through the real CLI)', async () => {
    const lines = [
      new RegExp(
        `^deferlab: irq trace ${esc(badCsv)} line 3: has 2 fields, not the 3 of time_ns,cpu,irq \\("2000000,7"\\)$`,
      ),
    ];
    await expectBadInput(run('--irq-trace', badCsv), lines);
    await expectBadInput(run('--irq-trace', badCsv), lines, 'process');
  });

  it('a malformed perf script line is named by its number', async () => {
    await expectBadInput(run('--irq-trace', badPerf), [
      new RegExp(`^deferlab: irq trace ${esc(badPerf)} line 3: irq= must be a whole number \\(got "4x5"\\)$`),
    ]);
  });

  it('a malformed line of a trace named in the config file is named too', async () => {
    await expectBadInput(run('--config', config), [new RegExp(`^deferlab: irq trace ${esc(badCsv)} line 3: `)]);
  });

  it('a missing file', async () => {
    const missing = join(tmp, 'nope.txt');
    await expectBadInput(run('--irq-trace', missing), [
      new RegExp(`^deferlab: irq trace ${esc(missing)}: does not exist$`),
    ]);
  });

  it('a trace with no arrival', async () => {
    await expectBadInput(run('--irq-trace', empty), [
      new RegExp(`^deferlab: irq trace ${esc(empty)}: is empty \\(only blank lines and comments\\)$`),
    ]);
  });

  it('a map naming an emulated CPU the machine does not have', async () => {
    await expectBadInput(run('--irq-trace', tiny, '--irq-trace-map', '7:0,9:5'), [
      /^deferlab: --irq-trace-map must map onto emulated CPUs 0 to 1 \(9:5: the machine has 2 CPUs\) \(got "7:0,9:5"\); map onto a CPU below 2 \(the default --cpus 2\), or raise the CPU count$/,
      hint,
    ]);
  });

  it('a map that is not HOST:CPU pairs', async () => {
    await expectBadInput(run('--irq-trace', tiny, '--irq-trace-map', '7-0'), [
      /^deferlab: --irq-trace-map must be HOST:CPU pairs separated by commas, like 3:0,5:1 \("7-0" is not one\) \(got "7-0"\)$/,
      hint,
    ]);
  });

  it('a map that places none of the trace’s arrivals', async () => {
    await expectBadInput(run('--irq-trace', tiny, '--irq-trace-map', '3:0'), [
      new RegExp(
        `^deferlab: irq trace ${esc(tiny)}: has no arrival on the host CPUs the map names \\(3\\); its arrivals are on host CPUs 7, 9$`,
      ),
    ]);
  });

  it('more host CPUs than emulated ones, without a map', async () => {
    await expectBadInput(run('--cpus', '1', '--irq-trace', tiny), [
      new RegExp(
        `^deferlab: irq trace ${esc(tiny)}: has arrivals on 2 host CPUs \\(7, 9\\) but the machine has 1 CPUs; `,
      ),
    ]);
  });

  it('a scale out of range', async () => {
    await expectBadInput(run('--irq-trace', tiny, '--irq-trace-scale', '0'), [
      /^deferlab: --irq-trace-scale must be a number from 0\.001 to 1000 \(2 replays at half the rate, 0\.5 at twice\) \(got 0\)$/,
      hint,
    ]);
  });

  it('a companion flag without --irq-trace', async () => {
    await expectBadInput(run('--irq-trace-loop'), [
      /^deferlab: --irq-trace-loop applies to a replayed trace, but --irq-trace is not given; add --irq-trace FILE, or drop it$/,
      hint,
    ]);
  });

  it('a setting of the generator the trace replaces', async () => {
    await expectBadInput(run('--irq-trace', tiny, '--irq-rate', '5k'), [
      /^deferlab: --irq-trace replaces the interrupt generator, so --irq-rate would have no effect; give one of them$/,
      hint,
    ]);
  });
});

describe('a run replaying a trace', () => {
  it('says where its arrivals came from, how fast they came, and that a trace played once ran out', async () => {
    const r = await runCli(
      run('--irq-trace', tiny, '--irq-trace-map', '7:1,9:0', '--trials', '1', '--duration', '50ms', '--warmup', '0'),
      { timeoutMs: 90_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const stdout = r.stdout.replace(/\n {2}(?=\S)/g, ' '); // prose lines wrap (continuations indented by two)
    expect(stdout).toContain(
      `background interrupts replayed from ${tiny} (csv, 3 arrivals in 1 ms; host CPUs 7:1,9:0)`,
    );
    expect(stdout).toMatch(
      /^irq trace: 3 arrivals per 1 ms pass \(3000\/s as recorded\); replayed \S+\/s in the measured phases \(irqs_replayed\), \d+ skipped late, \d+ dropped$/m,
    );
    expect(stdout).toContain(
      "note: the irq trace ends 1 ms into each trial (it starts with the trial's warm-up), 1 ms into the 50 ms measured phase: arrivals stopped for the rest; --irq-trace-loop repeats it",
    );
  }, 90_000);
});
