/**
 * Scenario verdicts on effect sizes (issue #27 item 4): per sweep point and machine boot, the
 * candidate against the A/A control as a relative effect; boots joined with a between-boot
 * variance, points pooled by DerSimonian-Laird random effects (src/report/statistics/meta.ts);
 * then the seed's claim judged on the pooled interval:
 *
 * - a claim that an effect exists ({@link claimVerdict}): `reproduced` when the 95% interval
 *   excludes 0 in the claim's direction; `contradicted` when it excludes 0 the other way; `not
 *   reproduced` when it stays below the seed's size without excluding 0 (an effect that large is
 *   ruled out); `inconclusive` otherwise;
 * - a claim that an effect is absent, a negative control ({@link absenceVerdict}): two one-sided
 *   tests at 5% (the 90% interval): `reproduced` when its upper bound is below the margin,
 *   `contradicted` when its lower bound is above it, `inconclusive` between.
 *
 * Each verdict line prints the pooled effect, its interval and the margin (docs/scenarios.md).
 */

import { tCritical95 } from '../report/statistics/interval.js';
import {
  directional,
  type Estimate,
  equivalence,
  interval,
  type Pooled,
  randomEffects,
  twoLevel,
  Z90,
  Z95,
} from '../report/statistics/meta.js';
import type { PointResult, StageName, StrategyResult, TrialResult } from '../report/types.js';
import { type Outcome, strategy, type Verdict } from './common.js';

/**
 * One boot's relative effect at one point: its estimate, its standard error (scaled for the
 * paired units' few degrees of freedom: {@link smallSampleFactor}) and its paired units.
 */
export interface BootEffect extends Estimate {
  boot: number;
  /** Paired units: slice cycles when the trials were sliced, else trials. */
  n: number;
}

const bootOf = (t: TrialResult) => t.boot ?? 0;

/**
 * The relative effect of `cand` against `ref` (the A/A control, or the baseline without one) on
 * `stage`'s mean, per machine boot, over the baseline's mean in that boot. Units: slice cycles
 * when both sides' trials were sliced alike (slice k of round r ran in the same cycle on both),
 * else trials paired by index. Context: pure.
 */
export function bootEffects(
  point: PointResult | undefined,
  cand: string,
  ref: string,
  base: string,
  stage: StageName = 'one_way',
): BootEffect[] {
  const c = strategy(point, cand);
  const r = strategy(point, ref);
  const b = strategy(point, base);
  if (!c || !r || !b) return [];
  const boots = [...new Set(c.trials.map(bootOf))].sort((x, y) => x - y);
  return boots.map((boot) => unitEffect(c, r, b, stage, boot));
}

/** One paired unit: each side's sample count and mean (ns). */
interface Cell {
  nA: number;
  mA: number;
  nB: number;
  mB: number;
}

/**
 * One boot's effect: the difference of the two sides' pooled means over the paired units (each
 * side's mean is Σ n·m / Σ n, as the table's mean pools samples; a slice that a host stall left
 * with a few slow samples weighs by its count, not as much as a full one), over the baseline's
 * pooled mean. Its variance is the linearised (delta-method) variance of that difference with the
 * units as clusters: z_k = n_Ak (m_Ak − Ā)/N_A − n_Bk (m_Bk − B̄)/N_B, var = K/(K − 1) · Σ z_k².
 * With equal counts this is the paired-difference variance s²/K.
 */
function unitEffect(c: StrategyResult, r: StrategyResult, b: StrategyResult, stage: StageName, boot: number) {
  let bn = 0;
  let bs = 0;
  for (const t of b.trials) {
    const s = t.stages[stage];
    if (bootOf(t) !== boot || !s || !(s.count > 0)) continue;
    bn += s.count;
    bs += s.count * s.mean;
  }
  const byIndex = new Map(r.trials.map((t) => [t.index, t]));
  const cells: Cell[] = [];
  for (const t of c.trials) {
    if (bootOf(t) !== boot) continue;
    const o = byIndex.get(t.index);
    if (!o) continue;
    const a = t.slices?.[stage];
    const z = o.slices?.[stage];
    if (a && z && a.count.length > 1 && a.count.length === z.count.length) {
      for (let k = 0; k < a.count.length; k++)
        if (a.count[k] > 0 && z.count[k] > 0 && Number.isFinite(a.mean[k]) && Number.isFinite(z.mean[k]))
          cells.push({ nA: a.count[k], mA: a.mean[k], nB: z.count[k], mB: z.mean[k] });
    } else {
      const sa = t.stages[stage];
      const sz = o.stages[stage];
      if (sa && sz && sa.count > 0 && sz.count > 0)
        cells.push({ nA: sa.count, mA: sa.mean, nB: sz.count, mB: sz.mean });
    }
  }
  const d = pooledDifference(cells, bn > 0 ? bs / bn : Number.NaN);
  return { boot, ...d, se: d.se * smallSampleFactor(d.n) };
}

