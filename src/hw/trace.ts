/**
 * Trace points, recorded into HDR histograms owned by the recording thread.
 *
 * Like the kernel's tracepoints: each stage is a fixed point in the code; a thread records
 * integer nanoseconds into its own histogram for that stage (no sharing, no locks), and the
 * main thread merges the threads' histograms after each trial. Recording is on only during
 * the Measure phase and when tracing is enabled; when off, `record` is one branch.
 *
 * hdr-histogram-js's WebAssembly build records in ~19 ns here against 57–81 ns for its JS
 * build, so threads use it when it initialises, and fall back to JS otherwise.
 *
 * Between trials each thread sends its histograms in HdrHistogram's V2 encoding, uncompressed
 * (zig-zag LEB128 counts, runs of zeros folded: a few KiB), and the main thread adds the counts
 * straight into its merge (`addEncoded`), building no histogram per thread. The library's
 * compressed form would run zlib in every thread and build a 224 KiB counts array per thread and
 * stage on the main thread, every trial: ~20 MiB of malloc churn a trial that fragmented the
 * allocator and made a 10-minute soak's RSS creep (bench/soak.ts). The JS fallback has no
 * uncompressed encoder, so it still sends the compressed base64 string.
 */
import { createRequire } from 'node:module';
import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  type Histogram,
  initWebAssemblySync,
  WasmHistogram,
} from 'hdr-histogram-js';

export const STAGES = [
  'one_way', // application one-way latency (round trip / 2, as qperf reports it)
  'irq_entry', // interrupt raised → its handler starts
  'hardirq', // one hard-IRQ handler run (add_interrupt_randomness and the device's own work)
  'handoff_call', // time inside the strategy's hand-off call
  'handoff_to_start', // the handing-off interrupt's handler entry → the deferred mix starts (driver.ts CPUF_HANDOFF_NS)
  'work', // the deferred mix itself (mix_interrupt_randomness)
  'lock_wait', // input_pool.lock wait, when contended
  'ctx_switch', // owner hand-off: outgoing owner lets go → incoming owner runs
  'softirq', // one __do_softirq invocation
  'idle_exit', // a halted (sleeping) idle CPU's lateness in waking for a due interrupt: the emulated idle-exit latency
  'request_to_start', // driver payload: every interrupt's request → the work that serves it starts (pending ones too)
  'net_rx_ksoftirqd_wait', // NET_RX first left to ksoftirqd (irq exit's rule or __do_softirq's wakeup) → ksoftirqd runs it
  'host_stall', // a gap between two preemption points of a running CPU thread above the threshold (src/machine/host-stall.ts)
  'gc', // one V8 garbage collection on a CPU or kthread thread
  'one_way_host', // --host-stalls mark|drop: one_way of the exchanges that overlapped a host stall
  'request_to_start_host', // --host-stalls mark|drop: request_to_start of the requests that overlapped a host stall
  'kick_wake', // a halted idle CPU woken by another thread's ring (a remote wake-up, an IPI, a NIC's kick) → its thread runs again: the host's futex wake-up
  'wakeup_to_run', // a task woken (try_to_wake_up) → it runs: the run-queue latency after a wake-up (runqlat's)
  'wake_to_kick', // a task woken onto a halted CPU: try_to_wake_up → the ring that ends the halt (src/machine/kick-parts.ts)
  'kick_to_run', // the same: the halted CPU's thread runs again → the woken task runs (the emulated idle exit, schedule, switch)
] as const;
export type Stage = (typeof STAGES)[number];
export enum St {
  OneWay = 0,
  IrqEntry = 1,
  Hardirq = 2,
  HandoffCall = 3,
  HandoffToStart = 4,
  Work = 5,
  LockWait = 6,
  CtxSwitch = 7,
  Softirq = 8,
  IdleExit = 9,
  RequestToStart = 10,
  NetRxKsoftirqdWait = 11,
  HostStall = 12,
  Gc = 13,
  OneWayHost = 14,
  RequestToStartHost = 15,
  KickWake = 16,
  WakeupToRun = 17,
  WakeToKick = 18,
  KickToRun = 19,
}

/** Largest value tracked without resizing: 100 s in ns. */
const HIGHEST_NS = 100e9;

