/**
 * The shared BLAKE2s input pool: the kernel's initial state, save/restore of @noble/hashes'
 * internals through shared memory (this is the test that fails if those internals change), and
 * credit_init_bits() accounting.
 */
import { blake2s } from '@noble/hashes/blake2.js';
import { describe, expect, it } from 'vitest';
import {
  checkBlake2sInternals,
  INPUT_POOL_WORDS,
  InputPool,
  POOL_BITS,
  POOL_EARLY_BITS,
  POOL_READY_BITS,
} from '../../src/random/index.js';
import { prng, testSeed } from './fixtures/ref.js';

function pool(): { i32: Int32Array; a: InputPool; b: InputPool } {
  // A canary line on each side of the region.
  const i32 = new Int32Array(new SharedArrayBuffer(4 * (INPUT_POOL_WORDS + 32)));
  i32.fill(0x5a5a5a5a);
  InputPool.init(i32, 16);
  return { i32, a: new InputPool(i32, 16), b: new InputPool(i32, 16) };
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('initial state', () => {
  it("is the kernel's input_pool.hash.h: BLAKE2S_IV0 ^ 0x01010020, IV1..IV7 (unkeyed BLAKE2s-256)", () => {
    const { a } = pool();
    const iv = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    iv[0] ^= 0x01010000 | 32;
    expect(a.chainingWords().map((x) => x >>> 0)).toEqual(iv.map((x) => x >>> 0));
    expect(hex(a.digest())).toBe(hex(blake2s(new Uint8Array(0))));
    expect(a.mixes).toBe(0);
    expect(a.bytesMixed).toBe(0);
    expect(a.readyAtNs).toBe(-1);
    expect(a.earlyAtNs).toBe(-1);
  });
});

describe('save/restore of the hash through shared memory (guards the @noble/hashes 2.4.0 internals)', () => {
  it('two views taking turns, random chunk sizes across block boundaries, equal one uninterrupted hasher', () => {
    const seed = testSeed();
    const rnd = prng(seed);
    const { i32, a, b } = pool();
    const whole = blake2s.create();
    const sizes = [0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 200];
    let total = 0;
    for (let i = 0; i < 400; i++) {
      const len = i < sizes.length ? sizes[i] : rnd() % 150;
      const chunk = Uint8Array.from({ length: len }, () => rnd() & 0xff);
      (i % 2 === 0 ? a : b).mix(chunk);
      whole.update(chunk);
      total += len;
      if (i % 50 === 0) expect(hex(b.digest()), `seed ${seed}, chunk ${i}`).toBe(hex(whole.clone().digest()));
    }
    expect(hex(a.digest()), `seed ${seed}`).toBe(hex(whole.digest()));
    expect(a.bytesMixed).toBe(total);
    expect(b.mixes).toBe(400);
    // canaries around the region untouched
    expect(Array.from(i32.subarray(0, 16)).every((x) => x === 0x5a5a5a5a)).toBe(true);
    expect(Array.from(i32.subarray(16 + INPUT_POOL_WORDS)).every((x) => x === 0x5a5a5a5a)).toBe(true);
  });

  it('mix(bytes, len) absorbs only the first len bytes; lastSeq gives the lock order', () => {
    const { a, b } = pool();
    a.mix(Uint8Array.of(1, 2, 3, 4), 2);
    expect(a.lastSeq).toBe(0);
    b.mix(Uint8Array.of(9));
    expect(b.lastSeq).toBe(1);
    expect(hex(a.digest())).toBe(hex(blake2s(Uint8Array.of(1, 2, 9))));
  });

  it('checkBlake2sInternals names what moved', () => {
    expect(() => checkBlake2sInternals(blake2s.create())).not.toThrow();
    expect(() => checkBlake2sInternals({ v0: 1 })).toThrow(/internals changed \(v1, .*buffer.*\).*2\.4\.0/);
  });
});

describe('credit_init_bits()', () => {
  it('adds up to POOL_BITS, records the early and ready times, then ignores further credit', () => {
    const { a } = pool();
    expect(POOL_READY_BITS).toBe(256);
    expect(a.credit(0, 1)).toBe(0);
    expect(a.credit(100, 10)).toBe(100);
    expect(a.earlyAtNs).toBe(-1);
    expect(a.credit(28, 20)).toBe(28); // 128: CRNG_EARLY
    expect(a.earlyAtNs).toBe(20);
    expect(a.readyAtNs).toBe(-1);
    expect(a.credit(127, 30)).toBe(127);
    expect(a.ready).toBe(false);
    expect(a.credit(128, 40)).toBe(1); // capped at 256: CRNG_READY
    expect(a.ready).toBe(true);
    expect(a.initBits).toBe(POOL_BITS);
    expect(a.readyAtNs).toBe(40);
    expect(a.credit(5, 50)).toBe(0); // crng_ready(): credit_init_bits does nothing
    expect(a.readyAtNs).toBe(40);
    expect(a.creditedBitsTotal).toBe(100 + 28 + 127 + 128 + 5);
    expect(POOL_EARLY_BITS).toBe(128);
  });

  it('a single large credit crosses both thresholds and records only ready, as the kernel', () => {
    const { a } = pool();
    expect(a.credit(1000, 7)).toBe(256);
    expect(a.readyAtNs).toBe(7);
    expect(a.earlyAtNs).toBe(-1);
  });
});
