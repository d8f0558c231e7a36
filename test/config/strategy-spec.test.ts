import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseStrategySpec, strategyLabel } from '../../src/config/strategy-spec.js';

const cwd = mkdtempSync(join(tmpdir(), 'deferlab-spec-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
mkdirSync(join(cwd, 'strategies'));
writeFileSync(join(cwd, 'strategies', 'batched.ts'), '');
writeFileSync(join(cwd, 'plain.js'), '');
mkdirSync(join(cwd, 'dir.ts'));

const spec = (text: string, extra: string[] = []) => {
  const r = parseStrategySpec(text, cwd, extra);
  if (!r.ok) throw new Error(r.problem.constraint);
  return r.value;
};

describe('parseStrategySpec', () => {
  it('a built-in name alone', () => {
    expect(spec('tasklet')).toEqual({ label: 'tasklet', name: 'tasklet', kind: 'builtin', options: {} });
  });

  it('coerces option values: true/false, numbers, else strings', () => {
    expect(spec('timer:deferrable=true,slack=0,jitter=-1.5,name=x1,off=false').options).toEqual({
      deferrable: true,
      slack: 0,
      jitter: -1.5,
      name: 'x1',
      off: false,
    });
  });

  it('labels with the options, keys sorted, values as coerced', () => {
    expect(spec('workqueue:wq=system').label).toBe('workqueue(wq=system)');
    expect(spec('timer:b=02,a=true').label).toBe('timer(a=true,b=2)');
    expect(strategyLabel('inline', {})).toBe('inline');
  });

  it('a path with a / is a file, resolved against cwd, labelled by its basename', () => {
    expect(spec('./strategies/batched.ts:batch=8')).toEqual({
      label: 'batched.ts(batch=8)',
      name: 'batched',
      kind: 'file',
      file: join(cwd, 'strategies', 'batched.ts'),
      options: { batch: 8 },
    });
  });

  it('a name ending in a strategy extension is a file even without a /', () => {
    expect(spec('plain.js')).toMatchObject({ kind: 'file', file: join(cwd, 'plain.js'), label: 'plain.js' });
  });

  it('an absolute path stays as it is', () => {
    expect(spec(join(cwd, 'plain.js')).file).toBe(join(cwd, 'plain.js'));
  });

  it('extra options (check-strategy --option) join the spec’s own', () => {
    expect(spec('plain.js:a=1', ['b=two']).options).toEqual({ a: 1, b: 'two' });
  });

  it.each([
    ['', 'must not be empty'],
    ['  ', 'must not be empty'],
    [
      ':a=1',
      'must be a built-in strategy (inline, workqueue, tasklet, timer, unbound, irq_work, bh_workqueue, inline_trylock) or a path to a strategy file',
    ],
    ['timer:', 'must have key=value options after the ":", like timer:deferrable=true'],
    ['timer:=1', 'must give options as key=value pairs separated by commas, like timer:deferrable=true'],
    ['timer:a=1,a=2', 'must give each option once'],
    ['./dir.ts', 'must name a strategy file'],
    ['./strategies/missing.mts', 'must name an existing strategy file'],
    ['./README', 'must be a strategy file ending in .ts, .js, .mjs or .mts'],
    ['inline,tasklet', 'takes one strategy, not a comma-separated list'],
    ['tasklet, unbound', 'takes one strategy, not a comma-separated list'],
  ])('rejects %j', (text, constraint) => {
    const r = parseStrategySpec(text, cwd);
    expect(r.ok ? 'accepted' : r.problem.constraint).toBe(constraint);
  });

  it('a list says to repeat the flag, one strategy each', () => {
    const r = parseStrategySpec('inline,tasklet', cwd);
    expect(r.ok ? 'accepted' : r.problem.fix).toBe('repeat the flag: --strategy inline --strategy tasklet');
    // Spaces too, and no empty strategy in the suggestion.
    const spaced = parseStrategySpec('inline workqueue', cwd);
    expect(spaced.ok ? 'accepted' : spaced.problem.fix).toBe('repeat the flag: --strategy inline --strategy workqueue');
    const trailing = parseStrategySpec('inline,', cwd);
    expect(trailing.ok ? 'accepted' : trailing.problem.fix).toBe('repeat the flag: --strategy inline');
  });
});
