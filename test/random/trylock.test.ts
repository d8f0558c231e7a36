/**
 * random.c's hard-IRQ mix at seed 000's bisected commit, before 4a61bf7f9b18 ("random: defer fast
 * pool mixing to worker"): `if (!spin_trylock(&input_pool.lock)) return;` — the mix is skipped
 * when the lock is held and the fast pool's count is left as it was, so the next interrupt tries
 * again (the `inline_trylock` strategy). One thread: another CPU's hold is a lock taken on the
 * same words.
 */
import { describe, expect, it } from 'vitest';
import { MIX_SKIPPED } from '../../src/random/fastpool.js';
import {
  FAST_POOL_WORDS,
  FastPool,
  fastPoolBase,
  INPUT_POOL_WORDS,
  InputPool,
  InputPoolWord,
  initFastPool,
} from '../../src/random/index.js';
import { ShmLock } from '../../src/shm/lock.js';

const HZ = 1000;
const TRIGGER = 64; // the bisected commit's trigger

function setup() {
  const i32 = new Int32Array(new SharedArrayBuffer(4 * (INPUT_POOL_WORDS + FAST_POOL_WORDS)));
  InputPool.init(i32, 0);
  initFastPool(i32, fastPoolBase(INPUT_POOL_WORDS, 0), '64', 0);
  const input = new InputPool(i32, 0);
  const fp = new FastPool(i32, fastPoolBase(INPUT_POOL_WORDS, 0), '64');
  /** input_pool.lock as another CPU would hold it. */
  const other = new ShmLock(i32, InputPoolWord.LOCK, 10);
  /** Interrupts until one asks for the mix; returns how many it took. */
  const untilHandoff = (jiffies: number) => {
    for (let n = 1; n <= 10_000; n++)
      if (fp.addInterruptRandomness(24, 1000 + n, 0x1234, jiffies, HZ, TRIGGER)) return n;
    throw new Error('no hand-off');
  };
  return { i32, input, fp, other, untilHandoff };
}

describe('inline_trylock: spin_trylock(&input_pool.lock), skip when contended', () => {
  it('with the lock held elsewhere: nothing mixed, count and last kept, MIX_INFLIGHT cleared; the next interrupt retries', () => {
    const { input, fp, other, untilHandoff } = setup();
    expect(untilHandoff(5)).toBe(TRIGGER);
    const lastBefore = fp.last;
    expect(other.tryLock()).toBe(true);
    expect(fp.mixInterruptRandomness(0, 5, input, 0, true)).toBe(MIX_SKIPPED);
    expect(input.mixes).toBe(0);
    expect(fp.count).toBe(TRIGGER);
    expect(fp.last).toBe(lastBefore);
    expect(fp.inflight).toBe(false);
    expect(fp.mixes).toBe(0);
    expect(untilHandoff(5)).toBe(1); // count 65 >= 64: at once
    other.unlock();
    expect(fp.mixInterruptRandomness(0, 5, input, 0, true)).toBeGreaterThan(0);
    expect(input.mixes).toBe(1);
    expect(fp.count).toBe(0);
    expect(fp.inflight).toBe(false);
    expect(fp.mixes).toBe(1);
  });

  it('with the lock free it mixes exactly what the blocking mix does (same digest)', () => {
    const a = setup();
    const b = setup();
    a.untilHandoff(5);
    b.untilHandoff(5);
    expect(a.fp.mixInterruptRandomness(0, 5, a.input, 0, true)).toBe(b.fp.mixInterruptRandomness(0, 5, b.input, 0));
    expect(Buffer.from(a.input.digest()).toString('hex')).toBe(Buffer.from(b.input.digest()).toString('hex'));
  });
});
