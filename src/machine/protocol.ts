/**
 * Messages between the main thread and the machine's threads, by direction. Hot paths never
 * post: threads post only at start-up, between trials (reports) and on a fault.
 */

import type { MachineRegions } from '../hw/layout.js';
import type { EncodedHistogram, Stage } from '../hw/trace.js';
import type { CompiledStrategies } from '../strategies/compile.js';
import type { MachineOptions } from './options.js';
import type { MachinePlan } from './plan.js';

/** main → worker, as workerData. */
export interface StartupData {
  sab: SharedArrayBuffer;
  regions: MachineRegions;
  plan: MachinePlan;
  opts: MachineOptions;
  threadId: number;
  /** hrtime (ns) of the run's epoch: every thread's clock counts from it. */
  epochNs: number;
  /** The histograms' WASM module, inflated once (trace.ts histogramWasmBytes); read-only. */
  histogramWasm?: SharedArrayBuffer;
  /** The strategies' TypeScript files compiled once by the main thread (strategies/compile.ts). */
  compiled?: CompiledStrategies;
}

/** worker → main. */
export type WorkerMessage =
  | {
      type: 'ready';
      thread: number;
      /** Kernel objects created by each strategy's setup() (one entry per strategy, then the machine's own and the workqueues), by kind and name: must match across threads. */
      objects: string[];
      /** Every kernel object in id order (creation order), as `kind "name"`: the watchdog names a stuck callback by it. */
      objectNames: string[];
      wasm: boolean;
      clockErrorNs: number;
      /** The thread's Linux thread id (host-threads.ts), -1 if unknown: the main thread reads its schedstat (CPU and kthread threads) and never renices it (every machine thread, the irq thread's too). */
      tid?: number;
    }
  | {
      /** A strategy's setup() starts on this thread (index into opts.strategies), or -1: all done. */
      type: 'setup';
      thread: number;
      strategy: number;
    }
  | {
      type: 'report';
      thread: number;
      epoch: number;
      wasm: boolean;
      stages: Partial<Record<Stage, EncodedHistogram>>;
      /** This thread's V8 heap (bytes): what the soak watches for growth. */
      heap: ThreadHeap;
    }
  | {
      type: 'fault';
      thread: number;
      threadName: string;
      message: string;
      stack?: string;
      cpu: number;
      task: string;
      context: string;
      strategy?: string;
      /** 'bad-input': a strategy failed to load or set up (exit 2); 'fault': a run-time failure (exit 1). */
      kind: 'bad-input' | 'fault';
    };

/** One thread's V8 memory (bytes), from v8.getHeapStatistics() and getHeapSpaceStatistics(). */
export interface ThreadHeap {
  /** Live objects. */
  used: number;
  /** Committed to the heap's spaces. */
  total: number;
  /** ArrayBuffers and other memory V8 was told about (external_memory). */
  external: number;
  /** Malloc'd by V8 itself: compiler zones, tables (malloced_memory). */
  malloced: number;
  /** Committed to the code spaces (machine code: grows with every optimisation V8 keeps). */
  code: number;
}
