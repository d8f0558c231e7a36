import { describe, expect, it } from 'vitest';
import { CSUM_WASM, MAX_VIEWS, WASM_MIN_WORDS, WasmCsum } from '../../src/net/csum-wasm.js';
import {
  copyOut,
  csumFold16,
  csumFold32,
  csumPartial,
  csumWords,
  fillPayload,
  patternSum,
  patternWord,
  writeHeader,
} from '../../src/net/packet.js';

/** RFC 1071's checksum (before the complement) the slow way: 16-bit little-endian pairs from `off`, an odd last byte as the low byte, end-around carry. */
function reference(u8: Uint8Array, off: number, len: number): number {
  let s = 0;
  let k = off;
  for (; k + 1 < off + len; k += 2) s += u8[k] | (u8[k + 1] << 8);
  if (k < off + len) s += u8[k];
  while (s > 0xffff) s = (s & 0xffff) + Math.floor(s / 65536);
  return s;
}

/** A deterministic generator (xorshift32), so a failure reproduces. */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

function buffer(bytes: number, fill: (k: number) => number): { u8: Uint8Array; i32: Int32Array } {
  const sab = new SharedArrayBuffer(bytes);
  const u8 = new Uint8Array(sab);
  for (let k = 0; k < bytes; k++) u8[k] = fill(k);
  return { u8, i32: new Int32Array(sab) };
}

describe('csum_partial in JavaScript', () => {
  it('equals the reference on random data at every offset 0..7 and odd, even and edge lengths', () => {
    const r = rng(25);
    const { u8, i32 } = buffer(4096, () => r() & 0xff);
    const lengths = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 39, 40, 41, 63, 64, 65, 79, 80, 81, 1499, 1500, 2047, 4000];
    for (let off = 0; off < 8; off++) {
      for (const len of lengths) {
        expect([off, len, csumFold16(csumPartial(u8, i32, off, len, 0))]).toEqual([off, len, reference(u8, off, len)]);
      }
    }
    for (let t = 0; t < 500; t++) {
      const off = r() % 2048;
      const len = r() % 2048;
      expect(csumFold16(csumPartial(u8, i32, off, len, 0))).toBe(reference(u8, off, len));
    }
  });

  it('carries: all-ones and near-overflow words fold with end-around carry', () => {
    for (const byte of [0xff, 0xfe, 0x80, 0x01]) {
      const { u8, i32 } = buffer(70000, () => byte);
      for (const [off, len] of [
        [0, 65520],
        [1, 65519],
        [3, 1001],
        [2, 69998],
      ]) {
        expect(csumFold16(csumPartial(u8, i32, off, len, 0))).toBe(reference(u8, off, len));
      }
      expect(csumFold16(csumWords(i32, 0, 16380, 0))).toBe(reference(u8, 0, 65520));
    }
  });

  it('an accumulator passed in is added (csum_partial(buff, len, sum))', () => {
    const r = rng(7);
    const { u8, i32 } = buffer(1024, () => r() & 0xff);
    const whole = csumFold16(csumPartial(u8, i32, 0, 1024, 0));
    const split = csumFold16(csumPartial(u8, i32, 512, 512, csumPartial(u8, i32, 0, 512, 0)));
    expect(split).toBe(whole);
    expect(csumFold16(csumWords(i32, 128, 128, csumWords(i32, 0, 128, 0)))).toBe(whole);
  });

  it('csumFold32 keeps the sum modulo 0xffffffff (what the 16-bit fold needs)', () => {
    for (const s of [0, 1, 0xffffffff, 0x100000000, 0x1fffffffe, 2 ** 50 + 12345]) {
      expect((csumFold32(s) >>> 0) % 0xffff).toBe(s % 0xffff);
    }
  });
});

