/**
 * The calibration's thread side: what the two calibration threads (workers/calibrate) run, and
 * the small shared region they meet in. The main-thread side is calibrate.ts.
 *
 * Thread A (the measurer) times everything; thread B (the partner) only answers. Both know the
 * schedule from their start-up data (`reps` repetitions of: `warmup + rounds` futex round trips,
 * then `warmup + rounds` hand-off round trips), so no control word is needed. A first warms the
 * same-thread switch path up (unmeasured) while B is still starting. When B has answered its
 * last round it exits; A then measures the single-thread costs alone (timing calibration
 * belongs on one thread at a time).
 *
 * Region legend (Int32 words from 0, one cache line per word or doorbell line, so that PING and
 * PONG, written by different threads, never share a line). The ordering rule is src/shm/layout.ts's: Atomics are sequentially consistent.
 *   line 0  PING     futex word. A: Atomics.store(round number), then Atomics.notify. B: Atomics.load,
 *                    Atomics.wait on the previous round number.
 *   line 1  PONG     futex word. B: Atomics.store(round number) once it has seen that PING, then
 *                    notify. A: Atomics.load, Atomics.wait on the previous round number.
 *   line 2  OWNER    who may run in the hand-off experiment (ROLE_A / ROLE_B), like a CPU's
 *                    CPU_OWNER: written only by the thread that owns it (Atomics.store, handing
 *                    over), read by both (Atomics.load). Starts as ROLE_A.
 *   lines 3–4  BELL_A  A's Doorbell (src/shm/doorbell.ts, its legend there); B rings it.
 *   lines 5–6  BELL_B  B's Doorbell; A rings it.
 */

import type { Histogram } from 'hdr-histogram-js';
import { initClock, newEpoch, nowNs } from '../clock.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { LINE_WORDS } from '../shm/layout.js';

const PING = 0;
const PONG = LINE_WORDS;
const OWNER = 2 * LINE_WORDS;
const BELL_A = 3 * LINE_WORDS;
const BELL_B = BELL_A + DOORBELL_WORDS;
/** Int32 words of the calibration region. */
export const CALIBRATION_WORDS = BELL_B + DOORBELL_WORDS;

export const ROLE_A = 0;
export const ROLE_B = 1;

/** What the two threads start with. */
export interface CalibrationWorkerData {
  sab: SharedArrayBuffer;
  /** The histograms' WASM module, inflated once (trace.ts histogramWasmBytes); read-only. */
  histogramWasm?: SharedArrayBuffer;
  role: typeof ROLE_A | typeof ROLE_B;
  /** Repetitions of each experiment; the block reports medians over them. */
  reps: number;
  /** Measured round trips per repetition. */
  rounds: number;
  /** Unmeasured round trips before each repetition's measured ones. */
  warmup: number;
  /** Short batches of each single-thread measurement; the block reports the median batch. */
  batches: number;
  /** Calls per batch of the clock read and the histogram record. */
  batchCalls: number;
  /** Same-thread switch cycles (two switches each) per batch. */
  batchCycles: number;
  /** Unmeasured same-thread switch cycles first: V8 takes thousands to optimise the scheduler's path. */
  switchWarmupCycles: number;
  /** The run's switch floor (--switch-cost; 0: none): the switch is measured with it charged too. */
  switchFloorNs: number;
}

/**
 * A's figures, ns: per repetition for the futex and hand-off percentiles, per batch (ns per
 * operation) for the single-thread ones. The main thread takes medians (calibrate.ts).
 */
export interface CalibrationSamples {
  futexP50: number[];
  futexP99: number[];
  handoffP50: number[];
  handoffP99: number[];
  sameThreadSwitch: number[];
  /** The same switch with the run's floor charged (src/machine/switch-floor.ts); empty without one. */
  sameThreadSwitchCharged: number[];
  clockRead: number[];
  histRecord: number[];
  /** Whether the histogram timed was the WASM build (false: the JS fallback). */
  histWasm: boolean;
}