let wasmReady: boolean | undefined;

/**
 * The pako and base64-js modules hdr-histogram-js itself loads (resolved from its own directory,
 * so they are the very instances its WASM start-up calls).
 */
function hdrDeps(): {
  pako: { inflate: (b: Uint8Array) => Uint8Array };
  base64: { toByteArray: (s: string) => Uint8Array };
  binary: string;
} {
  const req = createRequire(createRequire(import.meta.url).resolve('hdr-histogram-js'));
  return {
    pako: req('pako'),
    base64: req('base64-js'),
    binary: req('./wasm/generated-wasm').BINARY,
  };
}

let sharedWasm: SharedArrayBuffer | undefined;

/**
 * The WASM build's module bytes, inflated once per process into shared memory, for the threads
 * a machine (or the calibration) starts: {@link initHistograms} then skips its own inflate.
 * hdr-histogram-js ships its module base64-encoded and deflated, and inflating it cost each thread
 * ~25 ms of CPU (more on a loaded host; a machine starts up to a dozen). Undefined when the
 * bytes cannot be had this way (the thread then inflates them itself). Context: main thread.
 */
export function histogramWasmBytes(): SharedArrayBuffer | undefined {
  if (sharedWasm) return sharedWasm;
  try {
    const { pako, base64, binary } = hdrDeps();
    const bytes = pako.inflate(base64.toByteArray(binary));
    sharedWasm = new SharedArrayBuffer(bytes.length);
    new Uint8Array(sharedWasm).set(bytes);
  } catch {
    sharedWasm = undefined;
  }
  return sharedWasm;
}

/**
 * Initialise the WASM build once per thread; false when it is unavailable. Synchronous start-up
 * (initWebAssemblySync): the asynchronous one asks whether its argument is a fetch `Response`,
 * and reading that global loads Node's whole fetch implementation (undici) into the thread, ~30 ms
 * of CPU. With `inflated` (from {@link histogramWasmBytes}) the module's bytes are not inflated
 * again here: pako.inflate is swapped for the call, then restored.
 */
export async function initHistograms(inflated?: SharedArrayBuffer): Promise<boolean> {
  if (wasmReady !== undefined) return wasmReady;
  let restore = () => {};
  try {
    if (inflated) {
      try {
        const { pako } = hdrDeps();
        const own = pako.inflate;
        // WebAssembly.Module compiles from a view of shared memory; no private copy (a 160 KiB
        // block freed later would raise glibc's mmap threshold: MIN_SHM_BYTES, src/shm/layout.ts).
        const bytes = new Uint8Array(inflated);
        pako.inflate = () => bytes;
        restore = () => {
          pako.inflate = own;
        };
      } catch {
        // not resolvable this way: initWebAssemblySync inflates the module itself
      }
    }
    initWebAssemblySync();
    wasmReady = true;
  } catch {
    wasmReady = false;
  } finally {
    restore();
  }
  return wasmReady;
}

export function newHistogram(useWasm = wasmReady === true): Histogram {
  return build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_NS,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: useWasm,
  });
}

export class Tracer {
  /** Recording on (Measure phase and tracing enabled). Set by the thread loop. */
  on = false;
  private readonly h: Histogram[];
  private readonly used: boolean[];

  constructor(readonly enabled: boolean) {
    this.h = STAGES.map(() => newHistogram());
    this.used = STAGES.map(() => false);
  }

  /** Record `ns` for stage `s`. Context: any, on the thread that owns this tracer. No allocation. */
  record(s: St, ns: number): void {
    if (!this.on) return;
    // Clamp into the tracked range (100 s): the histograms do not resize.
    this.h[s].recordValue(ns > 0 ? (ns < HIGHEST_NS ? Math.round(ns) : HIGHEST_NS) : 0);
    this.used[s] = true;
  }

  /** Encode the non-empty histograms and reset them. Context: between trials. */
  drain(): { wasm: boolean; stages: Partial<Record<Stage, EncodedHistogram>> } {
    const out: Partial<Record<Stage, EncodedHistogram>> = {};
    for (let i = 0; i < STAGES.length; i++) {
      if (!this.used[i]) continue;
      const h = this.h[i];
      out[STAGES[i]] = h instanceof WasmHistogram ? h.encode() : encodeIntoCompressedBase64(h);
      h.reset();
      this.used[i] = false;
    }
    return { wasm: wasmReady === true, stages: out };
  }

