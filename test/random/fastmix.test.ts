/**
 * fast_mix() and the v1/v2 inputs of add_interrupt_randomness() against an independent BigInt
 * model of the kernel code (test/random/fixtures/ref.ts), over seeded random inputs.
 */
import { describe, expect, it } from 'vitest';
import { FAST_POOL_WORDS, FastPool, FastPoolWord, fastMix32, fastMix64, initFastPool } from '../../src/random/index.js';
import {
  fastMixRef,
  HSIPHASH_CONSTS,
  hsipPermRef,
  M32,
  M64,
  prng,
  read32,
  read64,
  SIPHASH_CONSTS,
  sipPermRef,
  swabRef,
  testSeed,
  write32,
  write64,
} from './fixtures/ref.js';

const N = 10_000;
const P = FastPoolWord.POOL;

function newShm(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * FAST_POOL_WORDS * 2));
}

describe('fastMix64 = fast_mix() with SIPHASH_PERMUTATION', () => {
  it(`matches the BigInt model on ${N} random (state, v1, v2)`, () => {
    const seed = testSeed();
    const rnd = prng(seed);
    const i32 = newShm();
    for (let i = 0; i < N; i++) {
      const s = [0, 1, 2, 3].map(() => (BigInt(rnd()) << 32n) | BigInt(rnd()));
      const v1hi = rnd();
      const v1lo = rnd();
      const v2hi = rnd();
      const v2lo = rnd();
      write64(i32, FAST_POOL_WORDS + P, s);
      fastMix64(i32, FAST_POOL_WORDS, v1hi, v1lo, v2hi, v2lo);
      fastMixRef(s, (BigInt(v1hi) << 32n) | BigInt(v1lo), (BigInt(v2hi) << 32n) | BigInt(v2lo), sipPermRef);
      const got = read64(i32, FAST_POOL_WORDS + P);
      if (got.some((g, k) => g !== s[k]))
        expect(got, `seed ${seed} (rerun with DEFERLAB_SEED=${seed}), input ${i}`).toEqual(s);
    }
  });

  it('chains: 10^4 successive mixes from the SipHash constants stay equal to the model', () => {
    const seed = testSeed();
    const rnd = prng(seed);
    const i32 = newShm();
    initFastPool(i32, 0, '64', 0);
    const s = [...SIPHASH_CONSTS];
    expect(read64(i32, P)).toEqual(s);
    for (let i = 0; i < N; i++) {
      const a = rnd();
      const b = rnd();
      fastMix64(i32, 0, 0, a, b, 0);
      fastMixRef(s, BigInt(a), BigInt(b) << 32n, sipPermRef);
    }
    expect(read64(i32, P), `seed ${seed}`).toEqual(s);
  });
});

describe('fastMix32 = fast_mix() with HSIPHASH_PERMUTATION (CONFIG_64BIT=n)', () => {
  it(`matches the BigInt model on ${N} random (state, v1, v2)`, () => {
    const seed = testSeed();
    const rnd = prng(seed);
    const i32 = newShm();
    for (let i = 0; i < N; i++) {
      const s = [0, 1, 2, 3].map(() => BigInt(rnd()));
      const v1 = rnd();
      const v2 = rnd();
      write32(i32, FAST_POOL_WORDS + P, s);
      fastMix32(i32, FAST_POOL_WORDS, v1, v2);
      fastMixRef(s, BigInt(v1), BigInt(v2), hsipPermRef);
      const got = read32(i32, FAST_POOL_WORDS + P);
      if (got.some((g, k) => g !== s[k]))
        expect(got, `seed ${seed} (rerun with DEFERLAB_SEED=${seed}), input ${i}`).toEqual(s);
    }
  });

  it('initialises the pool to the HSipHash constants and leaves words 4..7 zero', () => {
    const i32 = newShm();
    i32.fill(-1);
    initFastPool(i32, 0, '32', 3);
    expect(read32(i32, P)).toEqual(HSIPHASH_CONSTS);
    expect(Array.from(i32.subarray(4, 8))).toEqual([0, 0, 0, 0]);
  });
});

describe('addInterruptRandomness feeds fast_mix(pool, cycles, ip ^ swab(irq))', () => {
  for (const variant of ['64', '32'] as const) {
    it(`${variant}-bit: v1 = low bits of the clock, v2 = ip ^ swab(unsigned long irq), on ${N} random interrupts`, () => {
      const seed = testSeed();
      const rnd = prng(seed);
      const i32 = newShm();
      initFastPool(i32, 0, variant, 0);
      const fp = new FastPool(i32, 0, variant);
      const is64 = variant === '64';
      const mask = is64 ? M64 : M32;
      const s = is64 ? [...SIPHASH_CONSTS] : [...HSIPHASH_CONSTS];
      for (let i = 0; i < N; i++) {
        // clock and ip: integers below 2^53; irq: mostly small, sometimes negative or large.
        const cycles = (rnd() % 0x200000) * 2 ** 32 + rnd();
        const ip = (rnd() % 0x200000) * 2 ** 32 + rnd();
        const irq = i % 7 === 0 ? rnd() | 0 : rnd() % 256;
        // trigger above any count and jiffies = last: never hands off, so only the mix is tested.
        fp.addInterruptRandomness(irq, cycles, ip, 0, 250, 2 ** 32);
        const v1 = BigInt(cycles) & mask;
        const v2 = (BigInt(ip) & mask) ^ swabRef(BigInt.asUintN(is64 ? 64 : 32, BigInt(irq)), is64 ? 8 : 4);
        fastMixRef(s, v1, v2, is64 ? sipPermRef : hsipPermRef);
        const got = is64 ? read64(i32, P) : read32(i32, P);
        if (got.some((g, k) => g !== s[k])) {
          expect(
            got,
            `seed ${seed} (rerun with DEFERLAB_SEED=${seed}), interrupt ${i}: irq ${irq} cycles ${cycles} ip ${ip}`,
          ).toEqual(s);
        }
      }
      expect(fp.count).toBe(N);
    });
  }
});
