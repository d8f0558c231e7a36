import { blake2s } from '@noble/hashes/blake2.js';
import { describe, expect, it } from 'vitest';
import { blake2s256 } from '../../src/random/blake2s.js';
import { INPUT_POOL_WORDS, InputPool } from '../../src/random/inputpool.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('BLAKE2s in place on shared memory (src/random/blake2s.ts)', () => {
  it('RFC 7693 Appendix B and the reference implementation’s vectors', () => {
    // RFC 7693 Appendix B: BLAKE2s-256("abc").
    expect(hex(blake2s256(new TextEncoder().encode('abc')))).toBe(
      '508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982',
    );
    // The empty message (BLAKE2 reference, blake2s-256 of "").
    expect(hex(blake2s256(new Uint8Array(0)))).toBe('69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9');
  });

  it('equals @noble/hashes for every length 0..200 and at block boundaries', () => {
    for (const n of [...Array.from({ length: 201 }, (_, k) => k), 255, 256, 257, 1023, 1024, 4097]) {
      const data = Uint8Array.from({ length: n }, (_, k) => (k * 31 + n) & 0xff);
      expect(hex(blake2s256(data))).toBe(hex(blake2s(data)));
    }
  });

  it("the input pool's mix, in chunks of every size 1..130, gives the digest of the whole input", () => {
    const i32 = new Int32Array(new SharedArrayBuffer(4 * INPUT_POOL_WORDS));
    InputPool.init(i32, 0);
    const pool = new InputPool(i32, 0);
    const all: number[] = [];
    for (let n = 1; n <= 130; n++) {
      const chunk = Uint8Array.from({ length: n }, (_, k) => (n * 7 + k) & 0xff);
      pool.mix(chunk);
      all.push(...chunk);
    }
    pool.mix(new Uint8Array(32), 16); // len below the array's length: only 16 bytes
    all.push(...new Uint8Array(16));
    expect(hex(pool.digest())).toBe(hex(blake2s(Uint8Array.from(all))));
    expect(pool.bytesMixed).toBe(all.length);
  });
});