/**
 * The factor a boot's standard error is scaled by before the pooling, which takes every input as
 * normal (z intervals): t(0.975, n − 1) / z(0.975), so that a boot's own 95% interval is its t
 * interval over its n paired units. Without it, a boot of 2 units (2 trials of one slice each: a
 * short run) entered with its standard error estimated from one degree of freedom as if it were
 * known: a new user's seed-machine at 2 trials of 100 ms read "reproduced, pooled +26.6% [+23.6%,
 * +29.6%]" from sub-runs whose own tables gave ±220 and ±770 µs on means of ~420 µs. 6.5 at 2
 * units, 1.15 at 10, 1.04 at 30, 1.02 at 50 (a default run's slice cycles per boot).
 */
export function smallSampleFactor(n: number): number {
  return n >= 2 ? tCritical95(n - 1) / Z95 : Number.NaN;
}

/** {@link unitEffect}'s arithmetic: the relative difference of pooled means and its standard error. */
export function pooledDifference(cells: readonly Cell[], baseMean: number): Estimate & { n: number } {
  const n = cells.length;
  let nA = 0;
  let sA = 0;
  let nB = 0;
  let sB = 0;
  for (const k of cells) {
    nA += k.nA;
    sA += k.nA * k.mA;
    nB += k.nB;
    sB += k.nB * k.mB;
  }
  if (n === 0 || !(nA > 0) || !(nB > 0)) return { n, est: Number.NaN, se: Number.NaN };
  const a = sA / nA;
  const bm = sB / nB;
  const est = (a - bm) / baseMean;
  if (n < 2) return { n, est, se: Number.NaN };
  let ss = 0;
  for (const k of cells) {
    const z = (k.nA * (k.mA - a)) / nA - (k.nB * (k.mB - bm)) / nB;
    ss += z * z;
  }
  return { n, est, se: Math.sqrt((ss * n) / (n - 1)) / Math.abs(baseMean) };
}

/** A pooled effect over points, and what it pooled. */
export interface PooledEffect extends Pooled {
  /** Each point's effect over its boots (same order as the input). */
  points: Pooled[];
  /** The between-boot variance used for every point (0 with one boot each). */
  tau2Boot: number;
  /** Boots per point, most common (for the line). */
  boots: number;
}

/** Pool points (each a list of boot effects): boots first (one τ²_boot), then DL over points. */
export function pooledEffect(points: readonly (readonly Estimate[])[]): PooledEffect {
  const t = twoLevel(points);
  const pooled = randomEffects(t.points);
  const counts = points.map((p) => p.length).sort((a, b) => a - b);
  return { ...pooled, points: t.points, tau2Boot: t.tau2Boot, boots: counts[Math.floor(counts.length / 2)] ?? 0 };
}

/** `+3.2%` */
export const signedPct = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%` : 'n/a');

/** `+3.2% [-1.0%, +7.4%]` at the given level. */
export function effectText(e: Estimate, z = Z95): string {
  const { low, high } = interval(e, z);
  return `${signedPct(e.est)} [${signedPct(low)}, ${signedPct(high)}]`;
}

/** How the pooled effect was made, for the verdict line. */
export function methodText(e: PooledEffect): string {
  const between = (v: number) => (Number.isFinite(v) ? `${(Math.sqrt(v) * 100).toFixed(1)}%` : 'n/a');
  return `${e.k} point${e.k === 1 ? '' : 's'} × ${e.boots} boot${e.boots === 1 ? '' : 's'}, DerSimonian-Laird; τ between points ${between(e.tau2)}, between boots ${between(e.tau2Boot)}`;
}

/**
 * A claim that the effect exists in direction `up` (a regression: slower), of about `size` (the
 * seed's). `seed`: the seed's words the claim rests on. `more`: how to get a decision when open.
 */
export function claimVerdict(
  expectation: string,
  e: PooledEffect,
  size: number,
  seed: string,
  more: string,
  up = true,
): Verdict {
  const says = directional(e, size, up);
  const outcome: Outcome =
    says === 'shown'
      ? 'reproduced'
      : says === 'opposite'
        ? 'contradicted'
        : says === 'ruled out'
          ? 'not reproduced'
          : 'inconclusive';
  const { low, high } = interval(e);
  const sized = !Number.isFinite(low)
    ? ''
    : low > size
      ? `; larger than the seed's ${signedPct(size)}`
      : high < size
        ? `; smaller than the seed's ${signedPct(size)}`
        : `; consistent with the seed's ${signedPct(size)}`;
  const rule =
    outcome === 'reproduced'
      ? `excludes 0${sized}`
      : outcome === 'contradicted'
        ? 'excludes 0 on the other side'
        : outcome === 'not reproduced'
          ? `stays below the seed's ${signedPct(size)} without excluding 0`
          : `reaches 0 and the seed's ${signedPct(size)} (${more})`;
  return {
    expectation,
    outcome,
    detail: `pooled ${effectText(e)} (95% CI; ${methodText(e)}); claim: ${up ? '> 0' : '< 0'}, margin ${signedPct(size)} (the seed: ${seed}); the interval ${rule}`,
  };
}

