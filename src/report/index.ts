/**
 * The report: results model, statistics, and the files a run writes. Library code: it returns
 * strings and paths, never prints (the CLI does).
 */

export type { ReportError, ReportErrorCode } from '../errors.js';
export { renderCsv } from './run/csv.js';
export { outputFiles, REPORT_FORMATS, type ReportFile, type ReportFormat } from './run/formats.js';
export { formatHgrm, hgrmFiles, type ParsedHgrm, parseHgrm } from './run/hgrm.js';
export { esc, renderHtml } from './run/html.js';
export { renderTable, type SummaryTable, summaryTable } from './run/table.js';
export { readResults, renderFiles, reportFromDir, writeFileAtomic, writeResults } from './run/write.js';
export { validateResults } from './schema.js';
export { type CompareOptions, compare } from './statistics/interval.js';
export { compareStage, compareStrategies, summarize, withComparisons } from './statistics/stats.js';
export * from './types.js';
