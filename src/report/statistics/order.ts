/**
 * Order statistics of a plain list: the one median and quantile the project uses (the harness's
 * calibration and TDF, the report's notes, the stall profile, the benches).
 * Context: any; pure; median() copies and sorts its input.
 */

/** The value at probability p of `sorted` (ascending): linear between order statistics; NaN when empty. */
export function quantileOf(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const x = p * (sorted.length - 1);
  const i = Math.floor(x);
  return i + 1 < sorted.length ? sorted[i] + (x - i) * (sorted[i + 1] - sorted[i]) : sorted[i];
}

/** The median of `xs` (the mean of the middle two for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  return quantileOf(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}