/**
 * A claim that an effect is absent (a negative control): equivalence against `margin` by two
 * one-sided tests at 5% (the 90% interval's upper bound below the margin).
 */
export function absenceVerdict(
  expectation: string,
  e: PooledEffect,
  margin: number,
  seed: string,
  more: string,
): Verdict {
  const says = equivalence(e, margin);
  const outcome: Outcome = says === 'equivalent' ? 'reproduced' : says === 'exceeds' ? 'contradicted' : 'inconclusive';
  const rule =
    outcome === 'reproduced'
      ? `the interval's upper bound is below the margin`
      : outcome === 'contradicted'
        ? `the interval's lower bound is above the margin: an effect at least its size`
        : `the interval straddles the margin (${more})`;
  return {
    expectation,
    outcome,
    detail: `pooled ${effectText(e, Z90)} (90% CI, two one-sided tests at 5%; ${methodText(e)}); margin ${signedPct(margin)} (the seed: ${seed}); ${rule}`,
  };
}

/**
 * The difference between two conditions' effects, point by matched point (`pairs`: the two
 * points' estimates), pooled by DerSimonian-Laird: the seed's real claim that a regression shows
 * in one condition and not in the other.
 */
export function differenceEffect(pairs: readonly [Estimate, Estimate][]): PooledEffect {
  const ds = pairs.map(([a, b]) => ({ est: a.est - b.est, se: Math.sqrt(a.se ** 2 + b.se ** 2) }));
  const pooled = randomEffects(ds);
  return { ...pooled, points: ds.map((d) => ({ ...d, k: 1, q: 0, tau2: 0 })), tau2Boot: Number.NaN, boots: 1 };
}

/** The same claim on a difference: a line that names it as one. */
export function differenceVerdict(
  expectation: string,
  d: PooledEffect,
  size: number,
  seed: string,
  more: string,
  matched: string,
): Verdict {
  const v = claimVerdict(expectation, d, size, seed, more);
  const { low, high } = interval(d);
  return {
    ...v,
    detail: `difference ${effectText(d)} (95% CI; ${d.k} matched point pair${d.k === 1 ? '' : 's'}: ${matched}; DerSimonian-Laird, τ ${Number.isFinite(d.tau2) ? `${(Math.sqrt(d.tau2) * 100).toFixed(1)}%` : 'n/a'}); claim: > 0, margin ${signedPct(size)} (the seed: ${seed}); the interval ${low > 0 ? 'excludes 0' : high < 0 ? 'excludes 0 on the other side' : high < size ? `stays below ${signedPct(size)} without excluding 0` : `reaches 0 and ${signedPct(size)} (${more})`}`,
  };
}

/**
 * {@link differenceVerdict} over matched point pairs (`matched`: their names), or `inconclusive`
 * with `none` (why nothing matched) when there are none. A pair whose estimate is not finite on
 * either side (a point too short to have one) is left out and named as left out, never counted.
 */
export function matchedDifferenceVerdict(
  expectation: string,
  pairs: readonly [Estimate, Estimate][],
  matched: readonly string[],
  size: number,
  seed: string,
  more: string,
  none: string,
): Verdict {
  const finite = (e: Estimate) => Number.isFinite(e.est) && Number.isFinite(e.se);
  const used = pairs.flatMap((p, i) => (finite(p[0]) && finite(p[1]) ? [i] : []));
  const left = matched.filter((_, i) => !used.includes(i));
  const leftText = left.length ? `left out, with no estimate on one side: ${left.join(', ')}` : '';
  if (!used.length)
    return {
      expectation,
      outcome: 'inconclusive',
      detail: left.length ? `no matched point pair with an estimate (${leftText})` : none,
    };
  const v = differenceVerdict(
    expectation,
    differenceEffect(used.map((i) => pairs[i])),
    size,
    seed,
    more,
    used.map((i) => matched[i]).join(', '),
  );
  return left.length ? { ...v, detail: `${v.detail}; ${leftText}` } : v;
}
