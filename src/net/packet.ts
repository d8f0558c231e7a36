/**
 * A packet in a link's ring (./layout.ts): its header and its payload, written by the sender.
 * The payload of message `seq` is a counting pattern (word k = seq × 0x9e3779b1 + k) generated
 * as it is written, standing for copy_from_user; the reader checks every word against it through
 * the message's sum (src/workloads/tcp-lat.ts).
 */
import { P_BYTES, P_CSUM, P_DUE_LO, P_LAST, P_OFFSET, P_SEQ, P_WORDS, PACKET_HEADER_WORDS, putTime } from './layout.js';

/** The payload pattern's per-message stride (a golden-ratio constant). */
const PATTERN = 0x9e3779b1 | 0;

/** The 32-bit sum of message `seq`'s `words` payload words. */
export function patternSum(seq: number, words: number): number {
  const tri = ((words * (words - 1)) / 2) % 4294967296;
  return (Math.imul(words, Math.imul(seq, PATTERN)) + tri) | 0;
}

/**
 * The header of the packet at `idx` carrying words `offset`.. of message `seq` (`words` words
 * of a message of `msgWords` words and `msgBytes` bytes). Returns its payload words.
 */
export function writeHeader(
  i32: Int32Array,
  idx: number,
  seq: number,
  offset: number,
  payloadWords: number,
  msgWords: number,
  msgBytes: number,
): number {
  const n = Math.min(payloadWords, msgWords - offset);
  const last = offset + n === msgWords;
  i32[idx + P_SEQ] = seq;
  i32[idx + P_OFFSET] = offset;
  i32[idx + P_WORDS] = n;
  i32[idx + P_BYTES] = last ? msgBytes - offset * 4 : n * 4;
  i32[idx + P_LAST] = last ? 1 : 0;
  return n;
}

/**
 * Write payload words `from`..`to` of the packet at `idx` (whose header says which message and
 * offset) and return `sum` plus their sum: the sum of the words as unsigned 32-bit values, in a
 * double (exact below 2^53, i.e. for any message under 2^21 words × 2^32; `sum | 0` is the plain
 * 32-bit word sum patternSum gives, `csumFold32(sum)` the ones'-complement checksum).
 */
export function fillPayload(i32: Int32Array, idx: number, from: number, to: number, sum: number): number {
  const base = Math.imul(i32[idx + P_SEQ], PATTERN) + i32[idx + P_OFFSET];
  const p = idx + PACKET_HEADER_WORDS;
  let s = sum;
  for (let k = from; k < to; k++) {
    const v = (base + k) | 0;
    i32[p + k] = v;
    s += v >>> 0;
  }
  return s;
}

/** Word `g` of message `seq`'s payload (the pattern fillPayload writes). */
export function patternWord(seq: number, g: number): number {
  return (Math.imul(seq, PATTERN) + g) | 0;
}

/** Finish the packet: its checksum (0 where the NIC computes it) and arrival time. `csum` is a
 *  fillPayload / csumWords accumulator: stored folded to TCP's 16 bits (csumFold16). */
export function sealPacket(i32: Int32Array, idx: number, csum: number, due: number): void {
  i32[idx + P_CSUM] = csumFold16(csum);
  putTime(i32, idx + P_DUE_LO, due);
}

// ---- copy and checksum (issue 25: at the host's memcpy speed, near C csum_partial) ----------

/**
 * copy_to_user of words `src`..`src + n` of `i32` to `dst` (memmove: TypedArray copyWithin, which
 * V8 runs as a memmove of the backing store; no allocation). Context: any.
 */
export function copyWords(i32: Int32Array, dst: number, src: number, n: number): void {
  i32.copyWithin(dst, src, src + n);
}

/**
 * The ones'-complement sum of `n` 32-bit words from `p` (csum_partial's work on a word-aligned
 * buffer whose length is a multiple of 4), added to the accumulator `sum`: the result is an
 * accumulator (a double holding the unsigned sum exactly, below 2^53) for csumFold32/csumFold16.
 * Four independent chains, as arch/x86/lib/csum-partial_64.c runs two adc chains for ILP.
 * Context: any; never allocates.
 */
