/**
 * The calibration block: what this host charges for the emulation's own mechanisms, measured
 * once per run before the first machine boots, stored as `results.meta.calibration`
 * (src/report/types.ts `Calibration`; docs/results.md says how to read each figure).
 *
 * Two short-lived threads (workers/calibrate, src/harness/calibrate-work.ts) measure, with real
 * threads and the lab's own clock, never a formula:
 *   (a) host futex wake: Atomics.wait/notify ping-pong, one-way = half a round trip, p50 / p99;
 *   (b) cross-thread hand-off: the machine's owner-word store + Doorbell (prepare, re-check,
 *       sleep; ring), one-way, p50 / p99;
 *   (c) same-thread switch: the real scheduler path on one thread (calibrate-work.ts says which),
 *       and with the run's --switch-cost floor charged when it has one;
 *   (d) a clock read (src/clock.ts nowNs); (e) a histogram recordValue (WASM build);
 * and this thread reads (f) the host's cores, CPU model and load average. The futex and hand-off
 * figures are medians over CALIBRATION_REPS repetitions, the single-thread ones the median of
 * CALIBRATION_BATCHES short batches. The load average at the run's end is filled in by
 * the harness ({@link finishCalibration}).
 *
 * Context: main thread; never blocks it (only the two workers wait). Measured from dist/ on this
 * 2-core host at a load average of 35–40 (other sessions' work): 0.9–2.4 s of wall time for
 * 0.5–0.7 s of CPU, mostly the two threads' start-up and the switch warm-up; from TypeScript
 * source each thread also starts tsx.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { histogramWasmBytes } from '../hw/trace.js';
import { median } from '../report/statistics/order.js';
import type { Calibration } from '../report/types.js';
import { spawnWorker } from '../threads/spawn.js';
import {
  CALIBRATION_WORDS,
  type CalibrationDone,
  type CalibrationSamples,
  type CalibrationWorkerData,
  initCalibrationRegion,
  ROLE_A,
  ROLE_B,
} from './calibrate-work.js';

/** Repetitions of every measurement; the block reports the median. */
export const CALIBRATION_REPS = 5;
/** Measured round trips per repetition ("a few hundred": p99 is then the 4th-worst sample). */
export const CALIBRATION_ROUNDS = 300;
/** Unmeasured round trips before each repetition (both threads awake and compiled). */
export const CALIBRATION_WARMUP_ROUNDS = 30;
/** Short batches of each single-thread timing (switch, clock, histogram); the median batch is reported. */
export const CALIBRATION_BATCHES = 101;
/** Calls per batch of the clock read and the histogram record (~10–30 µs a batch). */
export const CALIBRATION_BATCH_CALLS = 500;
/** Same-thread switch cycles per batch (two switches each; ~20–40 µs a batch). */
export const CALIBRATION_BATCH_CYCLES = 20;
/** Unmeasured same-thread switch cycles before the batches: here (load ~40) V8 needed ~8 000
 *  before the scheduler's path ran at its steady cost (5–7 µs a switch cold, 0.6–1.1 µs warm). */
export const CALIBRATION_SWITCH_WARMUP_CYCLES = 10_000;
/** Give up after this long (a thread that never starts or never answers); the run goes on without the block. */
export const CALIBRATION_TIMEOUT_MS = 15_000;

const ENTRY = new URL('../../workers/calibrate.js', import.meta.url);

/**
 * Measure the block. Rejects with an Error saying what failed (a thread's error, its exit, the
 * timeout, `signal` aborted); the caller decides whether a run goes on without it.
 */
export async function calibrate(signal?: AbortSignal, switchFloorNs = 0): Promise<Calibration> {
  if (signal?.aborted) throw new Error('calibration interrupted');
  const loadAvgStart = loadavg();
  const started = performance.now();
  const sab = new SharedArrayBuffer(CALIBRATION_WORDS * 4);
  initCalibrationRegion(new Int32Array(sab));
  const data = (role: typeof ROLE_A | typeof ROLE_B): CalibrationWorkerData => ({
    sab,
    histogramWasm: histogramWasmBytes(),
    role,
    reps: CALIBRATION_REPS,
    rounds: CALIBRATION_ROUNDS,
    warmup: CALIBRATION_WARMUP_ROUNDS,
    batches: CALIBRATION_BATCHES,
    batchCalls: CALIBRATION_BATCH_CALLS,
    batchCycles: CALIBRATION_BATCH_CYCLES,
    switchWarmupCycles: CALIBRATION_SWITCH_WARMUP_CYCLES,
    switchFloorNs,
  });
  const a = spawnWorker(ENTRY, { workerData: data(ROLE_A), name: 'calibrate-a' });
  const b = spawnWorker(ENTRY, { workerData: data(ROLE_B), name: 'calibrate-b' });
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  try {
    const samples = await new Promise<CalibrationSamples>((resolve, reject) => {
      onAbort = () => reject(new Error('calibration interrupted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(
        () => reject(new Error(`calibration did not finish within ${CALIBRATION_TIMEOUT_MS / 1000} s`)),
        CALIBRATION_TIMEOUT_MS,
      );
      a.on('message', (m: CalibrationDone) => {
        if (m.samples) resolve(m.samples);
        else reject(new Error('calibration thread A sent no samples'));
      });
      for (const [w, name] of [
        [a, 'calibration thread A'],
        [b, 'calibration thread B'],
      ] as const) {
        w.on('error', (e) => reject(new Error(`${name} failed: ${e instanceof Error ? e.message : String(e)}`)));
        // B exits normally after its last round; A posts its samples before it exits.
        w.on('exit', (code) => {
          if (code !== 0) reject(new Error(`${name} exited with code ${code}`));
          else if (w === a) reject(new Error(`${name} exited without its results`));
        });
      }
    });
    const cpuList = cpus();
    return {
      futexWakeP50Ns: median(samples.futexP50),
      futexWakeP99Ns: median(samples.futexP99),
      handoffP50Ns: median(samples.handoffP50),
      handoffP99Ns: median(samples.handoffP99),
      sameThreadSwitchNs: median(samples.sameThreadSwitch),
      ...(samples.sameThreadSwitchCharged.length > 0
        ? { sameThreadSwitchChargedNs: median(samples.sameThreadSwitchCharged) }
        : {}),
      clockReadNs: median(samples.clockRead),
      histRecordNs: median(samples.histRecord),
      histWasm: samples.histWasm,
      roundTrips: CALIBRATION_ROUNDS,
      repetitions: CALIBRATION_REPS,
      batches: CALIBRATION_BATCHES,
      durationMs: performance.now() - started,
      hostCores: availableParallelism(),
      cpuModel: cpuList[0]?.model ?? 'unknown',
      loadAvgStart,
      loadAvgEnd: loadAvgStart,
    };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    await Promise.all([a.terminate(), b.terminate()]);
  }
}

/** Take the load average at the run's end into the block. Context: main thread, once per run. */
export function finishCalibration(c: Calibration | undefined): void {
  if (c) c.loadAvgEnd = loadavg();
}
