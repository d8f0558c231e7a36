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
 */

/** hrtime (ns) of the run's epoch; set by {@link initClock} in every thread from the same value. */
let epochNs = 0;
/** performance.now()*1e6 + offsetNs = hrtime ns. */
let offsetNs = 0;
/** Width (ns) of the tightest calibration pair: an upper bound on this thread's offset error. */
let calibrationErrorNs = Number.POSITIVE_INFINITY;

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
 * every thread must pass the same value.
 *
 * Context: thread start-up, once; may be called again (recalibrates).
 */
export function initClock(epoch: number): void {
  epochNs = epoch;
  calibrate();
}

/** A fresh epoch for a run: now, in hrtime ns. Context: main thread. */
export function newEpoch(): number {
  return Number(process.hrtime.bigint());
}

/**
 * Nanoseconds since the run's epoch. Context: any thread, after {@link initClock}. Never allocates.
 */
export function nowNs(): number {
  return perf.now() * 1e6 + offsetNs - epochNs;
}

/** The same instant read the slow, exact way (for calibration checks and tests). */
export function exactNowNs(): number {
  return Number(process.hrtime.bigint()) - epochNs;
}

/** Upper bound (ns) on this thread's clock offset error, from its calibration. */
export function clockCalibrationErrorNs(): number {
  return calibrationErrorNs;
}