describe('csum_partial in WebAssembly SIMD', () => {
  it('validates and runs here (Node 20 has SIMD and shared memories)', () => {
    expect(WebAssembly.validate(CSUM_WASM)).toBe(true);
    expect(new WasmCsum().wasm).toBe(true);
  });

  it('equals csumWords for every length 0..67 words and for full slots, with cached views reused', () => {
    const r = rng(99);
    const cap = 16380; // IPoIB CM's 65520-byte payload
    const { u8, i32 } = buffer(4 * (cap + 64), () => r() & 0xff);
    const w = new WasmCsum();
    for (let n = 0; n < 68; n++) expect(w.words(i32, 16, n, cap)).toBe(csumWords(i32, 16, n, 0));
    for (let t = 0; t < 20; t++) {
      // New contents in the same slot: the cached view must not serve stale bytes.
      for (let k = 64; k < u8.length; k++) u8[k] = r() & 0xff;
      const n = t % 2 === 0 ? cap : r() % cap;
      expect(w.words(i32, 16, n, cap)).toBe(csumWords(i32, 16, n, 0));
      expect(csumFold16(w.words(i32, 16, n, cap))).toBe(reference(u8, 64, 4 * n));
    }
    // All ones: the widest lanes (no 64-bit lane can overflow at 2^14 words).
    i32.fill(-1);
    expect(w.words(i32, 0, cap, cap)).toBe(cap * 0xffffffff);
  });

  it("copies only a short packet's own words into the module, not its whole slot", () => {
    const cap = 16380;
    const { i32 } = buffer(4 * (cap + 64), () => 7);
    const w = new WasmCsum();
    w.memory.fill(-5);
    const n = WASM_MIN_WORDS + 9; // summed by the module, its last 1 word in JavaScript
    expect(w.words(i32, 16, n, cap)).toBe(csumWords(i32, 16, n, 0));
    const n4 = n & ~3;
    expect(w.memory[n4 - 1]).toBe(0x07070707);
    expect(w.memory[n4]).toBe(-5); // a whole-slot copy would have written 0x07070707 here
    expect(w.memory[cap - 1]).toBe(-5);
  });

  it('sums short payloads in JavaScript and keeps its cache of views bounded', () => {
    const r = rng(5);
    const cap = 16380;
    const { i32 } = buffer(4 * (cap + 64), () => r() & 0xff);
    const w = new WasmCsum();
    w.memory.fill(-5);
    expect(w.words(i32, 16, WASM_MIN_WORDS - 1, cap)).toBe(csumWords(i32, 16, WASM_MIN_WORDS - 1, 0));
    expect(w.memory[0]).toBe(-5);
    expect(w.cachedViews).toBe(0);
    for (let k = 0; k < MAX_VIEWS + 50; k++) {
      const p = 16 + (k % 40);
      const n = WASM_MIN_WORDS + 4 * Math.floor(k / 40);
      expect(w.words(i32, p, n, cap)).toBe(csumWords(i32, p, n, 0));
    }
    expect(w.cachedViews).toBeGreaterThan(0);
    expect(w.cachedViews).toBeLessThanOrEqual(MAX_VIEWS);
  });
});

describe("recv's copy (copyOut)", () => {
  it('copies a message packet by packet and adds up to patternSum; other memory untouched', () => {
    const words = 1000;
    const pw = 300;
    const i32 = new Int32Array(new SharedArrayBuffer(4 * (8 + pw + words + 16)));
    const buf = i32.subarray(8 + pw + 8, 8 + pw + 8 + words);
    i32[i32.length - 1] = 12345;
    let sum = 0;
    for (let off = 0; off < words; off += pw) {
      const n = writeHeader(i32, 0, 42, off, pw, words, words * 4);
      fillPayload(i32, 0, 0, n, 0);
      sum = copyOut(i32, buf, 8, off, 0, Math.min(100, n), 42, sum);
      sum = copyOut(i32, buf, 8, off, Math.min(100, n), n, 42, sum);
    }
    expect(sum).toBe(patternSum(42, words));
    for (let g = 0; g < words; g++) expect(buf[g]).toBe(patternWord(42, g));
    expect(i32[i32.length - 1]).toBe(12345);
  });

  it('a packet of another message, or at another offset, makes the sum NaN for good', () => {
    const i32 = new Int32Array(new SharedArrayBuffer(4 * 400));
    const buf = i32.subarray(200, 400);
    writeHeader(i32, 0, 7, 0, 100, 200, 800);
    fillPayload(i32, 0, 0, 100, 0);
    expect(Number.isNaN(copyOut(i32, buf, 8, 0, 0, 100, 8, 0))).toBe(true); // wrong message
    expect(Number.isNaN(copyOut(i32, buf, 8, 100, 0, 100, 7, 0))).toBe(true); // wrong offset
    const good = copyOut(i32, buf, 8, 0, 0, 100, 7, 0);
    expect(Number.isNaN(good)).toBe(false);
    i32[8 + 99] ^= 1; // the last word copied is wrong
    expect(Number.isNaN(copyOut(i32, buf, 8, 0, 0, 100, 7, 0))).toBe(true);
    expect(Number.isNaN(copyOut(i32, buf, 8, 0, 0, 100, 7, Number.NaN))).toBe(true);
  });
});
