/**
 * The hand-off rules of add_interrupt_randomness() and the accounting of
 * mix_interrupt_randomness(): trigger boundaries, MIX_INFLIGHT, credit clamps, wrong CPU.
 */
import { blake2s } from '@noble/hashes/blake2.js';
import { describe, expect, it } from 'vitest';
import {
  FAST_POOL_WORDS,
  FastPool,
  type FastPoolVariant,
  FastPoolWord,
  fastPoolBase,
  INPUT_POOL_WORDS,
  InputPool,
  initFastPool,
  mixCreditBits,
  mixInterruptRandomness,
  timeAfter,
} from '../../src/random/index.js';
import { fastMixRef, HSIPHASH_CONSTS, hsipPermRef, leBytes, SIPHASH_CONSTS, sipPermRef } from './fixtures/ref.js';

const HZ = 250;
const IRQ = 24;
const IP = 0x1234;

/** A buffer with an input pool at 0 and fast pools for two CPUs after it. */
function setup(variant: FastPoolVariant = '64') {
  const i32 = new Int32Array(new SharedArrayBuffer(4 * (INPUT_POOL_WORDS + 2 * FAST_POOL_WORDS)));
  InputPool.init(i32, 0);
  const fpBase = INPUT_POOL_WORDS;
  initFastPool(i32, fastPoolBase(fpBase, 0), variant, 0);
  initFastPool(i32, fastPoolBase(fpBase, 1), variant, 1);
  const input = new InputPool(i32, 0);
  const cpu0 = new FastPool(i32, fastPoolBase(fpBase, 0), variant);
  const cpu1 = new FastPool(i32, fastPoolBase(fpBase, 1), variant);
  return { i32, input, cpu0, cpu1 };
}

/** n interrupts at `jiffies`; returns how many asked for a hand-off. */
function irqs(fp: FastPool, n: number, jiffies: number, trigger?: number): number {
  let handoffs = 0;
  for (let i = 0; i < n; i++) if (fp.addInterruptRandomness(IRQ, 1000 + i, IP, jiffies, HZ, trigger)) handoffs++;
  return handoffs;
}

describe('the trigger: count >= 1024 || time_after(jiffies, last + HZ)', () => {
  it('1023 interrupts within a second do not hand off; the 1024th does', () => {
    const { cpu0 } = setup();
    expect(irqs(cpu0, 1023, 0)).toBe(0);
    expect(cpu0.count).toBe(1023);
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, 0, HZ)).toBe(true);
    expect(cpu0.inflight).toBe(true);
    expect(cpu0.handoffs).toBe(1);
  });

  it('the trigger count is a parameter (what-if knob)', () => {
    const { cpu0 } = setup();
    expect(irqs(cpu0, 63, 0, 64)).toBe(0);
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, 0, HZ, 64)).toBe(true);
  });

  it('exactly HZ jiffies after `last` is not enough; HZ + 1 is', () => {
    const { cpu0 } = setup();
    expect(cpu0.last).toBe(0);
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, HZ, HZ)).toBe(false);
    expect(cpu0.addInterruptRandomness(IRQ, 2, IP, HZ + 1, HZ)).toBe(true);
  });

  it('time_after survives jiffies wrapping past 2^31 and 2^32', () => {
    const { cpu0, input } = setup();
    const last = 0x7fffffff - 10; // mix at a jiffies value just below the int32 wrap
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, HZ + 1, HZ)).toBe(true);
    cpu0.mixInterruptRandomness(0, last, input, 0);
    expect(cpu0.last).toBe(last);
    expect(cpu0.addInterruptRandomness(IRQ, 2, IP, (last + HZ) | 0, HZ)).toBe(false); // wrapped, exactly HZ
    expect(cpu0.addInterruptRandomness(IRQ, 3, IP, (last + HZ + 1) | 0, HZ)).toBe(true);
    expect(timeAfter(5, 0xfffffff0 | 0)).toBe(true); // 5 is after 2^32 - 16, modulo 2^32
    expect(timeAfter(0xfffffff0 | 0, 5)).toBe(false);
  });
});

describe('MIX_INFLIGHT', () => {
  it('blocks a second hand-off until the mix has run; interrupts keep counting meanwhile', () => {
    const { cpu0, input } = setup();
    expect(irqs(cpu0, 1024, 0)).toBe(1);
    // Far past both thresholds, still no second hand-off while the mix is pending.
    expect(irqs(cpu0, 3000, 10 * HZ)).toBe(0);
    expect(cpu0.inflight).toBe(true);
    expect(cpu0.count).toBe(4024);
    expect(cpu0.handoffs).toBe(1);
    expect(cpu0.mixInterruptRandomness(0, 10 * HZ, input, 0)).toBe(Math.min(4024 >>> 6, 128));
    expect(cpu0.inflight).toBe(false);
    expect(cpu0.count).toBe(0);
    expect(cpu0.last).toBe(10 * HZ);
    // Armed again: 1024 more, or a second later.
    expect(irqs(cpu0, 1023, 10 * HZ)).toBe(0);
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, 11 * HZ + 1, HZ)).toBe(true);
  });
});

