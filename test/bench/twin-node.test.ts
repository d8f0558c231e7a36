/**
 * bench:twin's (c) in Node itself (bench/twin-node.ts): every wake-up counted, and, pinned, the
 * main thread (the waker) given back the CPUs it had, since bench:twin goes on running on it.
 * Counts and affinities, never a timing.
 */
import { describe, expect, it } from 'vitest';
import { nodeCross } from '../../bench/twin-node.js';
import { allowedCpus, parseCpuList } from '../../src/machine/host-threads.js';

describe('parseCpuList', () => {
  it("reads proc(5)'s and taskset's lists, and refuses what is not one", () => {
    expect(parseCpuList('0-3,8')).toEqual([0, 1, 2, 3, 8]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(parseCpuList('2,0-1')).toEqual([0, 1, 2]);
    expect(parseCpuList('3-1')).toBeUndefined();
    expect(parseCpuList('0-')).toBeUndefined();
    expect(parseCpuList('a')).toBeUndefined();
  });
});

describe('nodeCross', () => {
  it('times every wake-up, unpinned and pinned, and gives the waker its CPUs back', async () => {
    const before = allowedCpus();
    for (const pin of [false, true]) {
      const r = await nodeCross(20, 1000, pin);
      expect(r.sorted.length + r.lost).toBe(20);
      expect(r.sorted.every((x, i) => i === 0 || x >= r.sorted[i - 1])).toBe(true);
      // pinned or not (one host CPU, no taskset: it says why), the main thread's CPUs are as before
      expect(allowedCpus()).toEqual(before);
      if (pin && (before?.length ?? 0) < 2) expect(r.unpinned).toMatch(/two host CPUs/);
    }
  }, 60_000);
});
