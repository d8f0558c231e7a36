/**
 * What a report format is: files rendered from a run's results.json into its results directory.
 * Each format's own file exports one (csv.ts, html.ts, hgrm.ts); formats.ts lists them.
 */
import type { RunResults } from '../types.js';

/** One file of a format: its name inside the results directory, and its text. */
export interface ReportFile {
  name: string;
  text: string;
}

export interface ReportFormat {
  /** How a run's list of files names the format's files: `results.csv`, `.hgrm per stage`. */
  readonly listed: string;
  /** What the files hold, in a phrase (`deferlab run --help` lists it). */
  readonly holds: string;
  /**
   * The format's files, rendered from `results` (already validated).
   * Context: main thread; pure apart from decoding histograms. Throws on a damaged histogram.
   */
  render(results: RunResults): ReportFile[];
  /**
   * For a format whose file names vary with the run (one .hgrm file per strategy and stage):
   * whether `name` is one of this format's files. In a directory reused for another run, such a
   * file that this run did not render is removed, so that it does not sit beside the new results
   * as if it were part of them.
   */
  readonly owns?: (name: string) => boolean;
}
