import { describe, expect, it } from 'vitest';
import { badOption, closest, conflict, formatValue, runFailed } from '../../src/config/errors.js';
import { DeferlabError, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUN_FAILED } from '../../src/errors.js';

describe('the error catalogue', () => {
  it('exit statuses', () => {
    expect([EXIT_OK, EXIT_RUN_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED]).toEqual([0, 1, 2, 130]);
  });

  it('badOption: setting, constraint, value, fix', () => {
    const err = badOption('--cpus', 'must be an integer from 1 to 64', '0');
    expect(err).toBeInstanceOf(DeferlabError);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe('--cpus must be an integer from 1 to 64 (got 0)');
    expect(err).toMatchObject({ code: 'E_BAD_OPTION', exitStatus: 2, usage: true, name: 'DeferlabError' });
    expect(badOption('hz in c.json', 'must be one of 100, 250', 7, 'use 250', 'odd').message).toBe(
      'hz in c.json must be one of 100, 250 (got 7, odd); use 250',
    );
    expect(badOption('hz in c.json', 'x', 7).usage).toBe(false);
  });

  it('conflict and runFailed', () => {
    expect(conflict('a and b clash', 'drop one').message).toBe('a and b clash; drop one');
    expect(runFailed('worker died')).toMatchObject({ code: 'E_RUN_FAILED', exitStatus: 1 });
  });

  it.each([
    ['0', '0'],
    ['-5', '-5'],
    ['abc', '"abc"'],
    [1.5, '1.5'],
    [true, 'true'],
    [null, 'null'],
    [undefined, 'nothing'],
    [[1, 2], '[1,2]'],
    [{ a: 1 }, '{"a":1}'],
    ['x'.repeat(100), `"${'x'.repeat(78)}…`],
  ])('formatValue(%j) is %s', (value, shown) => {
    expect(formatValue(value)).toBe(shown);
  });

  it('closest suggests typos only', () => {
    expect(closest('cpu', ['cpus', 'hz'])).toBe('cpus');
    expect(closest('frobnicate', ['cpus', 'hz'])).toBeUndefined();
  });
});