/** The one message each thread posts, when it is done (B's carries no samples). */
export interface CalibrationDone {
  type: 'done';
  samples: CalibrationSamples | undefined;
}

/** Lay out a fresh region. Context: main thread, before the threads start. */
export function initCalibrationRegion(i32: Int32Array): void {
  i32.fill(0, 0, CALIBRATION_WORDS);
  i32[OWNER] = ROLE_A;
  Doorbell.init(i32, BELL_A);
  Doorbell.init(i32, BELL_B);
}

/** The `p`-quantile (0..1) of the first `n` values of `xs` (sorted in place), nearest rank. */
export function quantileInPlace(xs: Float64Array, n: number, p: number): number {
  const s = xs.subarray(0, n).sort();
  return s[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))];
}

/** The thread entry's body for either role. Returns A's samples; B returns undefined. */
export async function runCalibrationThread(d: CalibrationWorkerData): Promise<CalibrationSamples | undefined> {
  initClock(newEpoch());
  const i32 = new Int32Array(d.sab);
  const bellA = new Doorbell(i32, BELL_A, 'if-idle');
  const bellB = new Doorbell(i32, BELL_B, 'if-idle');
  if (d.role === ROLE_B) {
    partner(i32, d, bellA, bellB);
    return undefined;
  }
  // The histograms' and the kernel's code are loaded only here (B needs neither, and starts
  // sooner without), before anything is timed.
  const { initHistograms, newHistogram } = await import('../hw/trace.js');
  const wasm = await initHistograms(d.histogramWasm); // before any histogram is built (the Runtime's tracer too)
  const { sameThreadSwitcher } = await import('./calibrate-switch.js');
  // The same-thread switch's warm-up (unmeasured, the longest part) runs while B starts.
  const sw = sameThreadSwitcher();
  sw(d.switchWarmupCycles);
  const out: CalibrationSamples = {
    futexP50: [],
    futexP99: [],
    handoffP50: [],
    handoffP99: [],
    sameThreadSwitch: [],
    sameThreadSwitchCharged: [],
    clockRead: [],
    histRecord: [],
    histWasm: wasm,
  };
  const oneWay = new Float64Array(d.rounds);
  let seq = 0;
  for (let r = 0; r < d.reps; r++) {
    seq = futexRounds(i32, d, oneWay, seq);
    out.futexP50.push(quantileInPlace(oneWay, d.rounds, 0.5));
    out.futexP99.push(quantileInPlace(oneWay, d.rounds, 0.99));
    handoffRounds(i32, d, oneWay, bellA, bellB);
    out.handoffP50.push(quantileInPlace(oneWay, d.rounds, 0.5));
    out.handoffP99.push(quantileInPlace(oneWay, d.rounds, 0.99));
  }
  // Single-thread costs in many short batches (tens of µs each): a batch the host preempted
  // lands in the tail, not at the median. Each is warmed up first, unmeasured (the switch above),
  // as a trial's warm-up warms the machine's paths.
  for (let r = 0; r < d.batches; r++) out.sameThreadSwitch.push(sw(d.batchCycles));
  if (d.switchFloorNs > 0) {
    // The switch as a run with --switch-cost makes it: the same path, the floor spun out.
    const charged = sameThreadSwitcher(d.switchFloorNs);
    // A tenth of the warm-up: the path is the one just warmed above (V8 optimised it), on a
    // second Runtime whose own objects only need their inline caches filled.
    charged(d.switchWarmupCycles / 10);
    for (let r = 0; r < d.batches; r++) out.sameThreadSwitchCharged.push(charged(d.batchCycles));
  }
  clockReadNs(10 * d.batchCalls);
  for (let r = 0; r < d.batches; r++) out.clockRead.push(clockReadNs(d.batchCalls));
  const h = newHistogram();
  histRecordNs(h, 10 * d.batchCalls);
  for (let r = 0; r < d.batches; r++) out.histRecord.push(histRecordNs(h, d.batchCalls));
  h.destroy();
  return out;
}

