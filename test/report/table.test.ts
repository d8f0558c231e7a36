import { describe, expect, it } from 'vitest';
import { DEFAULT_STRATEGIES, syntheticResults } from '../../src/report/synthetic.js';
import { renderTable, summaryTable, termSafe } from '../../src/report/table.js';
import type { StageName } from '../../src/report/types.js';

describe('terminal table', () => {
  const r = syntheticResults({ samples: 300, trials: 4, msgSizes: [64, 1024] });
  const text = renderTable(r);
  const lines = text.split('\n');

  it('lists every strategy of every point, with units in the header', () => {
    for (const p of r.points) for (const s of p.strategies) expect(text).toContain(s.label);
    expect(text).toContain('point 2/2: msg_size=1024');
    const header = lines.find((l) => l.startsWith('strategy'))!;
    for (const h of [
      'one-way mean µs',
      'p50 µs',
      'p99.9 µs',
      'max µs',
      'Δ mean µs [95% CI]',
      'wakeups/s',
      'ctx switches/s',
      'entropy bits/s',
    ]) {
      expect(header).toContain(h);
    }
  });

  it('aligns columns: every row of a point is as wide as its rule', () => {
    const ruleAt = lines.findIndex((l) => l.startsWith('------'));
    const rule = lines[ruleAt];
    const mean = lines[ruleAt - 1].indexOf('one-way mean µs') + 'one-way mean µs'.length;
    for (let i = ruleAt + 1; i <= ruleAt + r.points[0].strategies.length; i++) {
      expect(lines[i].length).toBeLessThanOrEqual(rule.length);
      expect(lines[i][mean - 1]).toMatch(/\d/); // right-aligned under its header
    }
  });

  it('shows the one-way mean in µs with 2 decimals and the Δ with interval and verdict', () => {
    const s = r.points[0].strategies[1];
    const row = lines.find((l) => l.startsWith(s.label))!;
    expect(row).toContain((s.merged.one_way!.summary.mean / 1000).toFixed(2));
    expect(row).toMatch(/[+-]\d+\.\d\d \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]\s+(worse|better|~)/);
    expect(lines.find((l) => l.startsWith(r.baseline))).toContain('baseline');
    expect(text).toMatch(/^Δ mean: .*95% paired-t interval/m);
  });

  it('falls back to handoff_to_start, and says so, when the workload has no one_way', () => {
    const noOneWay = DEFAULT_STRATEGIES.slice(1, 3).map((s) => {
      const { one_way: _drop, ...stages } = s.stages;
      return { ...s, stages };
    });
    const irqOnly = syntheticResults({ samples: 100, trials: 3, strategies: noOneWay });
    const t = summaryTable(irqOnly.points[0], irqOnly.baseline);
    expect(t.stage).toBe<StageName>('handoff_to_start');
    const out = renderTable(irqOnly);
    expect(out).toContain('handoff_to_start mean µs');
    expect(out).toContain('no one_way latency in this workload: showing handoff_to_start instead');
  });

  it('says when there is no interval (one trial)', () => {
    const one = syntheticResults({ samples: 100, trials: 1 });
    expect(renderTable(one)).toContain('[no CI: n<2]');
  });

  it('neutralises terminal control characters in labels and reports a failed run', () => {
    const evil = syntheticResults({
      samples: 50,
      trials: 2,
      strategies: [DEFAULT_STRATEGIES[0], { ...DEFAULT_STRATEGIES[1], label: 'x\u001b[2Jy' }],
      status: 'failed',
    });
    evil.error = { message: 'worker exited with code 1', thread: 'cpu1', cpu: 1 };
    const out = renderTable(evil);
    expect(out).not.toContain('\u001b');
    expect(out).toContain('x\\x1b[2Jy');
    expect(out.split('\n')[0]).toBe(
      'status: failed: worker exited with code 1 (thread cpu1, cpu 1); results below are partial',
    );
    expect(termSafe('a\rb\u009bc')).toBe('a\\x0db\\x9bc');
  });
});
