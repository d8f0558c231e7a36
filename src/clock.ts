/**
 * The one clock every thread reads: monotonic nanoseconds since the run's epoch, as a double.
 *
 * `performance.now()` is the cheapest clock here (~35 ns a call, against ~45 ns for
 * `Number(process.hrtime.bigint())`), but each environment may have its own time origin: Node
 * 20 happens to give workers the main thread's `timeOrigin`, a later Node may not. So each
 * thread calibrates once at start-up against `process.hrtime.bigint()`, which is the process's
 * CLOCK_MONOTONIC and the same in every thread: offset = hrtime − performance.now(), taken as
 * the minimum over a few back-to-back pairs (the pair whose two reads were closest). Readings
 * from two threads can then be subtracted; the calibration error is reported by
 * {@link clockCalibrationErrorNs} and checked at machine start.
 *
 * Values stay far below 2^53 ns (104 days), so doubles hold them exactly enough (sub-ns).
 *
 * Time dilation (`--tdf`, docs/architecture.md "Time dilation"): the clock read here is the
 * emulated machine's, `emulated ns = host ns / TDF` since the epoch. Every thread of a machine
 * calls {@link initClock} with the same epoch and the same TDF, so every device model (wire,
 * moderation, ticks, the interrupt generator, a replayed trace) and every reported time runs in
 * emulated time. Two things are not emulated time: a wait handed to the host (Atomics.wait's
 * timeout, setTimeout) takes host ms, converted by {@link hostWaitMs}; safety limits (the
 * watchdog, boot and collect timeouts) read the host's clock ({@link hostNowNs}, Date.now()).
 * TDF 1 (the default) is the undilated clock: the multiply by 1 is exact.
 */

/** hrtime (ns) of the run's epoch; set by {@link initClock} in every thread from the same value. */
let epochNs = 0;
/** performance.now()*1e6 + offsetNs = hrtime ns. */
let offsetNs = 0;
/** Width (ns) of the tightest calibration pair: an upper bound on this thread's offset error. */
let calibrationErrorNs = Number.POSITIVE_INFINITY;
/** The time dilation factor this thread's clock runs at (1: none), and its inverse. */
let tdf = 1;
let invTdf = 1;

const perf = performance;

function calibrate(): void {
  let best = Number.POSITIVE_INFINITY;
  let bestOffset = 0;
  for (let i = 0; i < 64; i++) {
    const h0 = process.hrtime.bigint();
    const p = perf.now();
    const h1 = process.hrtime.bigint();
    const width = Number(h1 - h0);
    if (width < best) {
      best = width;
      // Midpoint of the hrtime pair against the performance reading between them.
      bestOffset = Number(h0) + width / 2 - p * 1e6;
    }
  }
  offsetNs = bestOffset;
  calibrationErrorNs = best;
}

/**
 * Start the clock in this thread. `epoch` is the hrtime (ns, as a number) the main thread chose;
 * `factor` is the run's time dilation factor (TDF, ≥ 1; src/harness/tdf.ts checks it); every
 * thread of a machine must pass the same two values.
 *
 * Context: thread start-up, once; may be called again (recalibrates).
 */
export function initClock(epoch: number, factor = 1): void {
  if (!(factor >= 1) || !Number.isFinite(factor))
    throw new RangeError(`time dilation factor must be ≥ 1 (got ${factor})`);
  epochNs = epoch;
  tdf = factor;
  invTdf = 1 / factor;
  calibrate();
}

/** This thread's time dilation factor (1: none). */
export function clockTdf(): number {
  return tdf;
}

/** Host ns since the run's epoch, undilated: for safety limits that must stay in host time. */
export function hostNowNs(): number {
  return perf.now() * 1e6 + offsetNs - epochNs;
}

/**
 * The host wait (ms, for Atomics.wait's timeout or setTimeout) that lasts `emulatedNs` of the
 * emulated clock: × TDF. Infinity stays Infinity; a negative span waits 0.
 */
export function hostWaitMs(emulatedNs: number): number {
  return emulatedNs > 0 ? (emulatedNs * tdf) / 1e6 : 0;
}

/** A fresh epoch for a run: now, in hrtime ns. Context: main thread. */
export function newEpoch(): number {
  return Number(process.hrtime.bigint());
}

/**
 * Emulated nanoseconds since the run's epoch (host ns / TDF). Context: any thread, after
 * {@link initClock}. Never allocates beyond the read itself.
 */
export function nowNs(): number {
  return (perf.now() * 1e6 + offsetNs - epochNs) * invTdf;
}

/** The same instant read the slow, exact way (for calibration checks and tests); emulated ns. */
export function exactNowNs(): number {
  return (Number(process.hrtime.bigint()) - epochNs) * invTdf;
}

/** Upper bound (ns) on this thread's clock offset error, from its calibration. */
export function clockCalibrationErrorNs(): number {
  return calibrationErrorNs;
}
