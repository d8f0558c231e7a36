/** The A/A control as a run executes it (src/harness/options.ts withControl): pure. */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { parseStrategySpec } from '../../src/config/strategy-spec.js';
import { withControl } from '../../src/harness/options.js';

const config = (flags: Record<string, unknown>) =>
  resolveConfig({ flags: { outDir: null, seed: 1, ...flags }, cwd: process.cwd() });
const spec = (text: string) => {
  const p = parseStrategySpec(text, process.cwd());
  if (!p.ok) throw new Error(text);
  return p.value;
};

describe('withControl', () => {
  it('leaves a resolved config as it is: one copy of the baseline, last', () => {
    const c = config({ strategies: ['inline', 'tasklet'], control: true });
    expect(withControl(c).strategies.map((s) => s.label)).toEqual(['inline', 'tasklet', 'inline (control)']);
    expect(withControl(c).control).toBe('inline (control)');
  });

  it("gives a scenario's own baseline its own control when it replaces the strategies", () => {
    const c = config({ strategies: ['inline', 'tasklet'], control: true });
    const scenario = {
      ...c,
      strategies: [spec('workqueue:wq=system'), spec('unbound:scope=system')],
      baseline: 'workqueue(wq=system)',
    };
    const run = withControl(scenario);
    expect(run.strategies.map((s) => s.label)).toEqual([
      'workqueue(wq=system)',
      'unbound(scope=system)',
      'workqueue(wq=system) (control)',
    ]);
    expect(run.strategies[2]).toEqual({ ...run.strategies[0], label: 'workqueue(wq=system) (control)' });
    expect(run.control).toBe('workqueue(wq=system) (control)');
  });

  it('drops a stale control and sets none without the baseline; does nothing without --control', () => {
    const c = config({ strategies: ['inline', 'tasklet'], control: true });
    const run = withControl({ ...c, baseline: 'nosuch' });
    expect(run.control).toBeNull();
    expect(run.strategies.map((s) => s.label)).toEqual(['inline', 'tasklet']);
    const plain = config({ strategies: ['inline', 'tasklet'] });
    expect(withControl(plain)).toBe(plain);
  });
});
