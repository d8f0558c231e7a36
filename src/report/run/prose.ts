/**
 * The prose of the terminal report (the lines above and under a table: setup line, notes,
 * legends, verdicts) wrapped to the width of the terminal it is printed on. Tables are not
 * wrapped: they fit their own budget (table.ts's TABLE_WIDTH) or are wide on purpose (`--wide`).
 * Pure; nothing here prints or reads the process.
 */
import { wrapWords } from '../../text.js';

/** Prose wraps to this many columns when stdout is not a terminal (a pipe, a file, CI logs). */
export const PROSE_WIDTH = 100;

/** Narrowest width prose wraps to, whatever the terminal says: below it, lines would be mostly breaks. */
export const MIN_PROSE_WIDTH = 40;

/** Continuation lines of a wrapped paragraph are indented by this, so paragraphs stay apart. */
const HANG = '  ';

/**
 * The width prose wraps to when printed on `stream` (`process.stdout`): its columns when it is a
 * terminal (at least {@link MIN_PROSE_WIDTH}), else {@link PROSE_WIDTH}.
 */
export function proseWidthOf(stream: { readonly isTTY?: boolean; readonly columns?: number }): number {
  const c = stream.columns;
  if (!stream.isTTY || typeof c !== 'number' || !Number.isFinite(c) || c <= 0) return PROSE_WIDTH;
  return Math.max(MIN_PROSE_WIDTH, Math.floor(c));
}

/**
 * `text` as lines of at most `width` characters, broken at spaces, continuation lines indented
 * by two; a single word longer than a line stands alone on its line. Every word is kept, in
 * order. A line that fits is returned as it is.
 */
export function wrapProse(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const [first, ...rest] = wrapWords(text, width);
  if (rest.length === 0) return [first];
  return [first, ...wrapWords(rest.join(' '), Math.max(1, width - HANG.length)).map((l) => HANG + l)];
}
