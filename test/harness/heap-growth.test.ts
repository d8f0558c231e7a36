/**
 * Naming the strategy that filled a thread's heap (src/harness/heap-growth.ts): a new user's
 * tasklet that kept 1 MiB per run ran cpu1 out of memory in inline's slice, and the run blamed
 * inline. The growth between reports is charged to the strategy in force between them.
 */
import { describe, expect, it } from 'vitest';
import { HeapGrowth, SUSPECT_MIN_BYTES, suspectText } from '../../src/harness/heap-growth.js';

const MiB = 2 ** 20;
const heap = (usedMiB: number, externalMiB = 0) => ({
  used: usedMiB * MiB,
  total: 0,
  external: externalMiB * MiB,
  malloced: 0,
});
/** Alternate slices of inline (cpu1's heap flat) and leaky (+40 MiB each, half of it external); cpu0 churns a MiB. */
function interleaved(slices: number): HeapGrowth {
  const g = new HeapGrowth();
  let used = 20;
  g.note('inline', [{ thread: 'cpu1', heap: heap(used) }]);
  for (let i = 0; i < slices; i++) {
    used += 20;
    g.note('leaky.js', [
      { thread: 'cpu1', heap: heap(used, used - 20) },
      { thread: 'cpu0', heap: heap(20) },
    ]);
    g.note('inline', [
      { thread: 'cpu1', heap: heap(used, used - 20) },
      { thread: 'cpu0', heap: heap(21) },
    ]);
  }
  return g;
}

describe('HeapGrowth', () => {
  it('names the strategy whose slices filled the thread, not the one in force', () => {
    const s = interleaved(5).suspect('cpu1', 'inline');
    expect(s?.label).toBe('leaky.js');
    expect(s?.bytes).toBe(5 * 40 * MiB);
    expect(s?.inForceBytes).toBe(0);
    expect(suspectText('inline', s)).toBe(
      ' (while strategy inline was in force; its heap grew most under leaky.js: +200 MiB over its slices, +0 MiB under inline)',
    );
  });

  it('names no one where no strategy stands out, or the growth is V8 churn', () => {
    // cpu0 moved by a MiB each way: under SUSPECT_MIN_BYTES.
    expect(interleaved(5).suspect('cpu0', 'inline')).toBeUndefined();
    expect(interleaved(5).suspect('cpu7', 'inline')).toBeUndefined();
    const g = new HeapGrowth();
    g.note('a', [{ thread: 't', heap: heap(0) }]);
    g.note('a', [{ thread: 't', heap: heap(100) }]);
    g.note('b', [{ thread: 't', heap: heap(160) }]);
    expect(g.suspect('t', 'b'), 'a grew 100 MiB, b 60: not twice').toBeUndefined();
    expect(SUSPECT_MIN_BYTES).toBeGreaterThan(MiB);
  });

  it('says only what was in force where the suspect is that strategy, or none', () => {
    const s = interleaved(3).suspect('cpu1', 'leaky.js');
    expect(s?.label).toBe('leaky.js');
    expect(suspectText('leaky.js', s)).toBe(' (while strategy leaky.js was in force)');
    expect(suspectText('inline', undefined)).toBe(' (while strategy inline was in force)');
    expect(suspectText(undefined, undefined)).toBe('');
  });
});
