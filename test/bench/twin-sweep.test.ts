/**
 * bench:twin's sweep of the waker's work (bench/twin-sweep.ts): its flag's parser, and the rules'
 * answer it stands on (bench/twin-model.ts on a fake clock, no timing): beside one nice-0 hog the
 * waits come from the waker's lag draining, so their share grows with the waker's CPU per wake-up.
 */
import { describe, expect, it } from 'vitest';
import { modelWaits } from '../../bench/twin-model.js';
import { parseSweep, SWEEP_MAX } from '../../bench/twin-sweep.js';

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
});
