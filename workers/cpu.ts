/** Thread entry: emulated CPU n (its idle task and the workload's tasks on it). */
import { workerData } from 'node:worker_threads';
import type { StartupData } from '../src/machine/protocol.js';
import { startTaskThread } from '../src/machine/thread-main.js';

await startTaskThread(workerData as StartupData);
