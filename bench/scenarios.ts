/**
 * `npm run bench:scenarios`: all four seed scenarios at full size, one after another, printing
 * their tables and verdicts (and writing results under deferlab-results/scenarios-<stamp>/).
 * Full size: the random-regression msg_size sweep 4K..1M by x2 and its interrupt-rate x trigger
 * grid; 5 trials of each cpu-hog variant; 10 rounds of ipi-storm; entropy at 3 rates.
 */

import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CliIo } from '../src/cli/main.js';
import { resolveConfig, runStamp } from '../src/config/schema.js';
import { runCpuHog } from '../src/scenarios/cpu-hog.js';
import { runEntropy } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { runIpiStorm } from '../src/scenarios/ipi-storm.js';
import { FULL_SIZES, runRandomRegression } from '../src/scenarios/random-regression.js';

export async function main(): Promise<void> {
  const out = join(process.cwd(), 'deferlab-results', `scenarios-${runStamp(new Date())}`);
  const io: CliIo = {
    stdout: (s) => void process.stdout.write(s),
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
  process.stdout.write('\n################ random-regression ################\n');
  await runRandomRegression(ctx('random-regression', { trials: 3, trialMs: '1s' }), FULL_SIZES);
  process.stdout.write('\n################ ipi-storm ################\n');
  await runIpiStorm(ctx('ipi-storm', { trials: 10 }));
  process.stdout.write('\n################ cpu-hog ################\n');
  await runCpuHog(ctx('cpu-hog', { trials: 5 }));
  process.stdout.write('\n################ entropy ################\n');
  await runEntropy(ctx('entropy', { trials: 3 }), [200, 2000, 20000]);
  process.stdout.write(`\n# done in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
  process.exit(0);
}
