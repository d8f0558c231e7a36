/**
 * Histograms between threads: a thread's V2 encoding, added straight into the main thread's
 * merge by addEncoded, must give exactly what the library's own decode-and-add gives.
 */
import { createRequire } from 'node:module';
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64, type Histogram } from 'hdr-histogram-js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addEncoded,
  histogramWasmBytes,
  initHistograms,
  newHistogram,
  STAGES,
  St,
  Tracer,
} from '../../src/hw/trace.js';

/** Deterministic values over the whole tracked range, with the edges. */
function values(seed: number, n: number): number[] {
  let x = seed >>> 0;
  const next = () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
  const out = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 99_999_999_999, 100e9];
  for (let i = 0; i < n; i++) out.push(Math.round(10 ** (next() * 11))); // 1 ns .. 100 s, log-uniform
  return out.map((v) => Math.min(v, 100e9));
}

function shape(h: Histogram) {
  const pcts = [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100].map((p) => h.getValueAtPercentile(p));
  return { total: h.totalCount, min: h.minNonZeroValue, max: h.maxValue, mean: h.mean, stddev: h.stdDeviation, pcts };
}

let wasm = false;
const hdrRequire = createRequire(createRequire(import.meta.url).resolve('hdr-histogram-js'));
const pako = hdrRequire('pako') as { inflate: unknown };
const ownInflate = pako.inflate;
beforeAll(async () => {
  // The machine threads' path: the module inflated once, in shared memory.
  wasm = await initHistograms(histogramWasmBytes());
});

describe('initHistograms with the shared, inflated WASM module', () => {
  it('is a WebAssembly module, compiles, starts the WASM build, and leaves pako as it found it', () => {
    const shared = histogramWasmBytes();
    expect(shared).toBeInstanceOf(SharedArrayBuffer);
    expect(histogramWasmBytes(), 'inflated once per process').toBe(shared);
    const bytes = new Uint8Array(shared as SharedArrayBuffer);
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0x61, 0x73, 0x6d]); // "\0asm"
    expect(() => new WebAssembly.Module(bytes.slice())).not.toThrow();
    expect(wasm).toBe(true);
    expect(pako.inflate, 'pako.inflate restored after the start-up').toBe(ownInflate);
    const h = newHistogram(true);
    h.recordValue(1234);
    expect(h.totalCount).toBe(1);
  });
});

describe('addEncoded', () => {
  it('gives what decoding and adding gives (WASM encoder, wide range, edge values)', () => {
    expect(wasm).toBe(true); // the machine threads' path: without WASM this test would not cover it
    for (const seed of [1, 2, 3]) {
      const src = newHistogram(true);
      for (const v of values(seed, 5000)) src.recordValue(v);
      src.recordValueWithCount(12_345, 3e9); // a count beyond 32 bits
      const bytes = (src as unknown as { encode(): Uint8Array }).encode();
      const viaLibrary = newHistogram(false);
      const decoded = decodeFromCompressedBase64(encodeIntoCompressedBase64(src), 64, false);
      viaLibrary.add(decoded);
      const viaBytes = newHistogram(false);
      addEncoded(viaBytes, bytes);
      expect(shape(viaBytes)).toEqual(shape(viaLibrary));
      expect(viaBytes.totalCount).toBe(5012 + 3e9);
      src.destroy();
    }
  });

  it('adds several threads into one merge, as the sum of their counts', () => {
    const a = newHistogram(true);
    const b = newHistogram(true);
    const both = newHistogram(false);
    for (const v of values(7, 2000)) a.recordValue(v);
    for (const v of values(8, 3000)) b.recordValue(v);
    for (const h of [a, b]) both.add(decodeFromCompressedBase64(encodeIntoCompressedBase64(h), 64, false));
    const merged = newHistogram(false);
    addEncoded(merged, (a as unknown as { encode(): Uint8Array }).encode());
    addEncoded(merged, (b as unknown as { encode(): Uint8Array }).encode());
    expect(shape(merged)).toEqual(shape(both));
  });

  it('takes the JS fallback compressed base64 string too', () => {
    const js = build({
      bitBucketSize: 64,
      lowestDiscernibleValue: 1,
      highestTrackableValue: 100e9,
      numberOfSignificantValueDigits: 3,
    });
    for (const v of values(9, 1000)) js.recordValue(v);
    const merged = newHistogram(false);
    const b64 = encodeIntoCompressedBase64(js);
    addEncoded(merged, b64);
    const viaLibrary = newHistogram(false);
    viaLibrary.add(decodeFromCompressedBase64(b64, 64, false));
    expect(shape(merged)).toEqual(shape(viaLibrary));
    expect(merged.totalCount).toBe(js.totalCount);
  });

  it('refuses bytes that are not a V2 encoding, or are cut short', () => {
    const merged = newHistogram(false);
    expect(() => addEncoded(merged, new Uint8Array(64))).toThrow(/not an HdrHistogram V2 encoding/);
    const h = newHistogram(true);
    for (const v of values(10, 100)) h.recordValue(v);
    const bytes = (h as unknown as { encode(): Uint8Array }).encode();
    expect(() => addEncoded(merged, bytes.subarray(0, bytes.length - 5))).toThrow(/cut short/);
  });
});

describe('Tracer.drain', () => {
  it('sends only the stages recorded since the last drain, as bytes, and starts afresh', () => {
    const t = new Tracer(true);
    t.on = true;
    t.record(St.OneWay, 5_000);
    t.record(St.OneWay, 7_000);
    t.record(St.Work, 2_000_000);
    const first = t.drain();
    expect(Object.keys(first.stages).sort()).toEqual(['one_way', 'work']);
    expect(first.stages.one_way).toBeInstanceOf(Uint8Array);
    const m = newHistogram(false);
    addEncoded(m, first.stages.one_way as Uint8Array);
    expect(m.totalCount).toBe(2);
    expect(t.drain().stages).toEqual({});
    t.record(St.Softirq, 1);
    expect(Object.keys(t.drain().stages)).toEqual([STAGES[St.Softirq]]);
  });
});
