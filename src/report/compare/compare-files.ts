/**
 * `deferlab compare`'s files: reading the runs given (each a results directory or a results.json
 * path) and writing its outputs (`--out DIR`: report.html and compare.json; `--json FILE`).
 * Errors are ReportErrors (errors.ts) naming the file: the CLI prints one line, exit status 2.
 */

import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RESULTS_JSON } from '../run/formats.js';
import { REPORT_HTML } from '../run/html.js';
import { makeDirs } from '../run/outdir.js';
import { readResultsFile, writeFileAtomic } from '../run/write.js';
import { type CompareInput, type CompareModel, compareJson } from './compare.js';

export const COMPARE_JSON = 'compare.json';

/** The results file of `given` (resolved to `path`): `path/results.json` for a directory, else `path`. */
export async function resultsFileOf(path: string): Promise<string> {
  try {
    return (await stat(path)).isDirectory() ? join(path, RESULTS_JSON) : path;
  } catch {
    return path; // readResultsFile says what is wrong with it
  }
}

/**
 * Read every run, in order. `runs` pairs the name the user typed with its resolved path.
 * Context: main thread. Throws the first run's ReportError (missing, not deferlab's, another
 * schemaVersion, invalid).
 */
export async function readCompareInputs(runs: ReadonlyArray<{ name: string; path: string }>): Promise<CompareInput[]> {
  const out: CompareInput[] = [];
  for (const r of runs) {
    const file = await resultsFileOf(r.path);
    out.push({ name: r.name, path: file, results: await readResultsFile(file) });
  }
  return out;
}

/**
 * Write `dir/report.html` (`html`, from compare-html.ts) and `dir/compare.json` (the directory
 * made as needed). Returns the paths written.
 */
export async function writeCompareDir(dir: string, model: CompareModel, html: string): Promise<string[]> {
  await makeDirs(dir);
  return [
    await writeFileAtomic(join(dir, REPORT_HTML), html),
    await writeFileAtomic(join(dir, COMPARE_JSON), compareJson(model)),
  ];
}
