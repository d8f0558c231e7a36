/** `--idle auto`: poll only when the host has a core free for every emulated CPU. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { autoIdlePolicy, sampleIdleCores } from '../../src/config/defaults.js';

describe('--idle auto', () => {
  it('polls with a free core per CPU, halts without', () => {
    expect(autoIdlePolicy(2, 2)).toBe('poll');
    expect(autoIdlePolicy(2, 1.8)).toBe('poll'); // a quiet host's sample is never quite whole
    expect(autoIdlePolicy(2, 1.5)).toBe('halt'); // another process busy on the host
    expect(autoIdlePolicy(4, 2)).toBe('halt');
    expect(autoIdlePolicy(1, 0.2)).toBe('halt');
  });

  it('samples the idle cores from /proc/stat (between 0 and the core count)', async () => {
    const free = await sampleIdleCores(50);
    if (free === undefined) return; // not Linux: the load average is used instead
    expect(free).toBeGreaterThanOrEqual(0);
    expect(free).toBeLessThanOrEqual(availableParallelism() + 1e-9);
  });
});
