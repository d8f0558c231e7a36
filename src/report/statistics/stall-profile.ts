/**
 * The stalls of real runs, as the realistic model (realistic.ts) draws its own: which slices
 * stalled, how deep, how often per run and per position in the slice cycle. `npm run bench:aa`
 * prints it for the runs it made or judged (`--from DIR`), so the model's stall tables can be
 * drawn again from any saved batch, and say from which.
 *
 * Definitions, per run and strategy, in one stage (one_way: the table's):
 * - a slice is **stalled** when it recorded under {@link STALL_FRACTION} of the strategy's median
 *   slice count in that run (the host took the machine's threads away for much of the slice: an
 *   exchange a slice instead of hundreds);
 * - its **kept** share: its count over that median (0: an empty slice);
 * - its **depth**: its mean over the strategy's median slice mean (only slices that recorded);
 * - its **position**: where its strategy ran in its slice cycle (schedule.rounds holds one order
 *   per cycle), to see whether later sides stall more;
 * - **shared** stalls: per run, over every pair of sides of a cycle, P(both stalled) over P(a side
 *   stalled) (its median over runs: 1 when every stall hits the whole cycle, the stall rate when
 *   sides stall independently), and the correlation of the pair's log depths.
 *
 * Context: a bench or a report, after runs; pure; allocates.
 */
import type { RunResults, StageName } from '../types.js';
import { median, quantileOf } from './order.js';

/** A slice under this share of its strategy's median count is stalled. */
export const STALL_FRACTION = 0.3;

/** The probabilities at which the profile's quantile tables are read. */
export const PROFILE_PS = [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1] as const;

export interface StallTally {
  runs: number;
  slices: number;
  stalled: number;
  empty: number;
  /** Per run: its stalled share. */
  runRates: number[];
  /** Per stalled slice: kept share; per stalled slice that recorded: depth, and its kept share. */
  kept: number[];
  depth: number[];
  depthKept: number[];
  /** Per position in the cycle: slices seen and slices stalled. */
  atPosition: number[];
  stalledAtPosition: number[];
  /** Per run: P(two sides of a cycle both stalled) / P(a side stalled), over every pair of sides. */
  sharedRatios: number[];
  /** Log depths of the two sides of a pair that both stalled and recorded. */
  pairLogDepths: Array<[number, number]>;
}

export function newStallTally(): StallTally {
  return {
    runs: 0,
    slices: 0,
    stalled: 0,
    empty: 0,
    runRates: [],
    kept: [],
    depth: [],
    depthKept: [],
    atPosition: [],
    stalledAtPosition: [],
    sharedRatios: [],
    pairLogDepths: [],
  };
}

/** Adds the first point of `r` to `t`: every strategy's slices in `stage`. Runs without slices add nothing. */
export function addRun(t: StallTally, r: RunResults, stage: StageName = 'one_way'): void {
  const point = r.points[0];
  if (!point) return;
  const perTrial = point.schedule?.slices ?? 1;
  const cycles = point.schedule?.rounds ?? [];
  let slices = 0;
  let stalled = 0;
  // Per cycle (trial index × perTrial + slice): each side's log depth when stalled (NaN: stalled,
  // empty), undefined when not stalled.
  const byCycle = new Map<number, Array<number | undefined>>();
  for (const s of point.strategies) {
    const counts: number[] = [];
    const means: number[] = [];
    const where: number[] = [];
    const cycleOf: number[] = [];
    for (const trial of s.trials) {
      const sl = trial.slices?.[stage];
      if (!sl) continue;
      sl.count.forEach((c, k) => {
        counts.push(c);
        means.push(sl.mean[k]);
        where.push(cycles[trial.index * perTrial + k]?.indexOf(s.label) ?? -1);
        cycleOf.push(trial.index * perTrial + k);
      });
    }
    if (counts.length < 2) continue;
    const mc = median(counts);
    const mm = median(means.filter((m, i) => counts[i] > 0 && Number.isFinite(m)));
    const side = new Map<number, number | undefined>();
    counts.forEach((c, i) => {
      slices++;
      const pos = where[i];
      if (pos >= 0) t.atPosition[pos] = (t.atPosition[pos] ?? 0) + 1;
      side.set(cycleOf[i], undefined);
      if (!(c < STALL_FRACTION * mc)) return;
      side.set(cycleOf[i], c > 0 && means[i] > 0 && mm > 0 ? Math.log(means[i] / mm) : Number.NaN);
      stalled++;
      if (pos >= 0) t.stalledAtPosition[pos] = (t.stalledAtPosition[pos] ?? 0) + 1;
      t.kept.push(c / mc);
      if (c === 0) t.empty++;
      else if (Number.isFinite(means[i]) && mm > 0) {
        t.depth.push(means[i] / mm);
        t.depthKept.push(c / mc);
      }
    });
    for (const [cycle, v] of side) {
      const list = byCycle.get(cycle) ?? [];
      list.push(v);
      byCycle.set(cycle, list);
    }
  }
  // Pairs of sides in one cycle: how often both stalled, against how often one did.
  let pairs = 0;
  let both = 0;
  for (const sides of byCycle.values())
    for (let i = 0; i < sides.length; i++)
      for (let j = i + 1; j < sides.length; j++) {
        pairs++;
        const [a, b] = [sides[i], sides[j]];
        if (a === undefined || b === undefined) continue;
        both++;
        if (Number.isFinite(a) && Number.isFinite(b)) t.pairLogDepths.push([a, b]);
      }
  if (slices === 0) return;
  if (pairs > 0 && stalled > 0) t.sharedRatios.push(both / pairs / (stalled / slices));
  t.runs++;
  t.slices += slices;
  t.stalled += stalled;
  t.runRates.push(stalled / slices);
}

