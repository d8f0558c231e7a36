/**
 * The output directory a command is about to fill, checked with the rest of its input: a run
 * writes about 15 files into it (results.json, report.html, the CSVs, ...), a scenario one
 * directory per sub-run, a comparison report.html and compare.json. A directory that already
 * holds something else (`--out src`) is refused rather than filled.
 *
 * Accepted: a path that does not exist yet (made just before the command starts,
 * src/report/run/outdir.ts), an empty directory, and the output of an earlier command of the same
 * kind, which the new one replaces (docs/cli.md, `--out`):
 *
 *   run       holds results.json (how `run` has always recognised a run's directory, src/app.ts)
 *   scenario  holds a sub-run directory with a results.json, or ipi-storm.json (ipi-storm's one file)
 *   compare   holds compare.json
 *
 * A path that is not a directory, or one that cannot be read, is not judged here:
 * prepareOutputDir says what is wrong with it when the command starts.
 *
 * Context: main thread, while the input is checked (before the CLI starts itself again, so the
 * first process refuses it). Reads directory entries only; writes nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatValue } from '../config/errors.js';
import { DeferlabError, EXIT_BAD_INPUT } from '../errors.js';
import { looksLikeResults } from '../report/run/write.js';

export type OutputKind = 'run' | 'scenario' | 'compare';

/** Entries named in a message, at most. */
const NAMED = 3;

const RESULTS_JSON = 'results.json';

/** What an earlier output of each kind holds, and how messages call it. */
const KINDS: Readonly<
  Record<OutputKind, { readonly earlier: string; readonly marker: string; readonly holds: (dir: string) => boolean }>
> = {
  run: {
    earlier: "an earlier run's results directory",
    marker: RESULTS_JSON,
    holds: (dir) => isResultsFile(join(dir, RESULTS_JSON)),
  },
  scenario: {
    earlier: "an earlier scenario's output directory",
    marker: 'sub-run directory with a results.json',
    holds: (dir) =>
      existsSync(join(dir, 'ipi-storm.json')) ||
      entries(dir).some((e) => e.isDirectory() && existsSync(join(dir, e.name, RESULTS_JSON))),
  },
  compare: {
    earlier: "an earlier comparison's output directory",
    marker: 'compare.json',
    holds: (dir) => existsSync(join(dir, 'compare.json')),
  },
};

/**
 * Whether `path` is a deferlab results file as readResultsFile first judges one (a JSON object with
 * "schemaVersion" and "points"): another program's results.json is not an earlier run to replace.
 */
function isResultsFile(path: string): boolean {
  try {
    return looksLikeResults(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return false;
  }
}

function entries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * Why `dir` (absolute) may not take `kind`'s output, as the detail after the value (`which holds
 * 12 entries and no results.json: api, app.ts, cli, …`), or undefined when it may: missing,
 * empty, an earlier output of `kind`, or not a readable directory (left to prepareOutputDir).
 */
export function foreignOutDir(dir: string, kind: OutputKind): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return undefined; // missing, a file, unreadable: prepareOutputDir says why, or makes it
  }
  if (names.length === 0 || KINDS[kind].holds(dir)) return undefined;
  const shown = names.slice(0, NAMED).join(', ') + (names.length > NAMED ? ', …' : '');
  const count = names.length === 1 ? '1 entry' : `${names.length} entries`;
  if (kind === 'run' && names.includes(RESULTS_JSON))
    return `whose ${RESULTS_JSON} is not a deferlab results file, among ${count}: ${shown}`;
  return `which holds ${count} and no ${KINDS[kind].marker}: ${shown}`;
}

/**
 * Refuse an output directory that holds something else than `kind`'s output (see the top of this
 * file). `setting` names it as the user gave it (`--out`, `outDir in lab.json`), or is undefined
 * for the default directory; `given` is the value as given. Throws a one-line DeferlabError,
 * exit status 2.
 */
export function checkOutDir(
  dir: string,
  kind: OutputKind,
  named: { readonly setting?: string; readonly given: string; readonly example: string },
): void {
  const detail = foreignOutDir(dir, kind);
  if (detail === undefined) return;
  const what = named.setting ?? 'the results directory';
  const fix =
    named.setting === undefined ? ' with --out DIR' : named.setting === '--out' ? `, like --out ${named.example}` : '';
  throw new DeferlabError(
    'E_BAD_OPTION',
    `${what} must be a new or empty directory, or ${KINDS[kind].earlier}, which it replaces ` +
      `(got ${formatValue(named.given)}, ${detail}); choose another path${fix}`,
    EXIT_BAD_INPUT,
  );
}
