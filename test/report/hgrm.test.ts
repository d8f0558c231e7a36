import { build } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { formatHgrm, parseHgrm } from '../../src/report/run/hgrm.js';
import { mulberry32 } from '../../src/report/statistics/prng.js';

describe('.hgrm', () => {
  it('writes HdrHistogram percentile text that parses back to the recorded count, max and mean (µs)', () => {
    const rnd = mulberry32(42);
    const h = build();
    for (let i = 0; i < 5000; i++) h.recordValue(Math.round(10_000 * Math.exp(0.4 * (rnd() + rnd() + rnd() - 1.5))));
    h.recordValue(2_345_678);
    const text = formatHgrm(h);
    expect(text.split('\n')[0]).toMatch(/^\s+Value\s+Percentile\s+TotalCount 1\/\(1-Percentile\)$/);
    const p = parseHgrm(text);
    expect(p.totalCount).toBe(5001);
    expect(p.maxUs).toBe(2345.678);
    expect(p.meanUs).toBeCloseTo(h.mean / 1000, 3);
    expect(p.stdDeviationUs).toBeGreaterThan(0);
    expect(p.buckets).toBeGreaterThan(0);
    expect(p.subBuckets).toBe(2048);
    // Rows: percentiles rise from 0 to 1, counts to the total, the last row has no 1/(1-p).
    expect(p.rows[0].percentile).toBe(0);
    const last = p.rows[p.rows.length - 1];
    expect(last.percentile).toBe(1);
    expect(last.totalCount).toBe(5001);
    expect(last.inverse).toBe(Number.POSITIVE_INFINITY);
    for (let i = 1; i < p.rows.length; i++) {
      expect(p.rows[i].percentile).toBeGreaterThanOrEqual(p.rows[i - 1].percentile);
      expect(p.rows[i].valueUs).toBeGreaterThanOrEqual(p.rows[i - 1].valueUs);
    }
    const median = p.rows.find((r) => r.percentile >= 0.5)!;
    expect(Math.abs(median.valueUs * 1000 - h.getValueAtPercentile(50))).toBeLessThanOrEqual(1);
  });

  it('parses an empty histogram', () => {
    const p = parseHgrm(formatHgrm(build()));
    expect(p.rows).toEqual([]);
    expect(p.totalCount).toBe(0);
    expect(p.maxUs).toBe(0);
  });

  it('names the line that does not parse', () => {
    const text = formatHgrm(build()).replace('\n\n', '\n\n   1.000 abc 1 1.00\n');
    expect(() => parseHgrm(text)).toThrow(/hgrm line 3 is not "Value Percentile TotalCount/);
  });

  it('says which footer is missing', () => {
    const h = build();
    h.recordValue(5);
    const text = formatHgrm(h);
    expect(() => parseHgrm(text.replace(/#\[Max.*\n/, ''))).toThrow(
      /no "#\[Max = \.\.\., Total count = \.\.\.\]" footer/,
    );
    expect(() => parseHgrm('')).toThrow(/no "Value Percentile TotalCount/);
  });
});