/** Pearson's correlation of pairs. */
export function pearson(xy: ReadonlyArray<readonly [number, number]>): number {
  const n = xy.length;
  if (n < 2) return Number.NaN;
  let mx = 0;
  let my = 0;
  for (const [x, y] of xy) {
    mx += x / n;
    my += y / n;
  }
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of xy) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : Number.NaN;
}

/** Spearman's rank correlation of two equal-length samples (ties by average rank). */
export function spearman(a: readonly number[], b: readonly number[]): number {
  const rank = (xs: readonly number[]): number[] => {
    const idx = xs.map((_, i) => i).sort((i, j) => xs[i] - xs[j]);
    const r = new Array<number>(xs.length);
    for (let i = 0; i < idx.length; ) {
      let j = i;
      while (j + 1 < idx.length && xs[idx[j + 1]] === xs[idx[i]]) j++;
      for (let k = i; k <= j; k++) r[idx[k]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const ra = rank(a);
  const rb = rank(b);
  return pearson(ra.map((r, i) => [r, rb[i]] as const));
}

/** The profile as lines, the quantile tables at {@link PROFILE_PS}: what realistic.ts's STALLS holds. */
export function stallLines(t: StallTally): string[] {
  if (t.slices === 0) return ['stalls: no sliced runs'];
  const table = (xs: readonly number[], digits: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return PROFILE_PS.map((p) => `${p}:${quantileOf(s, p).toFixed(digits)}`).join(' ');
  };
  const byPos = t.atPosition.map((n, k) => `${((100 * (t.stalledAtPosition[k] ?? 0)) / n).toFixed(1)}%`);
  return [
    `stalls (slices under ${STALL_FRACTION * 100}% of their strategy's median count, one_way): ${t.stalled} of ${t.slices} slices (${((100 * t.stalled) / t.slices).toFixed(1)}%) in ${t.runs} runs, ${t.empty} empty`,
    `  per run, stalled share at p ${table(t.runRates, 3)}`,
    `  kept share (count / median count) at p ${table(t.kept, 3)}`,
    `  depth (mean / median slice mean, ${t.depth.length} that recorded) at p ${table(t.depth, 2)}`,
    `  stalled share by position in the slice cycle (1st, 2nd, ...): ${byPos.join(' ')}; Spearman(kept, depth) ${spearman(t.depthKept, t.depth).toFixed(2)}`,
    `  P(two sides of a cycle both stalled) / P(a side stalled), per run: median ${median(t.sharedRatios).toFixed(2)} (${t.sharedRatios.length} runs); ` +
      `correlation of their log depths ${pearson(t.pairLogDepths).toFixed(2)} (${t.pairLogDepths.length} pairs)`,
  ];
}
