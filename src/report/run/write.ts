/**
 * Writing a run's output directory, and reading it back for `deferlab report DIR`.
 *
 *   DIR/results.json                      the results model (the source of truth; see types.ts)
 *   DIR/...                               the report formats rendered from it (formats.ts):
 *                                         results.csv, report.html, one .hgrm per strategy and stage
 *
 * Every file is written atomically: to `<file>.tmp-<pid>`, fsync'd, then renamed over the
 * target, so a reader (or a crash) never sees half a file. results.json is written first, so the
 * data survives even if rendering a derived file fails; everything else can be re-rendered from
 * it by {@link reportFromDir}.
 */

import { unlinkSync } from 'node:fs';
import { open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ReportError } from '../../errors.js';
import { jsonSyntaxText } from '../../json-error.js';
import { validateResults } from '../schema.js';
import type { RunResults } from '../types.js';
import { SCHEMA_VERSION } from '../types.js';
import { REPORT_FORMATS, RESULTS_JSON } from './formats.js';
import { errnoText, makeDirs, rescueDir } from './outdir.js';
import { type RenderOptions, renderTable } from './table.js';

/** Temp files being written now ({@link writeFileAtomic}): removed by {@link removeTempsInFlight}. */
const inFlight = new Set<string>();

/**
 * Remove the temp files of writes still in flight, synchronously: for a process that must leave
 * at once (a second Ctrl-C) and would otherwise leave `<file>.tmp-<pid>` beside the results.
 * Context: main thread, just before process.exit().
 */
export function removeTempsInFlight(): void {
  for (const tmp of inFlight) {
    try {
      unlinkSync(tmp);
    } catch {
      // already renamed or never created
    }
  }
  inFlight.clear();
}

/**
 * Write `text` to `path` atomically: a temp file in the same directory, fsync, rename.
 * Context: main thread (async I/O). Returns: `path`.
 */
export async function writeFileAtomic(path: string, text: string): Promise<string> {
  const tmp = `${path}.tmp-${process.pid}`;
  inFlight.add(tmp);
  try {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  } finally {
    inFlight.delete(tmp);
  }
  return path;
}

const more = (count: number): string => (count > 1 ? ` (and ${count - 1} more problem${count > 2 ? 's' : ''})` : '');

function assertValid(results: RunResults): void {
  const v = validateResults(JSON.parse(JSON.stringify(results)));
  if (!v.ok) {
    throw new ReportError(
      'ERR_RESULTS_INVALID',
      `writeResults: the results to write do not match the results model (src/report/types.ts); nothing was written: ${v.first}${more(v.count)}\n${v.problems}`,
    );
  }
}

/**
 * Write the files derived from results.json (every report format, formats.ts) into `dir`, which
 * must exist; with `prune` (a run writing its directory), remove the files of those formats the
 * results do not describe (a reused directory's). Returns: the paths written.
 */
export async function renderFiles(dir: string, results: RunResults, prune = true): Promise<string[]> {
  const paths: string[] = [];
  for (const format of REPORT_FORMATS) {
    const files = format.render(results);
    for (const f of files) paths.push(await writeFileAtomic(join(dir, f.name), f.text));
    if (!format.owns || !prune) continue;
    // A directory reused for another run: files of this format that the run did not render
    // (strategies or stages it does not have) would otherwise sit beside the new results.
    const current = new Set(files.map((f) => f.name));
    for (const name of await readdir(dir))
      if (format.owns(name) && !current.has(name)) await rm(join(dir, name), { force: true });
  }
  return paths;
}

/**
 * Write a run's output directory (created if needed, one component at a time: never
 * `mkdir -p`'s `recursive: true`, which hangs on Node 20 under /proc): results.json, then every
 * report format (formats.ts), each atomically. The results are validated first; if they do
 * not match the model nothing is written.
 *
 * Nothing measured is lost: when results.json cannot be written into `dir` (the disk is full, the
 * directory was removed), a copy goes to a fresh directory under os.tmpdir() and the error
 * (code `ERR_RESULTS_WRITE`, `rescuedTo` set) says where. When results.json is written but a
 * derived file fails, the error says so (`deferlab report DIR` re-renders them).
 *
 * Context: main thread, after the run. Returns: the paths written, results.json first.
 */