/**
 * (a) Host futex wake: A stores PING and notifies, B wakes, stores PONG and notifies, A wakes.
 * Both sleep in Atomics.wait every round, so a round trip is two futex wakes; one-way = half.
 * Fills `oneWay` with the measured rounds (ns). Returns the last round number used.
 */
function futexRounds(i32: Int32Array, d: CalibrationWorkerData, oneWay: Float64Array, seq: number): number {
  for (let i = 0; i < d.warmup + d.rounds; i++) {
    const n = ++seq;
    const t0 = nowNs();
    Atomics.store(i32, PING, n); // pairs with B's Atomics.load(PING)
    Atomics.notify(i32, PING, 1);
    while (Atomics.load(i32, PONG) !== n) Atomics.wait(i32, PONG, n - 1);
    const t1 = nowNs();
    if (i >= d.warmup) oneWay[i - d.warmup] = (t1 - t0) / 2;
  }
  return seq;
}

/**
 * (b) Cross-thread hand-off as the machine does it (Runtime.switchTo, runThreadLoop): the owner
 * stores the other thread in OWNER and rings its Doorbell; the other thread, asleep through
 * prepare / re-check / sleep, finds itself owner and hands back the same way. One-way = half.
 */
function handoffRounds(
  i32: Int32Array,
  d: CalibrationWorkerData,
  oneWay: Float64Array,
  bellA: Doorbell,
  bellB: Doorbell,
): void {
  for (let i = 0; i < d.warmup + d.rounds; i++) {
    const t0 = nowNs();
    Atomics.store(i32, OWNER, ROLE_B); // publishes the hand-over; pairs with B's load in waitOwner
    bellB.ring();
    waitOwner(i32, ROLE_A, bellA);
    const t1 = nowNs();
    if (i >= d.warmup) oneWay[i - d.warmup] = (t1 - t0) / 2;
  }
}

/** Sleep on `bell` until OWNER says `me`: the thread loop's prepare / re-check / sleep. */
function waitOwner(i32: Int32Array, me: number, bell: Doorbell): void {
  for (;;) {
    if (Atomics.load(i32, OWNER) === me) return;
    bell.prepare();
    if (Atomics.load(i32, OWNER) === me) {
      bell.cancel();
      return;
    }
    bell.sleep();
  }
}

/** B: answer A's schedule round for round, then return. */
function partner(i32: Int32Array, d: CalibrationWorkerData, bellA: Doorbell, bellB: Doorbell): void {
  let seq = 0;
  for (let r = 0; r < d.reps; r++) {
    for (let i = 0; i < d.warmup + d.rounds; i++) {
      const n = ++seq;
      while (Atomics.load(i32, PING) !== n) Atomics.wait(i32, PING, n - 1);
      Atomics.store(i32, PONG, n); // pairs with A's Atomics.load(PONG)
      Atomics.notify(i32, PONG, 1);
    }
    for (let i = 0; i < d.warmup + d.rounds; i++) {
      waitOwner(i32, ROLE_B, bellB);
      Atomics.store(i32, OWNER, ROLE_A);
      bellA.ring();
    }
  }
}

/** (d) src/clock.ts nowNs(), ns per call over `calls` calls (loop overhead included). */
function clockReadNs(calls: number): number {
  let acc = 0;
  const t0 = nowNs();
  for (let i = 0; i < calls; i++) acc += nowNs();
  const t1 = nowNs();
  // Using the sum keeps V8 from dropping the calls (and checks the clock runs).
  if (!(acc > 0)) throw new Error('calibration: nowNs() read no time');
  return (t1 - t0) / calls;
}

/** (e) One histogram recordValue, ns per call over `calls` calls of spread values. */
function histRecordNs(h: Histogram, calls: number): number {
  const t0 = nowNs();
  for (let i = 0; i < calls; i++) h.recordValue(1000 + (i & 8191));
  const t1 = nowNs();
  if (h.totalCount < calls) throw new Error('calibration: the histogram lost records');
  return (t1 - t0) / calls;
}
