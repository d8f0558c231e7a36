/**
 * JSON.parse's errors as one line for a message: V8's reason without the echo of the input (which
 * can hold newlines and the whole file) and the position as a line and column. Used for config
 * files (src/config/load.ts) and results files (src/report/run/write.ts).
 */

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/**
 * Where JSON.parse says the error is. V8 says "at position N" (Node 20) and, on newer
 * versions, "(line L column C)"; the position is turned into a line and column here.
 */
export function jsonSyntaxLocation(message: string, text: string): { line: number; column: number } | undefined {
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /at position (\d+)/.exec(message);
  if (pos) return lineAndColumn(text, Number(pos[1]));
  if (/Unexpected end of JSON input/.test(message)) return lineAndColumn(text, text.length);
  return undefined;
}

/** V8's reason without its position and without the echo of the input. */
export function jsonSyntaxReason(message: string): string {
  return (
    message
      .replace(/,\s*(\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, '')
      .replace(/\s*(in JSON )?at position \d+.*$/s, '')
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .trim() || 'invalid syntax'
  );
}

/** `Unexpected token 'h' at line 1 column 1`: V8's error for `text`, on one line. */
export function jsonSyntaxText(message: string, text: string): string {
  const at = jsonSyntaxLocation(message, text);
  return `${jsonSyntaxReason(message)}${at ? ` at line ${at.line} column ${at.column}` : ''}`;
}
