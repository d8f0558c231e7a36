/** Thread entry: one kthread (kworker/n, kworker/uN, ksoftirqd/n) or a hog process. */
import { workerData } from 'node:worker_threads';
import type { StartupData } from '../src/machine/protocol.js';
import { startTaskThread } from '../src/machine/thread-main.js';

await startTaskThread(workerData as StartupData);
