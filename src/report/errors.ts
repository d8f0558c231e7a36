/**
 * The report's errors: stable codes, messages that say what was expected, what was found and
 * what to do. (The engine keeps its own catalogue; these are only the report's.)
 */

export type ReportErrorCode =
  | 'ERR_RESULTS_MISSING' // no results.json where one was expected
  | 'ERR_RESULTS_NOT_DEFERLAB' // not JSON, or JSON without deferlab's shape
  | 'ERR_RESULTS_SCHEMA_VERSION' // a deferlab results file of another schema version
  | 'ERR_RESULTS_INVALID' // deferlab's shape, but a field is wrong
  | 'ERR_RESULTS_WRITE'; // the output directory could not take the results (a copy may be elsewhere)

export type ReportError = Error & {
  code: ReportErrorCode /** ERR_RESULTS_WRITE: where the copy of results.json went. */;
  rescuedTo?: string;
};

export function reportError(code: ReportErrorCode, message: string, cause?: unknown): ReportError {
  const e = new Error(message, cause === undefined ? undefined : { cause }) as ReportError;
  e.code = code;
  return e;
}
