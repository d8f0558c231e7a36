/**
 * The software checksum pass (csum_partial over a packet's payload) in WebAssembly SIMD: 16 bytes
 * a step, each 32-bit lane widened to 64 bits and added (i64x2.extend_{low,high}_i32x4_u,
 * i64x2.add), the way arch/x86/lib/csum-partial_64.c adds 64-bit words with carry. Issue 25: the
 * plain JavaScript loop ran ~8x C csum_partial here, this ~1-3x (bench:scale).
 *
 * The module is 130 bytes written out below (no toolchain): one exported shared memory of two
 * 64 KiB pages and `csum(p, n)`, the sum of the n bytes (n a multiple of 16) at p as unsigned
 * 32-bit words, returned as a double (exact: at most 2^14 words of 2^32). WebAssembly cannot
 * address the machine's SharedArrayBuffer, so the payload is first copied into the module's
 * memory with TypedArray.prototype.set (a memmove); a shared memory, because V8 copies between
 * two shared buffers several times faster than from a shared buffer into an unshared one
 * (measured here: ~0.1 against ~0.25 ns/B).
 *
 * Context: one instance per thread (a Nic's); never allocates after the first packet of each
 * length in each ring slot (the view is cached).
 */
import { csumWords } from './packet.js';

/** Below this many words (256 B) the JavaScript loop is faster than the copy and the call. */
export const WASM_MIN_WORDS = 64;

/** The most payload views one engine caches before it starts again. */
export const MAX_VIEWS = 4096;

/** Words the module's memory holds: 128 KiB. IPoIB CM's largest payload (65520 B) fits. */
export const WASM_CSUM_MAX_WORDS = 32768;

// biome-ignore format: the function body reads best one instruction a line
const BODY = [
  0x02, 0x01, 0x7f, 0x02, 0x7b,       // locals: end i32, acc v128, tmp v128
  0x20, 0x00, 0x20, 0x01, 0x6a, 0x21, 0x02, // end = p + n
  0x02, 0x40,                         // block
  0x20, 0x00, 0x20, 0x02, 0x4f, 0x0d, 0x00, //   br_if 0 (p >= end)
  0x03, 0x40,                         //   loop
  0x20, 0x03,                         //     acc
  0x20, 0x00, 0xfd, 0x00, 0x04, 0x00, //     v128.load p (align 16)
  0x22, 0x04,                         //     local.tee tmp
  0xfd, 0xc9, 0x01,                   //     i64x2.extend_low_i32x4_u
  0xfd, 0xce, 0x01,                   //     i64x2.add
  0x20, 0x04,                         //     tmp
  0xfd, 0xca, 0x01,                   //     i64x2.extend_high_i32x4_u
  0xfd, 0xce, 0x01,                   //     i64x2.add
  0x21, 0x03,                         //     local.set acc
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x22, 0x00, // p += 16
  0x20, 0x02, 0x49, 0x0d, 0x00,       //     br_if 0 (p < end)
  0x0b, 0x0b,                         //   end loop, end block
  0x20, 0x03, 0xfd, 0x1d, 0x00,       // i64x2.extract_lane 0
  0x20, 0x03, 0xfd, 0x1d, 0x01,       // i64x2.extract_lane 1
  0x7c, 0xba, 0x0b,                   // i64.add, f64.convert_i64_u, end
];

const section = (id: number, payload: number[]): number[] => [id, payload.length, ...payload];

/** The module's bytes. */
// biome-ignore format: one section a line
export const CSUM_WASM = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7c]), // type: (i32, i32) -> f64
  ...section(3, [0x01, 0x00]), // one function of type 0
  ...section(5, [0x01, 0x03, 0x02, 0x02]), // memory: shared, 2 pages, max 2
  ...section(7, [0x02, 0x01, 0x6d, 0x02, 0x00, 0x04, 0x63, 0x73, 0x75, 0x6d, 0x00, 0x00]), // "m", "csum"
  ...section(10, [0x01, BODY.length, ...BODY]),
]);

/** The part of the WebAssembly JS API used here (the project's lib settings do not declare it). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object) => { exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let module: object | null | undefined;

/** The compiled module, or null where this runtime lacks WebAssembly SIMD or threads. */
function compiled(): object | null {
  if (module === undefined) {
    try {
      module = WA?.validate(CSUM_WASM) ? new WA.Module(CSUM_WASM) : null;
    } catch {
      module = null;
    }
  }
  return module ?? null;
}

/** One thread's checksum engine: WebAssembly where it runs, csumWords otherwise. */
export class WasmCsum {
  /** Whether the WebAssembly path is in use. */
  readonly wasm: boolean;
  private readonly mem: Int32Array;
  private readonly fn: (p: number, n: number) => number;
  /** Views of ring slots' payloads, by start word and length (a run's packets come in a few
   *  lengths, so slots × lengths; cleared at MAX_VIEWS, so bounded whatever the lengths). */
  private readonly views = new Map<number, Int32Array>();

  constructor() {
    const m = compiled();
    if (m && WA) {
      const inst = new WA.Instance(m);
      const ex = inst.exports as { m: { buffer: SharedArrayBuffer }; csum: (p: number, n: number) => number };
      this.mem = new Int32Array(ex.m.buffer);
      this.fn = ex.csum;
      this.wasm = true;
    } else {
      this.mem = new Int32Array(0);
      this.fn = () => 0;
      this.wasm = false;
    }
  }

  /** The module's memory, the copy of the last payload summed there (read by tests). */
  get memory(): Int32Array {
    return this.mem;
  }

  /** Payload views cached (bounded by MAX_VIEWS; read by tests). */
  get cachedViews(): number {
    return this.views.size;
  }

  /**
   * The checksum accumulator (as csumWords returns) of `n` words at `p` of `i32`, a payload in a
   * slot of `cap` words. Only the payload's own words are copied: copying the whole slot (as
   * this once did, so that one view served every packet of a slot) cost a 64 B packet in a
   * 64 KiB IPoIB CM slot 2.5-5 µs warm and ~20 µs in a run, and made the default comparison's
   * p50 5 -> 23 µs. A payload shorter than WASM_MIN_WORDS is summed in JavaScript, which is
   * faster there than the copy and the call (measured here, warm: 16 B 18 against 36 ns, 64 B 29
   * against 59 ns; from 256 B the module wins, 34 against 99 ns, and 64 KiB 5.9 against 12.6 µs).
   */
  words(i32: Int32Array, p: number, n: number, cap: number): number {
    if (!this.wasm || n < WASM_MIN_WORDS || cap > WASM_CSUM_MAX_WORDS || n > cap) return csumWords(i32, p, n, 0);
    const n4 = n & ~3;
    const key = p * (WASM_CSUM_MAX_WORDS + 1) + n4;
    let v = this.views.get(key);
    if (v === undefined || v.buffer !== i32.buffer) {
      if (this.views.size >= MAX_VIEWS) this.views.clear();
      v = i32.subarray(p, p + n4);
      this.views.set(key, v);
    }
    this.mem.set(v);
    let s = this.fn(0, n4 * 4);
    for (let k = n4; k < n; k++) s += i32[p + k] >>> 0;
    return s;
  }
}
