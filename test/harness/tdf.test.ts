/**
 * src/harness/tdf.ts: how `--tdf auto` turns measured lab/reference ratios into a factor, and
 * how it reads bench:scale's file (a broken one: one warning line, ignored).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  autoChoice,
  measureOps,
  readScaleCache,
  resolveTdf,
  scaleCacheFile,
  TDF_AUTO_MAX,
  tdfFromRatios,
  validateScaleCache,
} from '../../src/harness/tdf.js';
import { median } from '../../src/report/statistics/order.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-tdf-cache-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const goodCache = {
  version: 1,
  date: '2026-12-02T20:00:00Z',
  node: 'v20.20.2',
  host: 'test',
  ops: [
    // bench:scale's shape: an operation with no reference has no refNs; extra fields are kept.
    { name: 'send, ixgbe', labNs: 851, unit: 'packet', source: 'none yet', measured: false },
    { name: 'fast_mix (64-bit)', labNs: 47, refNs: 22, unit: 'op', source: 'C', measured: true },
    {
      name: 'copy (recv copy_to_user)',
      labNs: 0.1,
      beforeNs: 5,
      refNs: 0.025,
      unit: 'byte',
      source: 'memcpy (C)',
      measured: true,
    },
    { name: 'checksum (csum_partial)', labNs: 0.5, refNs: 0.06, unit: 'byte', source: 'csum (C)', measured: true },
    {
      name: 'mix (BLAKE2s 16 B under input_pool.lock)',
      labNs: 900,
      refNs: 45,
      unit: 'op',
      source: 'BLAKE2s (C)',
      measured: true,
    },
  ],
};

describe('the factor from ratios', () => {
  it('is the median, rounded to 0.1', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 10])).toBe(2.5);
    expect(tdfFromRatios([2.04, 5, 1.3]).tdf).toBe(2);
    expect(tdfFromRatios([3.26, 3.26]).tdf).toBe(3.3);
  });
  it('is at least 1: a lab faster than its references is not sped up further', () => {
    expect(tdfFromRatios([0.4, 0.6, 0.9]).tdf).toBe(1);
  });
  it('is capped at TDF_AUTO_MAX, and says so', () => {
    const r = tdfFromRatios([40, 50, 60]);
    expect(r).toMatchObject({ tdf: TDF_AUTO_MAX, capped: true, median: 50 });
    const ops = [40, 50, 60].map((x, i) => ({ name: `op${i}`, unit: 'ns', labNs: x, refNs: 1, refSource: 's' }));
    const c = autoChoice(ops, false);
    expect(c.tdf).toBe(TDF_AUTO_MAX);
    expect(c.mode).toBe('auto');
    expect(c.how).toMatch(/median lab\/reference ratio 50\.0 over 3 operations/);
    expect(c.how).toMatch(new RegExp(`capped at ${TDF_AUTO_MAX}$`));
  });
});

describe("bench:scale's file", () => {
  it('lives under XDG_CACHE_HOME when set, else ~/.cache', () => {
    expect(scaleCacheFile({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/deferlab/bench-scale.json');
    expect(scaleCacheFile({})).toMatch(/\.cache\/deferlab\/bench-scale\.json$/);
  });
  it('validates: a good file passes, each kind of damage is named', () => {
    expect(validateScaleCache(goodCache)).toEqual(goodCache);
    expect(validateScaleCache([])).toBe('not a JSON object');
    expect(validateScaleCache({ ...goodCache, version: 2 })).toMatch(/version is 2/);
    expect(validateScaleCache({ ...goodCache, ops: {} })).toMatch(/"ops" is not a list/);
    const badOp = { ...goodCache.ops[2], refNs: 0 };
    expect(validateScaleCache({ ...goodCache, ops: [badOp] })).toMatch(/ops\[0\].*refNs must be a positive number/);
    const badLab = { ...goodCache.ops[0], labNs: 'fast' };
    expect(validateScaleCache({ ...goodCache, ops: [badLab] })).toMatch(/ops\[0\].*labNs must be a positive number/);
    const noMeasured = { ...goodCache.ops[0], measured: 'yes' };
    expect(validateScaleCache({ ...goodCache, ops: [noMeasured] })).toMatch(/measured must be true or false/);
  });
  it('absent: undefined, no warning', () => {
    const warned: string[] = [];
    expect(readScaleCache(join(tmp, 'none.json'), (l) => warned.push(l))).toBeUndefined();
    expect(warned).toEqual([]);
  });
  it('broken: one warning line naming the file and what is wrong, then ignored', () => {
    for (const [name, text, why] of [
      ['garbage.json', '{ not json', /not valid JSON/],
      ['wrong.json', JSON.stringify({ ...goodCache, version: 9 }), /version is 9/],
    ] as const) {
      const f = join(tmp, name);
      writeFileSync(f, text);
      const warned: string[] = [];
      expect(readScaleCache(f, (l) => warned.push(l))).toBeUndefined();
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain(f);
      expect(warned[0]).toMatch(why);
      expect(warned[0]).not.toContain('\n');
    }
  });
  it('good: its measured references replace the in-process and documented ones', () => {
    const f = join(tmp, 'good.json');
    writeFileSync(f, JSON.stringify(goodCache));
    const cache = readScaleCache(f, () => {
      throw new Error('no warning expected');
    });
    const ops = measureOps(cache);
    expect(ops.map((o) => o.refNs)).toEqual([0.025, 45]);
    for (const o of ops) expect(o.refSource).toMatch(/^bench:scale 2026-12-02T20:00:00Z: /);
  });
});

describe('the operations measured at start-up', () => {
  it("are the lab's own, with references from this process or documented ones", () => {
    const ops = measureOps(undefined);
    expect(ops.map((o) => o.name)).toEqual(['payload write per byte', 'mix (32 B into the input pool)']);
    for (const o of ops) {
      expect(o.labNs).toBeGreaterThan(0);
      expect(o.refNs).toBeGreaterThan(0);
    }
    expect(ops[0].refSource).toMatch(/measured now/);
    expect(ops[1].refSource).toMatch(/4428aee3/);
  });
});

describe('resolveTdf', () => {
  it('a number is taken as given; absent or 1 is no dilation', () => {
    expect(resolveTdf(undefined)).toMatchObject({ tdf: 1, mode: 'default' });
    expect(resolveTdf(1)).toMatchObject({ tdf: 1, mode: 'given' });
    expect(resolveTdf(3.5)).toMatchObject({ tdf: 3.5, mode: 'given', how: 'given (--tdf 3.5)' });
  });
  it('auto measures once per process, within [1, TDF_AUTO_MAX]', () => {
    const a = resolveTdf('auto', () => {});
    expect(a.mode).toBe('auto');
    expect(a.tdf).toBeGreaterThanOrEqual(1);
    expect(a.tdf).toBeLessThanOrEqual(TDF_AUTO_MAX);
    expect(a.ops?.length).toBe(2);
    expect(resolveTdf('auto', () => {})).toBe(a);
  });
});
