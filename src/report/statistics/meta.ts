/**
 * Effect sizes pooled over units (boots of one sweep point, then sweep points): the statistics
 * behind the scenario verdicts (src/scenarios/, issue #27 items 4 and 5). Pure numbers.
 *
 * The unit of a verdict is a relative effect with its standard error: at one sweep point and one
 * machine boot, the candidate against the A/A control over the baseline's mean (built from the
 * results by src/scenarios/effects.ts, `pooledDifference`). Everything here takes such units.
 *
 * Two levels (docs/scenarios.md, "How the verdicts are decided"):
 * 1. Boots within a point ({@link twoLevel}): each point runs on at least two machine boots. The
 *    between-boot variance τ²_boot is estimated once for the whole verdict by DerSimonian-Laird's
 *    method of moments pooled over all its points (Σ_p Q_p against Σ_p (B_p − 1) degrees of
 *    freedom), on the assumption that a boot's placement and warm-up scatter alike at every point
 *    of one scenario; each point's effect is then the inverse-variance mean of its boots with
 *    weights 1/(v_b + τ²_boot). A boot that settled differently (thread placement, V8's tiers)
 *    thus widens the point's interval instead of passing for signal.
 * 2. Points ({@link randomEffects}): DerSimonian-Laird random effects over the points. τ² between
 *    points says how much the effect itself varies over the grid (message sizes differ on
 *    purpose); the pooled interval is for the mean effect over the grid. With τ² = 0 this is the
 *    fixed-effect (inverse-variance) pool.
 *
 * Intervals are normal (z), as DerSimonian-Laird is usually reported; each unit's own error comes
 * from a handful of trials, which the two-level variance and the between-point τ² partly absorb.
 *
 * Then the two questions a seed asks ({@link directional}, {@link equivalence}) and the difference
 * between two conditions ({@link difference}).
 */

/** An estimate and its standard error (same unit: a relative effect, 0.1 = +10%). */
export interface Estimate {
  est: number;
  se: number;
}

/** A pooled estimate: what it pooled and how much the units disagreed. */
export interface Pooled extends Estimate {
  /** Units pooled (finite estimate and standard error). */
  k: number;
  /** Cochran's Q over the units, with fixed-effect weights. */
  q: number;
  /** DerSimonian-Laird between-unit variance (0 with fewer than 2 units). */
  tau2: number;
}

/** Two-sided 95% normal quantile. */
export const Z95 = 1.959963984540054;
/** Two-sided 90% normal quantile: one-sided 5%, the two one-sided tests (TOST) of equivalence. */
export const Z90 = 1.6448536269514722;

const usable = (u: Estimate) => Number.isFinite(u.est) && Number.isFinite(u.se) && u.se >= 0;
/** A standard error of exactly 0 (identical trials) would take every weight: floor it. */
const MIN_SE = 1e-9;
const variance = (u: Estimate) => Math.max(u.se, MIN_SE) ** 2;

/** Fixed-effect inverse-variance pool: Σ w·y / Σ w with w = 1/se², se = 1/√Σw; Q = Σ w(y − ŷ)². */
export function fixedEffect(units: readonly Estimate[]): Pooled {
  const us = units.filter(usable);
  if (us.length === 0) return { est: Number.NaN, se: Number.NaN, k: 0, q: Number.NaN, tau2: Number.NaN };
  let sw = 0;
  let swy = 0;
  for (const u of us) {
    const w = 1 / variance(u);
    sw += w;
    swy += w * u.est;
  }
  const est = swy / sw;
  const q = us.reduce((a, u) => a + (u.est - est) ** 2 / variance(u), 0);
  return { est, se: 1 / Math.sqrt(sw), k: us.length, q, tau2: 0 };
}

/**
 * The DerSimonian-Laird moment pieces of one group of units: Q (fixed-effect weights), its
 * degrees of freedom k − 1, and C = Σw − Σw²/Σw. τ² = max(0, (Q − df) / C); summing Q, df and C
 * over several groups pools τ² over them ({@link twoLevel}).
 */