export async function writeResults(dir: string, results: RunResults): Promise<string[]> {
  assertValid(results);
  const jsonText = JSON.stringify(results, null, 2) + '\n';
  const jsonPath = join(dir, RESULTS_JSON);
  let json: string;
  try {
    await makeDirs(dir);
    json = await writeFileAtomic(jsonPath, jsonText);
  } catch (e) {
    let rescuedTo: string | undefined;
    let rescue: string;
    try {
      rescuedTo = await rescueDir();
      await writeFileAtomic(join(rescuedTo, RESULTS_JSON), jsonText);
      rescue = `a copy of results.json was saved in ${rescuedTo} instead ('deferlab report ${rescuedTo}' renders the rest)`;
    } catch (e2) {
      rescue = `saving a copy under the temp directory failed too (${errnoText(e2)}); only the table above remains`;
      rescuedTo = undefined;
    }
    const err = new ReportError('ERR_RESULTS_WRITE', `could not write ${jsonPath}: ${errnoText(e)}; ${rescue}`, e);
    if (rescuedTo) err.rescuedTo = rescuedTo;
    throw err;
  }
  try {
    return [json, ...(await renderFiles(dir, results))];
  } catch (e) {
    throw new ReportError(
      'ERR_RESULTS_WRITE',
      `wrote ${jsonPath}, but not all the files derived from it: ${errnoText(e)}; 'deferlab report ${dir}' re-renders them once that is fixed`,
      e,
    );
  }
}

/**
 * Read and validate `dir/results.json`. NaN values (written as null) come back as NaN.
 * Throws a ReportError (src/errors.ts) naming the file when it is missing, not a deferlab
 * results file, of another schemaVersion, or invalid.
 */
export async function readResults(dir: string): Promise<RunResults> {
  return readResultsFile(join(dir, RESULTS_JSON));
}

/**
 * Whether parsed JSON is shaped as a deferlab results file at first sight (an object with
 * "schemaVersion" and "points"): what readResultsFile judges before the version and the schema.
 */
export function looksLikeResults(data: unknown): boolean {
  return typeof data === 'object' && data !== null && 'schemaVersion' in data && 'points' in data;
}

/** {@link readResults} of a results file by its own path (`deferlab compare` takes either). */
export async function readResultsFile(path: string): Promise<RunResults> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ReportError(
        'ERR_RESULTS_MISSING',
        `${path} does not exist: give the output directory of a \`deferlab run\` (the one holding results.json)`,
        e,
      );
    }
    // EACCES, EISDIR, ...: the file is there but not readable as results: bad input, not a failure.
    throw new ReportError('ERR_RESULTS_MISSING', `${path} cannot be read: ${errnoText(e)}`, e);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ReportError(
      'ERR_RESULTS_NOT_DEFERLAB',
      `${path} is not a deferlab results file: not JSON (${jsonSyntaxText((e as Error).message, text)})`,
      e,
    );
  }
  if (!looksLikeResults(data)) {
    throw new ReportError(
      'ERR_RESULTS_NOT_DEFERLAB',
      `${path} is not a deferlab results file: expected a JSON object with "schemaVersion" and "points"`,
    );
  }
  const version = (data as { schemaVersion: unknown }).schemaVersion;
  if (version !== SCHEMA_VERSION) {
    const writer = (data as { meta?: { deferlab?: unknown } }).meta?.deferlab;
    throw new ReportError(
      'ERR_RESULTS_SCHEMA_VERSION',
      `${path} has schemaVersion ${JSON.stringify(version)}; this deferlab reads schemaVersion ${SCHEMA_VERSION}` +
        (typeof writer === 'string' ? `: render it with deferlab ${writer}, which wrote it` : '') +
        ', or re-run',
    );
  }
  const v = validateResults(data);
  if (!v.ok) {
    throw new ReportError(
      'ERR_RESULTS_INVALID',
      `${path} is not a valid deferlab results file: ${v.first}${more(v.count)}\n${v.problems}`,
    );
  }
  return v.results;
}

/**
 * `deferlab report DIR`: read DIR/results.json, re-render the report formats (formats.ts)
 * from it (results.json itself is left untouched), and return the terminal table
 * (`opts.wide`: every column) for the caller to print. A directory the formats cannot be written
 * into (read-only, someone else's) still gives the table: `writeProblem` says what failed and
 * `paths` is empty. A results.json that cannot be read is a ReportError.
 */
export async function reportFromDir(
  dir: string,
  opts: RenderOptions = {},
): Promise<{ results: RunResults; paths: string[]; table: string; writeProblem?: string }> {
  const results = await readResults(dir);
  if (results.status === 'completed' && results.points.length === 0)
    throw new ReportError(
      'ERR_RESULTS_INVALID',
      `${join(dir, RESULTS_JSON)} says its run completed but holds no measured point: it looks damaged (a completed run has at least one); nothing was re-rendered`,
    );
  const table = renderTable(results, opts);
  try {
    // Re-rendering writes what results.json describes and removes nothing: a file it does not
    // describe (a damaged results.json's missing strategy) may be the only copy left.
    return { results, paths: await renderFiles(dir, results, false), table };
  } catch (e) {
    return {
      results,
      paths: [],
      table,
      writeProblem: `could not re-render the files derived from ${join(dir, RESULTS_JSON)} into ${dir}: ${errnoText(e)}`,
    };
  }
}
