/**
 * SipHash and HalfSipHash on 32-bit JavaScript integers.
 *
 * Ported from the Linux kernel: the permutations are `SIPHASH_PERMUTATION` and
 * `HSIPHASH_PERMUTATION` from include/linux/siphash.h (the macros random.c's `fast_mix()` uses
 * as `FASTMIX_PERM`), the constants are `SIPHASH_CONST_*` / `HSIPHASH_CONST_*`. The two keyed
 * PRFs below exist to prove the permutations against the published reference vectors
 * (veorq/SipHash `vectors.h`): SipHash-2-4 with a 64-bit tag and HalfSipHash-2-4 with a 32-bit
 * tag. They are built from the very same permutation functions `fast_mix()` calls.
 *
 * Representation. A 64-bit word is two Int32 halves, `lo` and `hi`; no BigInt anywhere. The
 * 64-bit add takes its carry as `+((sum >>> 0) < (a >>> 0))`: an unsigned compare whose boolean
 * V8 turns into a `setb`, with no branch. ns per permutation, measured by bench/fastmix.ts
 * (Node 20, AMD EPYC, 2 cores):
 *   compare as a number `+(s < a)`                    4.7 ns  (kept)
 *   double `t = (a >>> 0) + (b >>> 0); carry = (t / 2**32) | 0`  6.5 ns
 *   bitwise `((a & b) | ((a | b) & ~s)) >>> 31`        6.6 ns
 *   compare with a branch `s < a ? 1 : 0`             15.7 ns  (random data: mispredicts)
 *
 * Why the state is an object with eight fields, not locals or an Int32Array: the permutation is
 * written once and shared by `fast_mix()` and SipHash-2-4, so it must be a function, and a
 * function cannot return eight integers without allocating. Through a typed array every call
 * stores and reloads all eight words (~17 ns per `fast_mix`, measured while writing this); an
 * object's fields are forwarded by TurboFan's load elimination once the call is inlined (~14 ns),
 * close to a hand-inlined copy on locals (~12 ns).
 */

/** Four 64-bit SipHash state words, each as (lo, hi) Int32 halves. Field order is v0..v3. */
export class SipState64 {
  v0lo = 0;
  v0hi = 0;
  v1lo = 0;
  v1hi = 0;
  v2lo = 0;
  v2hi = 0;
  v3lo = 0;
  v3hi = 0;
}

/** Four 32-bit HalfSipHash state words. */
export class SipState32 {
  v0 = 0;
  v1 = 0;
  v2 = 0;
  v3 = 0;
}

/**
 * `SIPHASH_CONST_0..3` ("somepseudorandomlygeneratedbytes"), as [lo, hi] Int32 pairs in v0..v3
 * order: 0x736f6d6570736575, 0x646f72616e646f6d, 0x6c7967656e657261, 0x7465646279746573.
 */
export const SIPHASH_CONST: readonly number[] = Object.freeze([
  0x70736575 | 0,
  0x736f6d65 | 0,
  0x6e646f6d | 0,
  0x646f7261 | 0,
  0x6e657261 | 0,
  0x6c796765 | 0,
  0x79746573 | 0,
  0x74656462 | 0,
]);

/** `HSIPHASH_CONST_0..3`: 0, 0, 0x6c796765, 0x74656462. */
export const HSIPHASH_CONST: readonly number[] = Object.freeze([0, 0, 0x6c796765 | 0, 0x74656462 | 0]);

/**
 * One `SIPHASH_PERMUTATION(a, b, c, d)` on `s` (a = v0, b = v1, c = v2, d = v3):
 *
 *   a += b; b = rol64(b, 13); b ^= a; a = rol64(a, 32);
 *   c += d; d = rol64(d, 16); d ^= c;
 *   a += d; d = rol64(d, 21); d ^= a;
 *   c += b; b = rol64(b, 17); b ^= c; c = rol64(c, 32);
 *
 * Context: any; never allocates.
 */
