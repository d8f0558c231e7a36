/**
 * bench:scale's spreads (bench/scale.ts): the issue's `kernel-scale spread` over the warm figures,
 * and the spread as a run pays, where a row's in-run cost replaces its warm one.
 */
import { describe, expect, it } from 'vitest';
import { runSpread, type ScaleOp, spread } from '../../bench/scale.js';

const op = (labNs: number, refNs?: number, runNs?: number): ScaleOp => ({
  name: 'x',
  labNs,
  unit: 'op',
  source: '',
  measured: true,
  ...(refNs !== undefined ? { refNs } : {}),
  ...(runNs !== undefined ? { runNs } : {}),
});

describe('bench:scale spreads', () => {
  it('is max/min of lab/reference over the rows with a reference', () => {
    const ops = [op(10, 5), op(1, 2), op(100)];
    expect(spread(ops)).toEqual({ s: 4, n: 2 });
  });

  it('leaves a proxy reference (the tick on a VM) out unless asked', () => {
    const ops = [op(10, 5), op(1, 2), { ...op(1, 20), proxy: true }];
    expect(spread(ops)).toEqual({ s: 4, n: 2 });
    expect(spread(ops, true)).toEqual({ s: 40, n: 3 });
  });

  it('as a run pays: a row’s in-run cost in place of its warm one, the rest unchanged', () => {
    // Warm: 2x and 0.5x (spread 4); in a run the second costs 8 (4x): spread 2.
    const ops = [op(10, 5), op(1, 2, 8), op(3, undefined, 9)];
    expect(spread(ops).s).toBe(4);
    expect(runSpread(ops)).toEqual({ s: 2, n: 2 });
    expect(runSpread([op(1, 1), op(4, 1, 0)]).s).toBe(4); // a zero in-run figure is none
  });
});
