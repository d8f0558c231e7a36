/** The trial order (src/harness/schedule.ts): pure functions, no threads. */
import { describe, expect, it } from 'vitest';
import { blockSize, roundOrder, williamsRows } from '../../src/harness/schedule.js';

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Times each strategy ran in each position, and each ordered pair ran back to back. */
function tally(rounds: number[][], k: number) {
  const position = range(k).map(() => range(k).map(() => 0));
  const follows = range(k).map(() => range(k).map(() => 0));
  for (const r of rounds) {
    r.forEach((s, pos) => {
      position[s][pos]++;
    });
    for (let i = 1; i < r.length; i++) follows[r[i - 1]][r[i]]++;
  }
  return { position, follows };
}

describe('williamsRows', () => {
  for (const k of [2, 3, 4, 5, 9, 10]) {
    it(`k=${k}: each symbol once per row, equally often in each column, each ordered pair adjacent equally often`, () => {
      const rows = williamsRows(k);
      expect(rows.length).toBe(blockSize(k));
      for (const r of rows) expect(sorted(r)).toEqual(range(k));
      const { position, follows } = tally(rows, k);
      const perPosition = blockSize(k) / k;
      for (const s of range(k)) for (const p of range(k)) expect(position[s][p]).toBe(perPosition);
      for (const a of range(k)) for (const b of range(k)) expect(follows[a][b]).toBe(a === b ? 0 : perPosition);
    });
  }
});

describe('roundOrder', () => {
  it('is a permutation in every round, balanced over each block of rounds, whatever the seed', () => {
    for (const [seed, k] of [
      [1, 9],
      [123456, 10],
      [0xffffffff, 3],
    ]) {
      const rounds = range(blockSize(k) * 2).map((r) => roundOrder(seed, k, r));
      for (const r of rounds) expect(sorted(r)).toEqual(range(k));
      for (const block of [rounds.slice(0, blockSize(k)), rounds.slice(blockSize(k))]) {
        const { position, follows } = tally(block, k);
        for (const s of range(k)) for (const p of range(k)) expect(position[s][p]).toBe(blockSize(k) / k);
        for (const a of range(k)) for (const b of range(k)) if (a !== b) expect(follows[a][b]).toBe(blockSize(k) / k);
      }
    }
  });

  it('replays from the seed, and another seed gives another order', () => {
    const a = range(20).map((r) => roundOrder(42, 6, r));
    expect(range(20).map((r) => roundOrder(42, 6, r))).toEqual(a);
    expect(range(20).map((r) => roundOrder(43, 6, r))).not.toEqual(a);
    // Not the fixed A B C ... order of every round.
    expect(a.some((r) => r.join() !== range(6).join())).toBe(true);
  });

  it('handles one strategy and none', () => {
    expect(roundOrder(1, 1, 5)).toEqual([0]);
    expect(roundOrder(1, 0, 0)).toEqual([]);
  });
});
