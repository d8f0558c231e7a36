/** Thread entry: one of the two calibration threads (src/harness/calibrate-work.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import {
  type CalibrationDone,
  type CalibrationWorkerData,
  runCalibrationThread,
} from '../src/harness/calibrate-work.js';

const samples = await runCalibrationThread(workerData as CalibrationWorkerData);
parentPort?.postMessage({ type: 'done', samples } satisfies CalibrationDone);
