import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { esc, niceScale, percentileToX, renderHtml } from '../../src/report/run/html.js';
import { withComparisons } from '../../src/report/statistics/stats.js';
import { STAGE_NAMES } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const HOSTILE = '<script>alert("label")</script>';
const HOSTILE_FILE = '/tmp/"><img src=x onerror=alert(1)>.ts';

describe('report.html', () => {
  const strategies = [
    DEFAULT_STRATEGIES[0],
    { ...DEFAULT_STRATEGIES[1], label: HOSTILE, kind: 'file' as const, file: HOSTILE_FILE },
    DEFAULT_STRATEGIES[3],
  ];
  const r = syntheticResults({ samples: 300, trials: 3, msgSizes: [64, 4096], strategies });
  const html = renderHtml(r);

  it('has one plot per point × stage present, each an <svg data-stage> with one line per strategy having it', () => {
    for (const [pi, p] of r.points.entries()) {
      for (const stage of STAGE_NAMES) {
        const having = p.strategies.filter((s) => (s.merged[stage]?.summary.count ?? 0) > 0);
        const re = new RegExp(`<svg[^>]*data-stage="${stage}" data-point="${pi}"[^>]*>([\\s\\S]*?)</svg>`, 'g');
        const plots = [...html.matchAll(re)];
        expect(plots, `point ${pi} ${stage}`).toHaveLength(having.length ? 1 : 0);
        if (having.length) expect(plots[0][1].match(/<path class="series"/g)).toHaveLength(having.length);
      }
    }
  });

  it('escapes user strings: a hostile label or file name cannot inject markup', () => {
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toContain('<img');
    expect(html).toContain(esc(HOSTILE));
    expect(html).toContain(esc(HOSTILE_FILE));
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own
  });

  it('is self-contained, and its CSP allows exactly its own script', () => {
    expect(html).not.toMatch(/<[a-z]+\s[^>]*\b(src|href)=|<link|@import|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/i);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
    const hash = createHash('sha256').update(script).digest('base64');
    expect(html).toContain(`script-src 'sha256-${hash}'`);
    expect(html).toContain("default-src 'none'");
  });

  it('shows the run metadata, the summary table and the counters', () => {
    expect(html).toContain(r.meta.command.join(' '));
    expect(html).toContain('<table class="summary">');
    expect(html).toContain('<table class="counters">');
    expect(html).toContain('entropy_bits');
  });

  it('has every column, the A/A noise floor and the --until outcome', () => {
    const withControl = syntheticResults({
      samples: 200,
      trials: 3,
      strategies: [...strategies, { ...DEFAULT_STRATEGIES[0], label: 'inline (control)' }],
    });
    withControl.control = 'inline (control)';
    withControl.points[0].until = {
      pct: 3,
      maxTimeMs: 60_000,
      reached: true,
      rounds: 3,
      stop: 'reached',
      widthPct: {},
    };
    const out = renderHtml(withComparisons(withControl));
    for (const h of ['p90 µs', 'max µs', 'wakeups/s', 'Δ p99.9 µs [BH CI]']) expect(out).toContain(`${esc(h)}</th>`);
    expect(out).toContain('>noise floor</td>');
    expect(out).toMatch(/<p class="note">noise floor \(A\/A: inline \(control\) − inline, µs\): mean /);
    expect(out).toContain('<p class="note">until ±3%: reached after 3 rounds</p>');
  });

  it('flags a run that did not complete', () => {
    const failed = { ...r, status: 'failed' as const, error: { message: '<b>boom</b>', strategy: HOSTILE } };
    const out = renderHtml(failed);
    expect(out).toContain('class="status-bad"');
    expect(out).toContain('&lt;b&gt;boom&lt;/b&gt;');
  });
});

describe('plot helpers', () => {
  it('maps percentiles to HdrHistogram decades', () => {
    expect(percentileToX(0)).toBe(0);
    expect(percentileToX(90)).toBeCloseTo(1, 12);
    expect(percentileToX(99.9)).toBeCloseTo(3, 9);
  });

  it('rounds axis tops up to 1, 2, 2.5 or 5 × 10^k', () => {
    expect(niceScale(137)).toEqual({ max: 200, step: 50 });
    expect(niceScale(21)).toEqual({ max: 25, step: 5 });
    expect(niceScale(0.7).max).toBeCloseTo(1, 12);
    expect(niceScale(0)).toEqual({ max: 1, step: 0.2 });
  });
});

describe('report.html says what ran', () => {
  it('shows the setup line, with the kernel profile and idle policy the run resolved', () => {
    const r = syntheticResults({ samples: 50, trials: 2 });
    r.meta.options = { ...(r.meta.options as object), cpus: 2, hz: 250, kernel: '5.15', idle: 'auto', kthreads: 'cpu' };
    r.meta.idlePolicy = 'halt (auto: 0.8 of 2 cores free)';
    const html = renderHtml(r);
    expect(html).toMatch(
      /<dt>setup<\/dt><dd>[^<]*2 CPUs, HZ 250, kernel 5\.15, idle halt \(auto: 0\.8 of 2 cores free\), kthreads on CPU threads/,
    );
  });
});