export function csumWords(i32: Int32Array, p: number, n: number, sum: number): number {
  let a = sum;
  let b = 0;
  let c = 0;
  let d = 0;
  const end4 = p + (n & ~3);
  let k = p;
  for (; k < end4; k += 4) {
    a += i32[k] >>> 0;
    b += i32[k + 1] >>> 0;
    c += i32[k + 2] >>> 0;
    d += i32[k + 3] >>> 0;
  }
  const end = p + n;
  for (; k < end; k++) a += i32[k] >>> 0;
  return a + b + c + d;
}

/** An accumulator folded to 32 bits with end-around carry (as csum_partial's __wsum), as int32. */
export function csumFold32(sum: number): number {
  let s = sum;
  while (s > 0xffffffff) s = (s % 4294967296) + Math.floor(s / 4294967296);
  return s | 0;
}

/** csum_fold() without the final complement: an accumulator or __wsum folded to 16 bits. */
export function csumFold16(sum: number): number {
  let s = csumFold32(sum) >>> 0;
  s = (s & 0xffff) + (s >>> 16);
  s = (s & 0xffff) + (s >>> 16);
  return s;
}

/**
 * csum_partial(buff, len, sum) over bytes `off`..`off + len` of `u8` (any offset, any length),
 * `i32` a view of the same buffer from the same byteOffset (for the aligned middle). Bytes are
 * taken in the host's (little-endian) order, as the kernel's do_csum on x86; an odd start
 * address is handled as lib/checksum.c's do_csum does (sum with the bytes shifted by one, then
 * swap the result's bytes). Returns an accumulator (csumFold16 gives the 16-bit sum).
 * Context: tests, bench, any path with unaligned data; never allocates.
 */
export function csumPartial(u8: Uint8Array, i32: Int32Array, off: number, len: number, sum: number): number {
  if (len <= 0) return sum;
  const odd = (off & 1) === 1;
  let s = 0;
  let k = off;
  const end = off + len;
  if (odd) {
    // do_csum: result = *buff << 8 (little-endian), then the rest from an even address.
    s += u8[k] << 8;
    k++;
  }
  // Up to a 4-byte boundary, 16 bits at a time.
  while ((k & 3) !== 0 && k + 1 < end) {
    s += u8[k] | (u8[k + 1] << 8);
    k += 2;
  }
  const words = (end - k) >> 2;
  if ((k & 3) === 0 && words > 0) {
    s += csumWords(i32, k >> 2, words, 0);
    k += words * 4;
  }
  while (k + 1 < end) {
    s += u8[k] | (u8[k + 1] << 8);
    k += 2;
  }
  if (k < end) s += u8[k];
  let r = csumFold16(s);
  if (odd) r = ((r & 0xff) << 8) | (r >>> 8);
  return sum + r;
}

/**
 * recv's copy of payload words `from`..`to` of a packet (payload at word `p` of `i32`) into the
 * user buffer `buf` (a view of the same memory) at message word `o + from`: one copyWithin, then
 * the reader's check at O(1) instead of a pass over every word. The first and last word copied
 * must be message `seq`'s pattern at their positions (catches a wrong message, offset, order,
 * a duplicate or a short copy; a word corrupted inside a chunk is the software checksum's to
 * catch, as in the kernel). Returns `sum` plus the chunk's pattern sum (so whole messages add
 * up to patternSum), or NaN once a check failed (NaN never equals patternSum).
 * Context: the reading task; never allocates.
 */
export function copyOut(
  i32: Int32Array,
  buf: Int32Array,
  p: number,
  o: number,
  from: number,
  to: number,
  seq: number,
  sum: number,
): number {
  const n = to - from;
  if (n <= 0 || Number.isNaN(sum)) return sum;
  const dst = ((buf.byteOffset - i32.byteOffset) >> 2) + o + from;
  copyWords(i32, dst, p + from, n);
  const g0 = o + from;
  if (buf[g0] !== patternWord(seq, g0) || buf[o + to - 1] !== patternWord(seq, o + to - 1)) return Number.NaN;
  const tri = (((2 * g0 + n - 1) * n) / 2) % 4294967296;
  return (sum + Math.imul(n, Math.imul(seq, PATTERN)) + tri) | 0;
}