describe('mix_interrupt_randomness credit: clamp((count & 0xffff) / 64, 1, sizeof(pool) * 8)', () => {
  it('credits 1 bit for a time-triggered mix of a single interrupt (lower clamp)', () => {
    const { cpu0, input } = setup();
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, HZ + 1, HZ)).toBe(true);
    expect(cpu0.mixInterruptRandomness(0, HZ + 1, input, 5)).toBe(1);
    expect(input.initBits).toBe(1);
    expect(input.creditedBitsTotal).toBe(1);
  });

  it('credits count / 64 between the clamps', () => {
    const { cpu0, input } = setup();
    expect(irqs(cpu0, 1024, 0)).toBe(1);
    irqs(cpu0, 320, 0); // more interrupts while in flight: count = 1344
    expect(cpu0.mixInterruptRandomness(0, 1, input, 0)).toBe(1344 >>> 6);
  });

  for (const [variant, max] of [
    ['64', 128],
    ['32', 64],
  ] as const) {
    it(`${variant}-bit: caps at ${max} bits (sizeof(pool) * 8) and wraps at count & 0xffff`, () => {
      const { cpu0, input } = setup(variant);
      expect(irqs(cpu0, 1024, 0)).toBe(1);
      irqs(cpu0, 9000, 0);
      expect(cpu0.mixInterruptRandomness(0, 1, input, 0)).toBe(max);
      // 65536 + 128 interrupts before the mix runs: the kernel masks with U16_MAX -> 128 / 64 = 2.
      expect(irqs(cpu0, 1024, 1)).toBe(1);
      irqs(cpu0, 65536 + 128 - 1024, 1);
      expect(cpu0.count).toBe(65536 + 128);
      expect(cpu0.mixInterruptRandomness(0, 2, input, 0)).toBe(2);
    });
  }

  it('mixCreditBits is the kernel formula, MIX_INFLIGHT included in count', () => {
    expect(mixCreditBits(0, 16)).toBe(1);
    expect(mixCreditBits(63, 16)).toBe(1);
    expect(mixCreditBits(128, 16)).toBe(2);
    expect(mixCreditBits((1 << 31) | 8192, 16)).toBe(128);
    expect(mixCreditBits(8192, 8)).toBe(64);
    expect(mixCreditBits(0x10000, 16)).toBe(1);
  });
});

describe('the wrong-CPU check (fast_pool != this_cpu_ptr(&irq_randomness))', () => {
  it('is detected and counted; the pool is left alone, as in 6.x, until random_online_cpu()', () => {
    const { i32, cpu0, input } = setup();
    expect(irqs(cpu0, 1024, 0)).toBe(1);
    const base = fastPoolBase(INPUT_POOL_WORDS, 0);
    const poolWords = () => Array.from(i32.subarray(base + FastPoolWord.POOL, base + FastPoolWord.POOL + 8));
    const before = poolWords();
    expect(mixInterruptRandomness(cpu0, 1, 0, input, 0)).toBe(0); // cpu0's mix ran on cpu 1
    expect(poolWords()).toEqual(before);
    expect(cpu0.wrongCpu).toBe(1);
    expect(input.mixes).toBe(0);
    expect(input.initBits).toBe(0);
    expect(cpu0.inflight).toBe(true);
    expect(cpu0.count).toBe(1024);
    expect(cpu0.last).toBe(0);
    // Stalled: nothing hands off any more, however many interrupts or seconds pass.
    expect(irqs(cpu0, 5000, 100 * HZ)).toBe(0);
    // CPU hotplug brings it back (random_online_cpu zeroes count, and MIX_INFLIGHT with it).
    cpu0.randomOnlineCpu();
    expect(cpu0.inflight).toBe(false);
    expect(cpu0.addInterruptRandomness(IRQ, 1, IP, 100 * HZ, HZ)).toBe(true);
    expect(cpu0.mixInterruptRandomness(0, 100 * HZ, input, 0)).toBe(1);
    expect(cpu0.wrongCpu).toBe(1);
    expect(cpu0.mixes).toBe(1);
  });

  it("another CPU's pool is unaffected by a mix on the right CPU", () => {
    const { cpu0, cpu1, input } = setup();
    irqs(cpu1, 10, 0);
    expect(irqs(cpu0, 1024, 0)).toBe(1);
    cpu0.mixInterruptRandomness(0, 1, input, 0);
    expect(cpu1.count).toBe(10);
    expect(cpu1.wrongCpu).toBe(0);
  });
});

describe('what a mix puts into the input pool', () => {
  for (const variant of ['64', '32'] as const) {
    it(`${variant}-bit: the little-endian bytes of pool[0], pool[1] (${variant === '64' ? 16 : 8} bytes), in mix order`, () => {
      const { cpu0, input } = setup(variant);
      const is64 = variant === '64';
      const s = is64 ? [...SIPHASH_CONSTS] : [...HSIPHASH_CONSTS];
      const expected: number[] = [];
      let mixes = 0;
      for (let i = 0; i < 5000; i++) {
        const cycles = 1_000_000 + 37 * i;
        const jiffies = i >> 3;
        const handoff = cpu0.addInterruptRandomness(IRQ, cycles, IP, jiffies, HZ);
        const v2 = is64 ? BigInt(IP) ^ (BigInt(IRQ) << 56n) : BigInt(IP) ^ (BigInt(IRQ) << 24n);
        fastMixRef(s, BigInt(cycles), v2, is64 ? sipPermRef : hsipPermRef);
        if (handoff) {
          cpu0.mixInterruptRandomness(0, jiffies, input, 0);
          expected.push(...leBytes(s, 2, is64 ? 8 : 4));
          mixes++;
        }
      }
      expect(mixes).toBeGreaterThan(3);
      expect(input.mixes).toBe(mixes);
      expect(input.bytesMixed).toBe(expected.length);
      expect(Buffer.from(input.digest()).toString('hex')).toBe(
        Buffer.from(blake2s(Uint8Array.from(expected))).toString('hex'),
      );
    });
  }

  it('refuses a view of the other variant', () => {
    const { i32 } = setup('64');
    expect(() => new FastPool(i32, fastPoolBase(INPUT_POOL_WORDS, 0), '32')).toThrow(/64-bit variant.*expects 32-bit/);
    expect(FastPoolWord.COUNT).toBeLessThan(FAST_POOL_WORDS);
  });
});
