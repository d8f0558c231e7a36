/** Thread entry: the interrupt controller, local timers and device interrupt generator. */
import { workerData } from 'node:worker_threads';
import { startIrqThread } from '../src/machine/irq-thread.js';
import type { StartupData } from '../src/machine/protocol.js';

await startIrqThread(workerData as StartupData);