export function sipPermute64(s: SipState64): void {
  let a0 = s.v0lo;
  let a1 = s.v0hi;
  let b0 = s.v1lo;
  let b1 = s.v1hi;
  let c0 = s.v2lo;
  let c1 = s.v2hi;
  let d0 = s.v3lo;
  let d1 = s.v3hi;
  let t = 0;
  // a += b (carry out of the low half: the unsigned sum is below an addend)
  t = (a0 + b0) | 0;
  a1 = (a1 + b1 + +(t >>> 0 < a0 >>> 0)) | 0;
  a0 = t;
  // b = rol64(b, 13); b ^= a; a = rol64(a, 32) (a swap of halves)
  t = (b0 << 13) | (b1 >>> 19);
  b1 = ((b1 << 13) | (b0 >>> 19)) ^ a1;
  b0 = t ^ a0;
  t = a0;
  a0 = a1;
  a1 = t;
  // c += d; d = rol64(d, 16); d ^= c
  t = (c0 + d0) | 0;
  c1 = (c1 + d1 + +(t >>> 0 < c0 >>> 0)) | 0;
  c0 = t;
  t = (d0 << 16) | (d1 >>> 16);
  d1 = ((d1 << 16) | (d0 >>> 16)) ^ c1;
  d0 = t ^ c0;
  // a += d; d = rol64(d, 21); d ^= a
  t = (a0 + d0) | 0;
  a1 = (a1 + d1 + +(t >>> 0 < a0 >>> 0)) | 0;
  a0 = t;
  t = (d0 << 21) | (d1 >>> 11);
  d1 = ((d1 << 21) | (d0 >>> 11)) ^ a1;
  d0 = t ^ a0;
  // c += b; b = rol64(b, 17); b ^= c; c = rol64(c, 32)
  t = (c0 + b0) | 0;
  c1 = (c1 + b1 + +(t >>> 0 < c0 >>> 0)) | 0;
  c0 = t;
  t = (b0 << 17) | (b1 >>> 15);
  b1 = ((b1 << 17) | (b0 >>> 15)) ^ c1;
  b0 = t ^ c0;
  s.v0lo = a0;
  s.v0hi = a1;
  s.v1lo = b0;
  s.v1hi = b1;
  s.v2lo = c1; // rol64(c, 32)
  s.v2hi = c0;
  s.v3lo = d0;
  s.v3hi = d1;
}

/**
 * One `HSIPHASH_PERMUTATION(a, b, c, d)` on `s` (the kernel's CONFIG_64BIT=n fast_mix):
 *
 *   a += b; b = rol32(b, 5); b ^= a; a = rol32(a, 16);
 *   c += d; d = rol32(d, 8); d ^= c;
 *   a += d; d = rol32(d, 7); d ^= a;
 *   c += b; b = rol32(b, 13); b ^= c; c = rol32(c, 16);
 *
 * Context: any; never allocates.
 */
export function hsipPermute32(s: SipState32): void {
  let a = s.v0;
  let b = s.v1;
  let c = s.v2;
  let d = s.v3;
  a = (a + b) | 0;
  b = ((b << 5) | (b >>> 27)) ^ a;
  a = (a << 16) | (a >>> 16);
  c = (c + d) | 0;
  d = ((d << 8) | (d >>> 24)) ^ c;
  a = (a + d) | 0;
  d = ((d << 7) | (d >>> 25)) ^ a;
  c = (c + b) | 0;
  b = ((b << 13) | (b >>> 19)) ^ c;
  c = (c << 16) | (c >>> 16);
  s.v0 = a;
  s.v1 = b;
  s.v2 = c;
  s.v3 = d;
}

/** Little-endian 32-bit load of `p[i..i+3]`. */
function le32(p: Uint8Array, i: number): number {
  return p[i] | (p[i + 1] << 8) | (p[i + 2] << 16) | (p[i + 3] << 24);
}

function putLe32(p: Uint8Array, i: number, v: number): void {
  p[i] = v;
  p[i + 1] = v >>> 8;
  p[i + 2] = v >>> 16;
  p[i + 3] = v >>> 24;
}

/** Absorb one 64-bit message word m = (mhi, mlo) with `rounds` permutations (SipHash compression). */
function sipAbsorb64(s: SipState64, mlo: number, mhi: number, rounds: number): void {
  s.v3lo ^= mlo;
  s.v3hi ^= mhi;
  for (let r = 0; r < rounds; r++) sipPermute64(s);
  s.v0lo ^= mlo;
  s.v0hi ^= mhi;
}

