/**
 * Fitting a terminal table to a width: which columns stay. Shared by the summary table
 * (table.ts) and the net lines under it (net-lines.ts). Pure.
 */

/**
 * Where a column shows in the terminal table: `always`; a priority (1 first) for the columns
 * added, in that order, while the table still fits its width (table.ts's TABLE_WIDTH); or `wide` (only under
 * `--wide`). HTML, CSV and JSON always have everything.
 */
export type ColumnShow = 'always' | number | 'wide';

/**
 * Which columns the default terminal table keeps: every `always` column, then the prioritised
 * ones in priority order while the whole grid (columns two spaces apart) stays within `limit`.
 * `widths`: each column's width. Context: any thread; pure.
 */
export function fitColumns(widths: readonly number[], show: readonly ColumnShow[], limit: number): boolean[] {
  const keep = show.map((s) => s === 'always');
  const width = () => widths.reduce((a, w, i) => (keep[i] ? a + w + 2 : a), -2);
  const optional = show
    .map((s, i) => [s, i] as const)
    .filter((e): e is readonly [number, number] => typeof e[0] === 'number')
    .sort((x, y) => x[0] - y[0]);
  for (const [, i] of optional) {
    keep[i] = true;
    if (width() > limit) keep[i] = false;
  }
  return keep;
}