export function dlMoments(units: readonly Estimate[]): { q: number; df: number; c: number } {
  const us = units.filter(usable);
  if (us.length < 2) return { q: 0, df: 0, c: 0 };
  const f = fixedEffect(us);
  let sw = 0;
  let sw2 = 0;
  for (const u of us) {
    const w = 1 / variance(u);
    sw += w;
    sw2 += w * w;
  }
  return { q: f.q, df: us.length - 1, c: sw - sw2 / sw };
}

/** τ² from (summed) moments: max(0, (Q − df) / C); 0 without degrees of freedom. */
export function tau2Of(m: { q: number; df: number; c: number }): number {
  return m.df > 0 && m.c > 0 ? Math.max(0, (m.q - m.df) / m.c) : 0;
}

/** Inverse-variance pool with an added between-unit variance `tau2`: w = 1/(se² + τ²). */
export function poolWith(units: readonly Estimate[], tau2: number): Pooled {
  const us = units.filter(usable);
  if (us.length === 0) return { est: Number.NaN, se: Number.NaN, k: 0, q: Number.NaN, tau2 };
  let sw = 0;
  let swy = 0;
  for (const u of us) {
    const w = 1 / (variance(u) + tau2);
    sw += w;
    swy += w * u.est;
  }
  return { est: swy / sw, se: 1 / Math.sqrt(sw), k: us.length, q: fixedEffect(us).q, tau2 };
}

/** DerSimonian-Laird random-effects pool of `units`. */
export function randomEffects(units: readonly Estimate[]): Pooled {
  return poolWith(units, tau2Of(dlMoments(units)));
}

/**
 * Level 1: each point's effect from its boots, with one between-boot variance for all points
 * (DerSimonian-Laird moments summed over the points). `points[p][b]`: point p's boot b.
 */
export function twoLevel(points: readonly (readonly Estimate[])[]): { tau2Boot: number; points: Pooled[] } {
  const sum = { q: 0, df: 0, c: 0 };
  for (const boots of points) {
    const m = dlMoments(boots);
    sum.q += m.q;
    sum.df += m.df;
    sum.c += m.c;
  }
  const tau2Boot = tau2Of(sum);
  return { tau2Boot, points: points.map((boots) => poolWith(boots, tau2Boot)) };
}

/** The interval est ± z·se (95% by default). */
export function interval(e: Estimate, z = Z95): { low: number; high: number } {
  return { low: e.est - z * e.se, high: e.est + z * e.se };
}

/** a − b for independent estimates: se = √(se_a² + se_b²). */
export function difference(a: Estimate, b: Estimate): Estimate {
  return { est: a.est - b.est, se: Math.sqrt(a.se ** 2 + b.se ** 2) };
}

/**
 * A claim that an effect exists, up (a regression) by default: `shown` when the 95% interval
 * excludes 0 on the claim's side; `opposite` when it excludes 0 on the other side; `ruled out`
 * when it excludes an effect of `size` (the seed's) without showing one; `open` otherwise (or
 * with no estimate).
 */
export function directional(e: Estimate, size: number, up = true): 'shown' | 'opposite' | 'ruled out' | 'open' {
  if (!usable(e)) return 'open';
  const { low, high } = interval(up ? e : { est: -e.est, se: e.se });
  if (low > 0) return 'shown';
  if (high < 0) return 'opposite';
  if (high < size) return 'ruled out';
  return 'open';
}

/**
 * A claim that an effect is absent (a negative control), by two one-sided tests at 5% each (the
 * 90% interval): `equivalent` when its upper bound is below `margin`; `exceeds` when its lower
 * bound is above it (an effect at least the margin's size, shown); `open` between (or with no
 * estimate). A gain (a negative effect) is not what the seed's controls deny: only the upper side
 * is tested.
 */
export function equivalence(e: Estimate, margin: number): 'equivalent' | 'exceeds' | 'open' {
  if (!usable(e)) return 'open';
  const { low, high } = interval(e, Z90);
  if (high < margin) return 'equivalent';
  if (low > margin) return 'exceeds';
  return 'open';
}