/**
 * SipHash-2-4 with a 64-bit tag (the kernel's `siphash()`, lib/siphash.c: PREAMBLE, 2 rounds per
 * 8-byte word, POSTAMBLE with 4 finalisation rounds).
 *
 * @param msg   message bytes
 * @param key   16 key bytes (k0 = bytes 0..7, k1 = bytes 8..15, little-endian)
 * @param out   8 bytes, the tag little-endian (as the reference vectors list it)
 * Context: any. Allocates only when `out` is omitted. Not on a hot path: for tests.
 */
export function siphash24(msg: Uint8Array, key: Uint8Array, out: Uint8Array = new Uint8Array(8)): Uint8Array {
  if (key.length !== 16) throw new Error(`siphash24 needs a 16-byte key (got ${key.length} bytes)`);
  const k0lo = le32(key, 0);
  const k0hi = le32(key, 4);
  const k1lo = le32(key, 8);
  const k1hi = le32(key, 12);
  const s = new SipState64();
  s.v0lo = SIPHASH_CONST[0] ^ k0lo;
  s.v0hi = SIPHASH_CONST[1] ^ k0hi;
  s.v1lo = SIPHASH_CONST[2] ^ k1lo;
  s.v1hi = SIPHASH_CONST[3] ^ k1hi;
  s.v2lo = SIPHASH_CONST[4] ^ k0lo;
  s.v2hi = SIPHASH_CONST[5] ^ k0hi;
  s.v3lo = SIPHASH_CONST[6] ^ k1lo;
  s.v3hi = SIPHASH_CONST[7] ^ k1hi;
  const len = msg.length;
  const end = len - (len & 7);
  let i = 0;
  for (; i < end; i += 8) sipAbsorb64(s, le32(msg, i), le32(msg, i + 4), 2);
  // b = len << 56 | the 0..7 trailing bytes, little-endian
  let blo = 0;
  let bhi = (len & 0xff) << 24;
  for (let j = 0; i + j < len; j++) {
    if (j < 4) blo |= msg[i + j] << (8 * j);
    else bhi |= msg[i + j] << (8 * (j - 4));
  }
  sipAbsorb64(s, blo, bhi, 2);
  s.v2lo ^= 0xff;
  sipAbsorb64(s, 0, 0, 4);
  putLe32(out, 0, s.v0lo ^ s.v1lo ^ s.v2lo ^ s.v3lo);
  putLe32(out, 4, s.v0hi ^ s.v1hi ^ s.v2hi ^ s.v3hi);
  return out;
}

function hsipAbsorb32(s: SipState32, m: number, rounds: number): void {
  s.v3 ^= m;
  for (let r = 0; r < rounds; r++) hsipPermute32(s);
  s.v0 ^= m;
}

/**
 * HalfSipHash-2-4 with a 32-bit tag (veorq/SipHash `halfsiphash.c` with outlen 4; the tag is
 * v1 ^ v3). The kernel's 32-bit `hsiphash()` is HalfSipHash-1-3 with the same permutation and
 * constants; the published vectors are for 2-4, so that is what is checked here.
 *
 * @param key  8 key bytes (k0 = bytes 0..3, k1 = bytes 4..7, little-endian)
 * @param out  4 bytes, the tag little-endian
 * Context: any. Allocates only when `out` is omitted. For tests.
 */
export function halfsiphash24(msg: Uint8Array, key: Uint8Array, out: Uint8Array = new Uint8Array(4)): Uint8Array {
  if (key.length !== 8) throw new Error(`halfsiphash24 needs an 8-byte key (got ${key.length} bytes)`);
  const k0 = le32(key, 0);
  const k1 = le32(key, 4);
  const s = new SipState32();
  s.v0 = HSIPHASH_CONST[0] ^ k0;
  s.v1 = HSIPHASH_CONST[1] ^ k1;
  s.v2 = HSIPHASH_CONST[2] ^ k0;
  s.v3 = HSIPHASH_CONST[3] ^ k1;
  const len = msg.length;
  const end = len - (len & 3);
  let i = 0;
  for (; i < end; i += 4) hsipAbsorb32(s, le32(msg, i), 2);
  let b = (len & 0xff) << 24;
  for (let j = 0; i + j < len; j++) b |= msg[i + j] << (8 * j);
  hsipAbsorb32(s, b, 2);
  s.v2 ^= 0xff;
  hsipAbsorb32(s, 0, 4);
  putLe32(out, 0, s.v1 ^ s.v3);
  return out;
}
