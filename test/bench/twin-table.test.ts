/**
 * bench:twin's table (bench/twin-table.ts): which ratios it marks as between modes, and what it
 * compares in their place. Pure: numbers in, lines out.
 */
import { describe, expect, it } from 'vitest';
import type { Dist } from '../../bench/twin-lab.js';
import { idleExitLines, type Row, render } from '../../bench/twin-table.js';

const d = (prompt: number, p50: number, p99: number, n = 1000): Dist => ({
  p50,
  p90: p99,
  p99,
  max: 4e6,
  n,
  prompt,
});
const row = (question: string, host: Dist, lab: Dist, model?: Dist): Row => ({
  question,
  host,
  lab,
  ...(model ? { model } : {}),
});
const line = (lines: string[], q: string) => lines.find((l) => l.startsWith(`  ${q} `)) ?? '';

describe('bench:twin table', () => {
  it('prints no Infinity or NaN when the host saw no slow wake-up', () => {
    const host = { ...d(1, 30e3, 150e3, 1000), rounds: [{ n: 1000, slow: 0 }] };
    const lab = { ...d(0.99, 30e3, 3e6, 1000), rounds: [{ n: 1000, slow: 10 }] };
    const text = render([row('(a) 1 hog nice 0', host, lab)], []).join('\n');
    expect(text).toContain('p99 by the shares');
    expect(text).not.toMatch(/Infinity|NaN/);
  });
  it("judges a figure not between modes by its paired rounds' ratios, with an interval", () => {
    const rounds = (p50s: number[]) => p50s.map((p50) => ({ n: 1000, slow: 0, p50, p99: 150e3 }));
    const host = { ...d(1, 30e3, 150e3, 3000), rounds: rounds([30e3, 32e3, 28e3]) };
    const lab = { ...d(1, 75e3, 150e3, 3000), rounds: rounds([75e3, 80e3, 70e3]) };
    const lines = render([row('(a) 1 hog nice 0', host, lab)], []);
    expect(lines.find((l) => l.startsWith('    outside (1):'))).toContain('(a) 1 hog nice 0 p50 2.50x [2.50, 2.50]');
    expect(lines.find((l) => l.startsWith('    inside (1):'))).toContain('(a) 1 hog nice 0 p99 1.00x');
  });

  it("judges a modal p99 by its rounds' shares: outside when the whole interval is, with their spread counted", () => {
    const rounds = (slow: number[]) => slow.map((x) => ({ n: 1000, slow: x }));
    const host = { ...d(0.98, 30e3, 2e6, 3000), rounds: rounds([20, 20, 20]) };
    const far = { ...d(0.995, 30e3, 200e3, 3000), rounds: rounds([2, 3, 2]) };
    const lines = render([row('(a) 1 hog nice 0', host, far)], []);
    expect(lines.find((l) => l.startsWith('    outside (1):'))).toContain('(a) 1 hog nice 0 p99 by the shares 0.12x');
    // the same pooled shares, but rounds that swing far apart: the interval widens and no longer tells
    const swung = { ...far, rounds: rounds([0, 0, 7]) };
    const hostSwung = { ...host, rounds: rounds([2, 2, 56]) };
    const wide = render([row('(a) 1 hog nice 0', hostSwung, swung)], []);
    expect(wide.find((l) => l.startsWith('    undecided (1):'))).toMatch(/p99 by the shares 0\.12x \[/);
  });

  it("calls a figure explained only when the host's is inside the bar against the named part the lab leaves out", () => {
    const rounds = (slow: number[]) => slow.map((x) => ({ n: 2000, slow: x }));
    // (a) no hog as bench:twin saw it: the host's tail (its timer waking a halted vCPU) ~1%, the
    // lab's column almost none, the lab's own timer wake-up (idle_exit) ~0.9%.
    const host = { ...d(0.99, 70e3, 450e3, 6000), rounds: rounds([20, 18, 22]) };
    const lab = { ...d(0.999, 65e3, 170e3, 6000), rounds: rounds([2, 1, 3]) };
    const ofPart = (slow: number[]) => ({ ...d(0.991, 110e3, 360e3, 6000), rounds: rounds(slow) });
    const withPart = (part: Dist): Row => ({
      ...row('(a) no hog', host, lab),
      explain: { k: 'p99', part, name: 'the timer' },
    });
    const group = (lines: string[], g: string) => lines.find((l) => l.startsWith(`    ${g} (`)) ?? '';
    const ok = render([withPart(ofPart([18, 19, 17]))], []);
    expect(group(ok, 'explained')).toMatch(
      /^ {4}explained \(1\): \(a\) no hog p99 by the shares 0\.10x .*\(outside\): the timer, host against it by the shares 0\.90x/,
    );
    expect(group(ok, 'outside')).toBe('    outside (0): none');
    // The part as small as the lab's column: it does not account for the host's tail.
    const no = render([withPart(ofPart([2, 2, 3]))], []);
    expect(group(no, 'explained')).toBe('    explained (0): none');
    expect(group(no, 'outside')).toMatch(
      /\(a\) no hog p99 by the shares 0\.10x .*\(not explained by the timer: host against it by the shares 0\.12x/,
    );
    // A figure already inside needs no explanation, and the explanation is only for its figure (p99).
    const inside = render(
      [{ ...row('(a) no hog', host, { ...host }), explain: { k: 'p99', part: ofPart([2, 2, 3]), name: 'the timer' } }],
      [],
    );
    expect(group(inside, 'explained')).toBe('    explained (0): none');
    expect(group(inside, 'inside')).toContain('(a) no hog p99 by the shares 1.00x');
  });

  it("says how the host's own part of the lab's column stands where the figure is not inside, and keeps its verdict", () => {
    const rounds = (p50s: number[]) => p50s.map((p50) => ({ n: 1000, slow: 0, p50, p99: 300e3 }));
    // (c) as bench:twin saw it: the lab's p50 twice the host's, its kick_wake about the host's.
    const host = { ...d(1, 80e3, 300e3, 3000), rounds: rounds([80e3, 84e3, 78e3]) };
    const lab = { ...d(1, 170e3, 300e3, 3000), rounds: rounds([170e3, 176e3, 166e3]) };
    const kick = { ...d(1, 90e3, 300e3, 3000), rounds: rounds([90e3, 88e3, 85e3]) };
    const q = '(c) wake-up CPU 0 → CPU 1';
    const lines = render([{ ...row(q, host, lab), hostPart: { part: kick, name: 'its kick_wake' } }], []);
    const outside = lines.find((l) => l.startsWith('    outside (1):')) ?? '';
    expect(outside).toMatch(
      /\(c\) wake-up CPU 0 → CPU 1 p50 2\.\d\dx \[.*\] \(its kick_wake alone against the host: 1\.\d\dx \[.*\], inside; the rest is the emulator's path\)/,
    );
    expect(lines.find((l) => l.startsWith('    explained ('))).toBe('    explained (0): none');
    // A figure inside says nothing of the part.
    expect(lines.find((l) => l.startsWith('    inside (1):'))).not.toContain('kick_wake');
  });

  it('marks a p99 between modes with ‡ and compares the shares past 0.5 ms, host, lab and rules', () => {
    const lines = render(
      [row('(a) 1 hog nice 0', d(0.992, 24e3, 52e3), d(0.988, 23e3, 795e3), d(0.993, 0, 0, 32000))],
      [],
    );
    expect(line(lines, '(a) 1 hog nice 0')).toMatch(/15\.\d\dx ‡/);
    const tail = lines.find((l) => l.includes('1 hog nice 0: past 0.5 ms'));
    expect(tail).toContain('host 0.8% of 1000');
    expect(tail).toContain('lab 1.2% of 1000 (lab/host 1.50x [0.62, 3.50] (95%): undecided)');
    // 12 against 8 in 1000 cannot tell 0.5x from 2x: the bar says so rather than reading the point
    expect(lines.find((l) => l.startsWith('    undecided (1):'))).toContain(
      '(a) 1 hog nice 0 p99 by the shares 1.50x [0.62, 3.50]',
    );
    expect(lines.find((l) => l.startsWith('    inside (1):'))).toContain('(a) 1 hog nice 0 p50 0.96x');
    expect(tail).toContain('the rules alone 0.7% of 32000 (0.88x)');
    // The rules' own table marks it too (their p99 0 against the host's 52 µs).
    expect(lines.filter((l) => l.startsWith('  (a) 1 hog nice 0 ')).at(-1)).toMatch(/0\.00x ‡$/);
  });

  it('marks nothing where both sides are clear of the boundary: all prompt, or a tail of several per cent', () => {
    const lines = render(
      [
        row('(a) no hog', d(1, 50e3, 150e3), d(1, 48e3, 140e3)),
        row('(a) 2 hogs nice 0', d(0.95, 25e3, 4e6), d(0.96, 30e3, 3.9e6)),
      ],
      [],
    );
    expect(lines.join('\n')).not.toContain('‡');
    expect(lines.join('\n')).not.toContain('†');
  });

  it('marks a p50 between modes with † and compares the ≤0.5 ms shares', () => {
    const lines = render(
      [row('(a) 1 hog nice -20', d(0.53, 31e3, 3.85e6), d(0.52, 82e3, 3.82e6), d(0.617, 0, 4e6, 32000))],
      [],
    );
    expect(line(lines, '(a) 1 hog nice -20')).toMatch(/2\.6\dx †/);
    expect(
      lines.some((l) =>
        l.includes('1 hog nice -20: ≤0.5 ms host 53.0%, lab 52.0% (lab − host -1.0 points); the rules alone 61.7%'),
      ),
    ).toBe(true);
  });
});

describe("bench:twin's (a) no-hog line: the lab's timer wake-up of its halted CPU 0", () => {
  it("prints the lab's idle_exit beside the host's lateness, with each side's share past 0.5 ms", () => {
    const text = idleExitLines(d(0.978, 60e3, 1.6e6), d(0.995, 110e3, 450e3)).join(' ');
    expect(text).toMatch(/idle_exit/);
    expect(text).toMatch(/p50 110\.0 µs, p99 450\.0 µs, max 4\.00 ms, past 0\.5 ms 0\.5%/);
    expect(text).toMatch(/the host's\s+waker: p50 60\.0 µs, p99 1\.60 ms, past 0\.5 ms 2\.2%/);
  });
  it('says why when the lab has no figure, and n/a for a host without one', () => {
    expect(idleExitLines({ none: 'skipped' }, { none: 'no idle_exit in the window' }).join(' ')).toMatch(
      /idle_exit\): no idle_exit in the window/,
    );
    expect(idleExitLines({ none: 'skipped' }, d(1, 1e5, 2e5)).join(' ')).toMatch(
      /waker: p50 n\/a, p99 n\/a, past 0\.5 ms n\/a/,
    );
  });
});
