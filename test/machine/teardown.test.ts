/**
 * Teardown, as a sweep needs it (one machine per point, all in one process): after stop() no
 * machine thread is alive, and once a run is over nothing the harness keeps (results, hooks,
 * listeners, timers) still holds a machine, its threads or its SharedArrayBuffer. No timing and
 * no RSS figure is asserted: bench/soak.ts --sweep prints those.
 *
 * Reachability is checked with WeakRefs and a forced full GC. Without --expose-gc the GC
 * function is obtained the documented way (v8.setFlagsFromString, then a fresh context's `gc`).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';
import { drain, Machine, options, runUntil } from './helpers.js';

function gcFunction(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Full GCs with turns of the event loop between them (a WeakRef read in a turn keeps its target to the turn's end). */
async function collectGarbage(): Promise<void> {
  const gc = gcFunction();
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((r) => setTimeout(r, 20));
    gc();
  }
}

/** The machine's Worker objects (private to Machine). */
const workersOf = (m: Machine): Worker[] => (m as unknown as { workers: Worker[] }).workers;

/** Calibration is not what this tests: a block given to the run skips measuring it. */
const CALIBRATION = NO_CALIBRATION;

const originalBoot = Machine.boot;
afterEach(() => {
  Machine.boot = originalBoot;
});

describe('teardown', () => {
  it('stop() joins every machine thread', async () => {
    const m = await Machine.boot(options());
    const workers = [...workersOf(m)];
    expect(workers.length).toBe(m.plan.threads.length);
    expect(workers.every((w) => w.threadId > 0)).toBe(true);
    await runUntil(m, '10 interrupts handled', () => m.counters().interrupts >= 10);
    await drain(m);
    await m.stop();
    // A Worker's threadId is -1 once its thread has exited.
    expect(workers.map((w) => w.threadId)).toEqual(workers.map(() => -1));
  });

  it('a sweep leaves no machine, thread or shared memory reachable once the run is over', async () => {
    const booted: { machine: WeakRef<Machine>; sab: WeakRef<SharedArrayBuffer>; workers: WeakRef<Worker>[] }[] = [];
    const threadIdsAfterStop: number[][] = [];
    // Not vi.spyOn: a spy keeps every value it returned, the machines included.
    Machine.boot = async (...args: Parameters<typeof Machine.boot>) => {
      const m = await originalBoot.apply(Machine, args);
      const workers = [...workersOf(m)];
      booted.push({ machine: new WeakRef(m), sab: new WeakRef(m.sab), workers: workers.map((w) => new WeakRef(w)) });
      const stop = m.stop.bind(m);
      m.stop = async (graceMs?: number) => {
        await stop(graceMs);
        threadIdsAfterStop.push(workers.map((w) => w.threadId));
      };
      return m;
    };
    const config = resolveConfig({
      flags: {
        strategies: ['inline', 'workqueue'],
        workload: { kind: 'tcp_lat' },
        trials: 1,
        trialMs: '50ms',
        warmupMs: '20ms',
        seed: 1,
        outDir: null,
        sweep: { param: 'msg_size', values: [64, 4096] },
      },
      cwd: process.cwd(),
    });
    const results = await runExperiment(config, { calibration: CALIBRATION });
    expect(results.status).toBe('completed');
    expect(results.points.length).toBe(2);
    expect(booted.length).toBe(2);
    for (const ids of threadIdsAfterStop) expect(ids.every((id) => id === -1)).toBe(true);
    await collectGarbage();
    const alive = booted.map((b, i) => ({
      point: i,
      machine: b.machine.deref() !== undefined,
      sab: b.sab.deref() !== undefined,
      workers: b.workers.filter((w) => w.deref() !== undefined).length,
    }));
    expect(alive).toEqual(booted.map((_, i) => ({ point: i, machine: false, sab: false, workers: 0 })));
  });
});