  /** Drop everything recorded (warm-up). */
  reset(): void {
    for (let i = 0; i < STAGES.length; i++) {
      if (this.used[i]) this.h[i].reset();
      this.used[i] = false;
    }
  }
}

/** A thread's histogram on its way to the main thread: V2-encoded bytes, or (JS fallback) the
 *  library's compressed base64. */
export type EncodedHistogram = Uint8Array | string;

/** HdrHistogram's V2 encoding cookie (the low nibble's bits 4–7 carry the word size). */
const V2_COOKIE_BASE = 0x1c849303;
/** Bytes before the counts: cookie, payload length, normalizing offset, significant digits
 *  (Int32 each), lowest discernible value, highest trackable value, conversion ratio (64 bits each). */
const V2_HEADER_BYTES = 40;

/**
 * Add the counts of an encoded histogram into `into` (the same as `into.add(decoded)`, without
 * building the decoded histogram). Context: main thread, between trials.
 *
 * The V2 payload is a run of zig-zag LEB128 words (at most 9 bytes each): a positive word is the
 * count at the next index, a negative one skips that many empty indexes. Each count is recorded
 * at its index's lowest value, except the highest index's, which is recorded at that index's
 * highest value: the minimum and maximum come out as the library's decode-and-add gives them.
 * The layout is rebuilt from the header exactly as HdrHistogram builds it.
 */
export function addEncoded(into: Histogram, encoded: EncodedHistogram): void {
  if (typeof encoded === 'string') {
    const h = decodeFromCompressedBase64(encoded, 64, false);
    into.add(h);
    h.destroy();
    return;
  }
  const dv = new DataView(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  if (encoded.byteLength < V2_HEADER_BYTES || (dv.getInt32(0) & ~0xf0) !== V2_COOKIE_BASE)
    throw new Error('addEncoded: not an HdrHistogram V2 encoding (bad cookie)');
  const payload = dv.getInt32(4);
  const digits = dv.getInt32(12);
  const lowest = Number(dv.getBigInt64(16));
  if (V2_HEADER_BYTES + payload > encoded.byteLength) throw new Error('addEncoded: encoding cut short');
  const unitMagnitude = Math.floor(Math.log2(lowest));
  const subBucketCountMagnitude = Math.ceil(Math.log2(2 * 10 ** digits));
  const halfMagnitude = Math.max(subBucketCountMagnitude, 1) - 1;
  const half = 2 ** halfMagnitude;
  let pos = V2_HEADER_BYTES;
  const end = V2_HEADER_BYTES + payload;
  let index = 0;
  // The last non-empty index seen is held back: only at the end is it known to be the highest.
  let heldIndex = -1;
  let heldCount = 0;
  /** HdrHistogram's valueFromIndex; `top`: the highest value of that index instead. */
  const valueAt = (i: number, top: boolean): number => {
    let bucket = Math.floor(i / half) - 1;
    let sub = (i % half) + half;
    if (bucket < 0) {
      sub -= half;
      bucket = 0;
    }
    const unit = 2 ** (bucket + unitMagnitude);
    return sub * unit + (top ? unit - 1 : 0);
  };
  while (pos < end) {
    // One zig-zag LEB128 word: 7 bits a byte, the 9th byte gives all 8 of its bits.
    let word = 0;
    let scale = 1;
    for (let k = 0; k < 9; k++) {
      const b = encoded[pos++];
      if (k === 8) {
        word += b * scale;
        break;
      }
      word += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) break;
    }
    const value = word % 2 === 0 ? word / 2 : -(word + 1) / 2;
    if (value < 0) {
      index -= value;
      continue;
    }
    if (value > 0) {
      if (heldIndex >= 0) into.recordValueWithCount(valueAt(heldIndex, false), heldCount);
      heldIndex = index;
      heldCount = value;
    }
    index++;
  }
  if (heldIndex >= 0) into.recordValueWithCount(valueAt(heldIndex, true), heldCount);
}
