/**
 * `npm run bench:scenarios`: all five seed scenarios at full size, one after another, printing
 * their tables and verdicts (and writing results under deferlab-results/scenarios-<stamp>/).
 * Full size: the random-regression msg_size sweep 4K..1M by x2 and its interrupt-rate x trigger
 * grid, and part 2 (the network path, per NIC profile) at every size; 5 trials of each cpu-hog
 * variant; 10 rounds of ipi-storm; seed-machine's own grid (16 CPUs, rule on and off); entropy
 * at 3 rates.
 *
 * `--only NAME` runs one scenario. random-regression prints the process's RSS after its first
 * sub-run and after its last (one machine is booted per sweep point: issue #13's bound).
 */

import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CliIo } from '../src/cli/main.js';
import { resolveConfig, runStamp } from '../src/config/schema.js';
import { reexecWithFixedThreshold } from '../src/harness/malloc.js';
import { runCpuHog } from '../src/scenarios/cpu-hog.js';
import { runEntropy } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { runIpiStorm } from '../src/scenarios/ipi-storm.js';
import { FULL_SIZES, runRandomRegression } from '../src/scenarios/random-regression.js';
import { runSeedMachine } from '../src/scenarios/seed-machine.js';
import { type BenchUsage, benchArgs, refuse } from './cli.js';
import { type ProcMemory, procMemory } from './soak.js';

const MiB = 1 << 20;

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const i = argv.indexOf('--only');
  const only = i >= 0 ? argv[i + 1] : undefined;
  if (only !== undefined && !(only in SCENARIOS)) {
    refuse('bench:scenarios', `--only must name a scenario (${Object.keys(SCENARIOS).join(', ')})`);
  }
  const want = (name: string) => only === undefined || only === name;
  /** RSS when each sub-run's header was printed (the previous sub-run had finished). */
  const rssAt: number[] = [];
  /** glibc's main and thread malloc arenas at the same moments (bench/soak.ts). */
  const memAt: (ProcMemory | undefined)[] = [];
  const out = join(process.cwd(), 'deferlab-results', `scenarios-${runStamp(new Date())}`);
  const io: CliIo = {
    stdout: (s) => {
      if (s.startsWith('\n== ')) {
        rssAt.push(process.memoryUsage().rss);
        memAt.push(procMemory());
      }
      process.stdout.write(s);
    },
    stderr: (s) => void process.stderr.write(s),
    isTTY: false,
    cwd: process.cwd(),
    env: process.env,
  };
  const signal = new AbortController().signal;
  process.stdout.write(`# deferlab scenarios at full size, on ${availableParallelism()} cores; results in ${out}\n`);
  const ctx = (name: string, flags: Record<string, unknown>) => ({
    config: resolveConfig({
      preset: { name, config: SCENARIOS[name].config },
      flags: { outDir: join(out, name), ...flags } as never,
      cwd: process.cwd(),
    }),
    io,
    signal,
    argv: ['bench:scenarios', name],
  });
  const t0 = Date.now();
  if (want('random-regression')) {
    process.stdout.write('\n################ random-regression ################\n');
    rssAt.length = 0;
    // Three trials a point and no --until: 45 points of part 2 at up to 15 s more each would add
    // another 11 minutes; the intervals are printed as they are.
    await runRandomRegression(ctx('random-regression', { trials: 3, trialMs: '1s', until: null }), FULL_SIZES);
    const last = process.memoryUsage().rss;
    const lastMem = procMemory();
    if (rssAt.length >= 2) {
      const first = rssAt[1]; // at the second sub-run's header: the first one had finished
      const arenas = (m: ProcMemory | undefined) =>
        m
          ? `main arena ${(m.brk / MiB).toFixed(1)} MiB, thread arenas ${(m.arenas / MiB).toFixed(1)} MiB`
          : 'arenas unknown';
      process.stdout.write(
        `\nRSS after the first sub-run ${(first / MiB).toFixed(1)} MiB (${arenas(memAt[1])}), after the last ${(last / MiB).toFixed(1)} MiB (${arenas(lastMem)}): ×${(last / first).toFixed(3)} (bar: within 10%; ${rssAt.length} sub-runs, one machine per point)\n`,
      );
    }
  }
  if (want('ipi-storm')) {
    process.stdout.write('\n################ ipi-storm ################\n');
    await runIpiStorm(ctx('ipi-storm', { trials: 10 }));
  }
  if (want('cpu-hog')) {
    process.stdout.write('\n################ cpu-hog ################\n');
    await runCpuHog(ctx('cpu-hog', { trials: 5 }));
  }
  if (want('seed-machine')) {
    process.stdout.write('\n################ seed-machine ################\n');
    // Its own grid (SEED_GRID): 10 sub-runs of 2 points, under its --until 10 (about 13 minutes).
    await runSeedMachine(ctx('seed-machine', {}));
  }
  if (want('entropy')) {
    process.stdout.write('\n################ entropy ################\n');
    await runEntropy(ctx('entropy', { trials: 3 }), [200, 2000, 20000]);
  }
  process.stdout.write(`\n# done in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
}

export const USAGE: BenchUsage = {
  script: 'bench:scenarios',
  about:
    'All five seed scenarios at full size, one after another (about 30 minutes on 2 cores), printing their tables and verdicts and writing results under deferlab-results/scenarios-<stamp>/. For one scenario at a size of your own, `deferlab scenario NAME --help` says what it takes.',
  flags: [{ flag: '--only', value: 'NAME', help: `run one scenario: ${Object.keys(SCENARIOS).join(', ')}` }],
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchArgs(USAGE);
  // As the CLI: glibc's mmap threshold fixed, in a second process (src/harness/malloc.ts).
  await reexecWithFixedThreshold();
  await main();
  process.exit(0);
}
