import { describe, expect, it } from 'vitest';
import { MAX_SWEEP_POINTS, parseSweep, sweepFromList } from '../../src/config/sweep.js';

const values = (text: string) => {
  const r = parseSweep(text);
  if (!r.ok) throw new Error(r.problem.constraint);
  return r.value.values;
};
const problem = (text: string) => {
  const r = parseSweep(text);
  if (r.ok) throw new Error(`expected ${text} to be rejected`);
  return r.problem;
};

describe('parseSweep (qperf -oo syntax)', () => {
  it('msg_size:4K:1024K:*2 doubles from 4 KiB to 1 MiB: 9 points', () => {
    expect(parseSweep('msg_size:4K:1024K:*2')).toEqual({
      ok: true,
      value: { param: 'msg_size', values: [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576] },
    });
  });

  it('adds with +N or a bare N, in the parameter’s units', () => {
    expect(values('msg_size:1K:4K:+1K')).toEqual([1024, 2048, 3072, 4096]);
    expect(values('trigger:64:256:64')).toEqual([64, 128, 192, 256]);
    expect(values('irq_rate:0:40k:+20k')).toEqual([0, 20000, 40000]);
  });

  it('stops at the last point not above max', () => {
    expect(values('msg_size:64:1000:*4')).toEqual([64, 256]);
  });

  it('a range of one point is fine whatever the step', () => {
    expect(values('msg_size:4K:4K:*1')).toEqual([4096]);
  });

  it('refuses a list that repeats a value, however it is written', () => {
    expect(problem('irq_rate:1k,1000').constraint).toBe('must list each irq_rate value once');
    expect(problem('msg_size:4K,64,4096').detail).toBe('"4096" repeats 4096');
  });

  it('takes an explicit list, in the order given', () => {
    expect(values('msg_size:64,4K,1M')).toEqual([64, 4096, 1048576]);
    expect(values('irq_rate:1M,20k')).toEqual([1000000, 20000]);
  });

  it('allows exactly 64 points, not 65', () => {
    expect(values('trigger:1:64:+1')).toHaveLength(MAX_SWEEP_POINTS);
    expect(problem('trigger:1:65:+1')).toMatchObject({
      constraint: 'must have at most 64 points',
      detail: 'which would produce 65',
    });
  });

  it('counts a long multiplicative sweep for the message', () => {
    expect(problem('msg_size:1:256M:*1.1').detail).toMatch(/^which would produce \d+$/);
  });

  it.each([
    ['msg_size:4K:1M:*1', 'which never ends'],
    ['msg_size:4K:1M:+0', 'which never ends'],
    ['irq_rate:0:1M:*2', 'which never ends'],
    ['msg_size:4K:1M:*0.5', 'which never ends'],
  ])('%s never ends', (text, detail) => {
    expect(problem(text).detail).toBe(detail);
  });

  it.each([
    ['msg_size:4K:1M', 'must look like name:min:max:step (step *N or +N) or name:v1,v2,..., e.g. msg_size:4K:1024K:*2'],
    ['msg_size:', 'must look like name:min:max:step (step *N or +N) or name:v1,v2,..., e.g. msg_size:4K:1024K:*2'],
    ['size:1:2:+1', 'must sweep one of msg_size, irq_rate, trigger'],
    ['msg_size:8K:4K:*2', 'must have min no larger than max'],
    ['msg_size:4K:1M:x2', 'must have a step *N (multiply) or +N (add)'],
    ['msg_size:0:1M:*2', 'must give msg_size values from 1 to 268435456 bytes (64, 4K, 1M)'],
    ['trigger:1:70000:*2', 'must give trigger values from 1 to 65535 interrupts'],
    ['msg_size:4Q,8K', 'must give msg_size values from 1 to 268435456 bytes (64, 4K, 1M)'],
  ])('rejects %s', (text, constraint) => {
    expect(problem(text).constraint).toBe(constraint);
  });
});

describe('sweepFromList (config file object form)', () => {
  it('reads values in the parameter’s units', () => {
    expect(sweepFromList('msg_size', [64, '4K'])).toEqual({
      ok: true,
      value: { param: 'msg_size', values: [64, 4096] },
    });
  });

  it('rejects an empty list and an unknown parameter', () => {
    expect(sweepFromList('msg_size', [])).toMatchObject({
      ok: false,
      problem: { constraint: 'must list at least one value' },
    });
    expect(sweepFromList('irqrate', [1])).toMatchObject({
      ok: false,
      problem: { constraint: 'must sweep one of msg_size, irq_rate, trigger', fix: 'did you mean irq_rate?' },
    });
  });
});
