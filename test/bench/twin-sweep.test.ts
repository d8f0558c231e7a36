/**
 * bench:twin's sweep of the waker's work (bench/twin-sweep.ts): its flag's parser, and the rules'
 * answer it stands on (bench/twin-model.ts on a fake clock, no timing): beside one nice-0 hog the
 * waits come from the waker's lag draining, so their share grows with the waker's CPU per wake-up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCpuSeq } from '../../bench/twin-lab.js';
import { modelWaits } from '../../bench/twin-model.js';
import { parseSweep, pooled, SWEEP_MAX } from '../../bench/twin-sweep.js';

describe('--sweep-work', () => {
  it('takes distinct integers in µs below the period', () => {
    expect(parseSweep('20,100, 200,400', 5000)).toEqual([20, 100, 200, 400]);
    expect(parseSweep('0', 5000)).toEqual([0]);
  });

  it.each([
    ['20,abc', '"abc"'],
    ['20,,40', '""'],
    ['-5', '"-5"'],
    ['2.5', '"2.5"'],
    ['5000', '"5000"'],
  ])('refuses %s, naming the value', (text, named) => {
    const r = parseSweep(text, 5000);
    expect(typeof r).toBe('string');
    expect(r).toContain('--sweep-work');
    expect(r).toContain(named);
  });

  it('refuses a value listed twice, and more than SWEEP_MAX values', () => {
    expect(parseSweep('20,20', 5000)).toMatch(/twice/);
    const many = Array.from({ length: SWEEP_MAX + 1 }, (_, i) => i * 10).join(',');
    expect(parseSweep(many, 5000)).toMatch(new RegExp(`at most ${SWEEP_MAX}`));
  });
});

describe('pooled rounds', () => {
  const d = (n: number, prompt: number, p99: number) => ({ p50: 1, p90: 2, p99, max: 9, n, prompt });
  it('weighs each round by its wake-ups for the share, and takes the median p99', () => {
    const r = pooled([d(1000, 0.99, 100), d(3000, 0.95, 4e6), { none: 'lost' }, d(1000, 0.97, 200)]);
    expect('none' in r).toBe(false);
    if ('none' in r) return;
    expect(r.n).toBe(5000);
    expect(r.prompt).toBeCloseTo((990 + 2850 + 970) / 5000, 12);
    expect(r.p99).toBe(200);
  });
  it("with no round's numbers, the first reason", () => {
    expect(pooled([{ none: 'no cc' }, { none: 'other' }])).toEqual({ none: 'no cc' });
  });
});

describe('the rules alone, one nice-0 hog beside a nice-0 waker (6.18, HZ 250, every 5 ms)', () => {
  const q = (workNs: number, phases: number) => ({
    kernel: '6.18' as const,
    hz: 250,
    cpus: 2,
    hogs: 1,
    nice: 0,
    periodNs: 5_000_000,
    workNs,
    wakeups: 400,
    phases,
  });
  const slow = (w: number[]) => w.filter((x) => x > 500_000).length;

  it('pools the phases: wakeups × phases waits, sorted', () => {
    const w = modelWaits(q(120_000, 3));
    expect(w).toHaveLength(1200);
    expect(w.every((x, i) => i === 0 || w[i - 1] <= x)).toBe(true);
  });

  it('serves most wake-ups at once; those that wait, wait for a tick at most; more wait as the waker runs longer', () => {
    const short = modelWaits(q(40_000, 8));
    const long = modelWaits(q(420_000, 8));
    for (const w of [short, long]) {
      expect(slow(w)).toBeGreaterThan(0);
      expect(slow(w)).toBeLessThan(w.length / 4);
      expect(w[w.length - 1]).toBeLessThanOrEqual(4_000_000);
    }
    expect(slow(long)).toBeGreaterThan(2 * slow(short));
  });

  it("runs the waker's CPU per wake-up from workSeq, in order and cycled, when one is given", () => {
    const seq = modelWaits({ ...q(40_000, 2), workSeq: [420_000] });
    expect(seq).toEqual(modelWaits(q(420_000, 2)));
    expect(seq).not.toEqual(modelWaits(q(40_000, 2)));
    // alternating values: neither constant's answer
    const alt = modelWaits({ ...q(40_000, 2), workSeq: [40_000, 420_000] });
    expect(alt).not.toEqual(modelWaits(q(40_000, 2)));
    expect(alt).not.toEqual(modelWaits(q(420_000, 2)));
  });
});

describe("twin.c's CPUSEQ_FILE, read back", () => {
  it('gives the positive numbers in order, and undefined for a file that is missing or holds none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpuseq-'));
    try {
      writeFileSync(join(dir, 'a.txt'), '56595 67356 x -3 49813\n');
      expect(readCpuSeq(join(dir, 'a.txt'))).toEqual([56595, 67356, 49813]);
      writeFileSync(join(dir, 'b.txt'), '\n');
      expect(readCpuSeq(join(dir, 'b.txt'))).toBeUndefined();
      expect(readCpuSeq(join(dir, 'none.txt'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
