/**
 * The order strategies run in, round by round: a seeded random permutation per round, balanced
 * over the run, so that position effects (what ran just before, drift within a round) do not
 * fall on the same strategy every time.
 *
 * Design: a Williams square (a Latin square balanced for first-order carry-over) of the k
 * strategies, with its symbols relabelled and its rows shuffled at random from the run's seed.
 * In each block of B rounds (B = k for even k; 2k for odd k, the square and its mirror), every
 * strategy runs exactly B/k times in each position, and every strategy directly follows every
 * other one equally often (once for even k, twice for odd k). Round r uses row r mod B of block
 * ⌊r/B⌋; each block draws its own relabelling and row order, so the schedule extends to any
 * number of rounds (`--until`) and is the same whenever the seed is. A run shorter than one block
 * (5 trials of 9 strategies) gets B of the rows at random: balanced only in expectation.
 *
 * Pairing is unaffected: trial r of a strategy is still paired with trial r of the baseline,
 * which ran in the same round.
 */

/** Said in results.json (`points[].schedule.method`). */
export const SCHEDULE_METHOD =
  "Williams square per block of rounds (k rounds for k strategies, 2k when k is odd), symbols relabelled and rows shuffled from the run's seed";

/**
 * splitmix32 (a 32-bit variant of SplitMix64's mixer): a small seedable PRNG, uniform in [0, 1).
 * Only for the schedule: the machine's randomness has its own streams.
 */
function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates shuffle of 0..n−1. */
function permutation(n: number, rnd: () => number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

/**
 * The Williams square's rows for k symbols: row i is (first + i) mod k, where first is
 * 0, 1, k−1, 2, k−2, ...; for odd k the mirrored rows follow. Returns B rows of length k.
 */
export function williamsRows(k: number): number[][] {
  const first: number[] = [];
  for (let j = 0, lo = 1, hi = k - 1; j < k; j++) {
    if (j === 0) first.push(0);
    else if (j % 2 === 1) first.push(lo++);
    else first.push(hi--);
  }
  const rows = Array.from({ length: k }, (_, i) => first.map((x) => (x + i) % k));
  return k % 2 === 0 ? rows : [...rows, ...rows.map((r) => [...r].reverse())];
}

/** Rounds per balanced block for k strategies. */
export function blockSize(k: number): number {
  return k % 2 === 0 ? k : 2 * k;
}

/**
 * The order of round `round` (0-based): a permutation of 0..k−1 (strategy indices, in run
 * order). Context: any thread; pure. The same (seed, k, round) always gives the same order.
 */
export function roundOrder(seed: number, k: number, round: number): number[] {
  if (k <= 1) return k === 1 ? [0] : [];
  const size = blockSize(k);
  const block = Math.floor(round / size);
  // One stream per block, apart from the machine's seed use by a constant.
  const rnd = splitmix32((seed ^ 0x5ced01e5) + Math.imul(block + 1, 0x27d4eb2d));
  const relabel = permutation(k, rnd);
  const rowOrder = permutation(size, rnd);
  return williamsRows(k)[rowOrder[round % size]].map((x) => relabel[x]);
}
