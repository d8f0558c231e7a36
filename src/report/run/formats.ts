/**
 * The report formats, in the order a run lists them: every file a results directory holds beside
 * results.json, rendered from it. write.ts writes them (and `deferlab report DIR` re-renders
 * them), the CLI names them after a run (src/app.ts) and `deferlab run --help` lists them
 * (src/cli/help.ts), all from this list.
 *
 * To add a format: a file here that renders it and exports its {@link ReportFormat}, and one line
 * below (and its row in docs/results.md).
 */
import { basename } from 'node:path';
import { CSV_FORMAT } from './csv.js';
import type { ReportFormat } from './format.js';
import { HGRM_FORMAT } from './hgrm.js';
import { HTML_FORMAT } from './html.js';

export type { ReportFile, ReportFormat } from './format.js';

/** The results model itself: written first (write.ts), the source every format renders from. */
export const RESULTS_JSON = 'results.json';

/**
 * A scenario's directory (beside its sub-runs): what the scenario printed, its tables and VERDICT
 * lines, under a first line naming the command (src/app.ts); `deferlab report DIR` prints it.
 */
export const SCENARIO_TXT = 'scenario.txt';

export const REPORT_FORMATS: readonly ReportFormat[] = [CSV_FORMAT, HTML_FORMAT, HGRM_FORMAT];

/** Every file of a results directory as (listed name, what it holds): results.json, then the formats. */
export function outputFiles(): Array<readonly [listed: string, holds: string]> {
  return [
    [RESULTS_JSON, 'everything the run measured; the other files are rendered from it'],
    ...REPORT_FORMATS.map((f) => [f.listed, f.holds] as const),
  ];
}

/**
 * `results.json, results.csv, report.html, .hgrm per stage`: what a run says it wrote. With the
 * paths written, only the formats that wrote a file are named (a run that measured no stage
 * writes no .hgrm): a format's file is the one it lists, or one it `owns`.
 */
export function outputFileList(written?: readonly string[]): string {
  const names = written?.map((p) => basename(p));
  const wrote = (listed: string, owns?: (name: string) => boolean) =>
    !names || names.some((n) => n === listed || (owns?.(n) ?? false));
  return [
    ...(wrote(RESULTS_JSON) ? [RESULTS_JSON] : []),
    ...REPORT_FORMATS.filter((f) => wrote(f.listed, f.owns)).map((f) => f.listed),
  ].join(', ');
}
