/**
 * Trace points, recorded into HDR histograms owned by the recording thread.
 *
 * Like the kernel's tracepoints: each stage is a fixed point in the code; a thread records
 * integer nanoseconds into its own histogram for that stage (no sharing, no locks), and the
 * main thread merges the threads' histograms after each trial. Recording is on only during
 * the Measure phase and when tracing is enabled; when off, `record` is one branch.
 *
 * hdr-histogram-js's WebAssembly build records in ~19 ns here against 57–81 ns for its JS
 * build, so threads use it when it initialises, and fall back to JS otherwise. The main
 * thread decodes each thread's histogram with the same flag it was encoded with.
 */
import { build, encodeIntoCompressedBase64, type Histogram, initWebAssembly } from 'hdr-histogram-js';

export const STAGES = [
  'one_way', // application one-way latency (round trip / 2, as qperf reports it)
  'irq_entry', // interrupt raised → its handler starts
  'hardirq', // one hard-IRQ handler run (add_interrupt_randomness and the device's own work)
  'handoff_call', // time inside the strategy's hand-off call
  'handoff_to_start', // hand-off → the deferred mix starts (workqueue_queue_work → execute_start)
  'work', // the deferred mix itself (mix_interrupt_randomness)
  'lock_wait', // input_pool.lock wait, when contended
  'ctx_switch', // owner hand-off: outgoing owner lets go → incoming owner runs
  'softirq', // one __do_softirq invocation
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
}

/** Largest value tracked without resizing: 100 s in ns. */
const HIGHEST_NS = 100e9;

let wasmReady: boolean | undefined;

/** Initialise the WASM build once per thread; false when it is unavailable. */
export async function initHistograms(): Promise<boolean> {
  if (wasmReady !== undefined) return wasmReady;
  try {
    await initWebAssembly();
    wasmReady = true;
  } catch {
    wasmReady = false;
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
  drain(): { wasm: boolean; stages: Partial<Record<Stage, string>> } {
    const out: Partial<Record<Stage, string>> = {};
    for (let i = 0; i < STAGES.length; i++) {
      if (!this.used[i]) continue;
      out[STAGES[i]] = encodeIntoCompressedBase64(this.h[i]);
      this.h[i].reset();
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
