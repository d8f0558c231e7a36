/**
 * The report: results model, statistics, and the files a run writes. Library code: it returns
 * strings and paths, never prints (the CLI does).
 */

export type { ReportError, ReportErrorCode } from '../errors.js';
export { renderCsv } from './csv.js';
export { formatHgrm, type ParsedHgrm, parseHgrm } from './hgrm.js';
export { esc, renderHtml } from './html.js';
export { validateResults } from './schema.js';
export { type CompareOptions, compare, compareStage, compareStrategies, summarize, withComparisons } from './stats.js';
export { renderTable, type SummaryTable, summaryTable } from './table.js';
export * from './types.js';
export { hgrmFiles, readResults, renderFiles, reportFromDir, writeFileAtomic, writeResults } from './write.js';
