/**
 * A scenario's directory: its sub-runs (each a results directory) and SCENARIO_TXT, what the
 * scenario printed (its tables and VERDICT lines), kept so that its verdicts outlive the terminal
 * and `deferlab report DIR` can print them again. Context: main thread.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_JSON, SCENARIO_TXT } from './formats.js';
import { errnoText } from './outdir.js';
import { writeFileAtomic } from './write.js';

/** The subdirectories of `path` that hold a results.json (a scenario's sub-runs), sorted. */
export function subRuns(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(path, e.name, RESULTS_JSON)))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * Write what a scenario printed to SCENARIO_TXT in `outDir`, under a first line naming the command
 * (`argv`, or `scenario NAME` without one); nothing without an output directory. A failed write is
 * a warning (`warn`), not a failure: the report was printed.
 */
export async function keepScenarioText(
  outDir: string | null,
  name: string,
  argv: readonly string[],
  printed: readonly string[],
  warn: (line: string) => void,
): Promise<void> {
  if (!outDir || !existsSync(outDir)) return;
  const head = `# deferlab ${argv.length ? argv.join(' ') : `scenario ${name}`}\n`;
  try {
    await writeFileAtomic(join(outDir, SCENARIO_TXT), head + printed.join(''));
  } catch (e) {
    warn(
      `deferlab: warning: could not write ${join(outDir, SCENARIO_TXT)}: ${errnoText(e)}; the report above is not kept\n`,
    );
  }
}

/**
 * A scenario directory's kept report, with a closing line on how to see its sub-runs; undefined
 * where `dir` is a run's own (it has a results.json) or holds no SCENARIO_TXT.
 */
export function scenarioText(dir: string): string | undefined {
  if (existsSync(join(dir, RESULTS_JSON)) || !existsSync(join(dir, SCENARIO_TXT))) return undefined;
  const each = subRuns(dir).length ? `; each sub-run's: deferlab report ${join(dir, '<sub-run>')}` : '';
  return `${readFileSync(join(dir, SCENARIO_TXT), 'utf8')}(the scenario's report as it printed it${each})\n`;
}
