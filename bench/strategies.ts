/**
 * Hand-off → start latency of every built-in deferral strategy (issue #4), and the unbound
 * pool's dispatch against a minimal hand-made Atomics.wait/notify pool.
 *
 * Run: npm run build && node dist/bench/strategies.js
 *
 * One 2-CPU machine, irq_only (nothing else runs: both CPUs idle between interrupts), device
 * interrupts on both CPUs at a moderate rate, the fast pool's trigger lowered to 8 so that each
 * strategy hands off hundreds of times per trial. Strategies are interleaved in rounds on that
 * one machine (A B C ... A B C ...), as src/harness/run.ts does, so host noise shifts all alike.
 * The stage is handoff_to_start: the hard IRQ hands the mix off → the mix starts
 * (workqueue_queue_work → workqueue_execute_start).
 *
 * Between rounds, with the machine paused, a bench-local pool runs: one worker thread sleeping
 * in Atomics.wait on a word; a client thread stores a job (with its clock), notifies, and waits
 * for the reply; the worker records queue → start and notifies back. It is paced like the
 * unbound hand-offs (the worker sleeps between jobs, as kworker/u does) and also run back to
 * back. The ratio unbound / minimal says what deferlab's emulation adds over a bare futex wake.
 * Never asserts.
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Histogram } from 'hdr-histogram-js';
import { CPU_DEFERRED, CPU_WORDS } from '../src/hw/layout.js';
import { newHistogram } from '../src/hw/trace.js';
import type { StrategyRef } from '../src/machine/options.js';
import {
  addInto,
  builtin,
  isMain,
  type Machine,
  machineOptions,
  pcts,
  rate,
  table,
  threadsLine,
  trial,
  us,
  WARMUP_TRIGGER,
  warmUp,
  withMachine,
} from './lib.js';

const ROUNDS = 3;
const WARMUP_MS = 150;
const TRIAL_WARMUP_MS = 50;
const TRIAL_MS = 400;
/** Device interrupts per second on each CPU. */
const IRQ_RATE = 5_000;
/** Jobs per minimal-pool batch (one paced, one back to back, per round). */
const POOL_JOBS = 400;

export const STRATEGIES: StrategyRef[] = [
  builtin('inline'),
  builtin('workqueue'),
  builtin('workqueue', { wq: 'system' }),
  builtin('tasklet'),
  builtin('timer'),
  builtin('timer', { deferrable: true }),
  builtin('unbound', { scope: 'cpu' }),
  builtin('unbound'),
  builtin('irq_work'),
  builtin('bh_workqueue'),
];

// ---- the minimal Atomics.wait/notify pool ---------------------------------------------------

/**
 * Both threads of the minimal pool, as plain JS evaluated in the worker (no loader needed, from
 * dist/ or from source). Shared words: [0] job sequence (client stores, worker waits on it),
 * [1] reply sequence (worker stores, client waits on it), [2] stop; f64[2] the job's queue time.
 * Clock: process.hrtime.bigint(), the process's CLOCK_MONOTONIC, the same in every thread.
 */
const POOL_SRC = `
const { workerData, parentPort } = require('node:worker_threads');
const { sab, role, jobs, paceMs } = workerData;
const i32 = new Int32Array(sab);
const f64 = new Float64Array(sab);
const now = () => Number(process.hrtime.bigint());
if (role === 'worker') {
  const startNs = [];
  let seen = 0;
  for (;;) {
    while (Atomics.load(i32, 0) === seen && Atomics.load(i32, 2) === 0) Atomics.wait(i32, 0, seen);
    if (Atomics.load(i32, 2) !== 0) break;
    const t1 = now();
    seen = Atomics.load(i32, 0);
    startNs.push(t1 - f64[2]);
    Atomics.store(i32, 1, seen);
    Atomics.notify(i32, 1);
  }
  parentPort.postMessage(startNs);
} else {
  const pace = new Int32Array(new SharedArrayBuffer(4));
  const rtNs = [];
  for (let s = 1; s <= jobs; s++) {
    if (paceMs > 0) Atomics.wait(pace, 0, 0, paceMs);
    const t0 = now();
    f64[2] = t0;
    Atomics.store(i32, 0, s);
    Atomics.notify(i32, 0);
    while (Atomics.load(i32, 1) !== s) Atomics.wait(i32, 1, s - 1);
    rtNs.push(now() - t0);
  }
  Atomics.store(i32, 2, 1);
  Atomics.notify(i32, 0);
  parentPort.postMessage(rtNs);
}
`;

function poolThread(
  sab: SharedArrayBuffer,
  role: 'worker' | 'client',
  jobs: number,
  paceMs: number,
): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(POOL_SRC, { eval: true, workerData: { sab, role, jobs, paceMs } });
    let result: number[] | undefined;
    w.once('message', (m: number[]) => {
      result = m;
    });
    w.once('error', reject);
    w.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`minimal pool ${role} exited ${code} without a result`)),
    );
  });
}

interface PoolRun {
  queueToStart: Histogram;
  roundTrip: Histogram;
}

/** One batch of the minimal pool: `jobs` jobs, `paceMs` apart (0: back to back). Threads are started per batch. */
async function minimalPool(jobs: number, paceMs: number): Promise<PoolRun> {
  const sab = new SharedArrayBuffer(64);
  const worker = poolThread(sab, 'worker', jobs, paceMs);
  await new Promise((r) => setTimeout(r, 50)); // let the worker reach its first wait
  const client = poolThread(sab, 'client', jobs, paceMs);
  const [starts, rts] = await Promise.all([worker, client]);
  const queueToStart = newHistogram(false);
  const roundTrip = newHistogram(false);
  // The first jobs pay for thread start-up and compilation: drop a tenth.
  const skip = Math.floor(jobs / 10);
  for (const v of starts.slice(skip)) queueToStart.recordValue(Math.max(0, Math.round(v)));
  for (const v of rts.slice(skip)) roundTrip.recordValue(Math.max(0, Math.round(v)));
  return { queueToStart, roundTrip };
}

// ---- the machine -----------------------------------------------------------------------------

/** No hand-off is pending on any CPU (so re-onlining cannot clear a live MIX_INFLIGHT). */
function noneDeferred(m: Machine): boolean {
  for (let c = 0; c < m.opts.cpus; c++)
    if (Atomics.load(m.i32, m.R.cpu + c * CPU_WORDS + CPU_DEFERRED) !== 0) return false;
  return true;
}

export async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const opts = machineOptions({
    irq: { rate: IRQ_RATE, pattern: 'constant', burstSize: 32, cpus: [0, 1] },
    workload: { kind: 'irq_only' },
    fastPool: { trigger: WARMUP_TRIGGER, variant: '64' },
    strategies: STRATEGIES,
  });
  const n = STRATEGIES.length;
  const merged: (Histogram | undefined)[] = new Array(n).fill(undefined);
  const handoffs = new Array<number>(n).fill(0);
  const seconds = new Array<number>(n).fill(0);
  const remote = new Array<number>(n).fill(0);
  let pacedQ: Histogram | undefined;
  let pacedRt: Histogram | undefined;
  let b2bQ: Histogram | undefined;
  let b2bRt: Histogram | undefined;
  const unboundIdx = STRATEGIES.findIndex((s) => s.name === 'unbound' && s.options.scope === undefined);
  let threads = 0;
  await withMachine(opts, async (m) => {
    threads = m.plan.threads.length;
    await warmUp(m, WARMUP_MS, WARMUP_TRIGGER);
    for (let r = 0; r < ROUNDS; r++) {
      for (let s = 0; s < n; s++) {
        m.resetEntropy();
        m.setActiveStrategy(s);
        // A mix that ran on another CPU than its pool's (unbound may place it there) leaves
        // MIX_INFLIGHT set, as random.c does: re-online the CPUs when nothing is pending.
        const reonline = STRATEGIES[s].name === 'unbound' ? () => noneDeferred(m) && m.onlineCpus() : undefined;
        const t = await trial(m, TRIAL_WARMUP_MS, TRIAL_MS, reonline);
        merged[s] = addInto(merged[s], t.hist.handoff_to_start);
        handoffs[s] += t.counters.handoffs;
        seconds[s] += t.seconds;
        remote[s] += t.counters.mixes_remote;
      }
      // The minimal pool, machine paused, paced like this round's unbound hand-offs.
      const paceMs = Math.max(0.2, (seconds[unboundIdx] / Math.max(1, handoffs[unboundIdx])) * 1e3);
      const paced = await minimalPool(POOL_JOBS, paceMs);
      const b2b = await minimalPool(POOL_JOBS, 0);
      pacedQ = addInto(pacedQ, paced.queueToStart);
      pacedRt = addInto(pacedRt, paced.roundTrip);
      b2bQ = addInto(b2bQ, b2b.queueToStart);
      b2bRt = addInto(b2bRt, b2b.roundTrip);
    }
  });

  const out: string[] = [];
  out.push(
    `strategies bench: Node ${process.version}, ${threadsLine(threads)}; host load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`,
  );
  out.push(
    `hand-off -> start (handoff_to_start), 2 idle CPUs, irq_only, ${rate(IRQ_RATE)} irq/s on each CPU, trigger ${WARMUP_TRIGGER}, HZ ${opts.hz};`,
  );
  out.push(`${ROUNDS} interleaved rounds x ${TRIAL_MS} ms per strategy on one machine`);
  const rows = STRATEGIES.map((st, s) => {
    const p = pcts(merged[s]);
    return [st.label, us(p.p50), us(p.p99), String(p.n), rate(handoffs[s] / seconds[s]), String(remote[s])];
  });
  out.push(...table(['strategy', 'p50 us', 'p99 us', 'n', 'hand-offs/s', 'mixes remote'], rows));
  out.push(
    '  (mixes remote: ran on the other CPU, which random.c refuses; the CPUs are re-onlined so hand-offs continue)',
  );
  const deferrableIdx = STRATEGIES.findIndex((s) => s.name === 'timer' && s.options.deferrable === true);
  if (pcts(merged[deferrableIdx]).n < 50) {
    out.push(
      '  (timer deferrable=true: an idle NOHZ CPU takes no tick, so the deferrable timer waits until the CPU is busy;',
    );
    out.push(
      '   here nothing makes it busy: one hand-off per CPU per trial, run when the drain ticks every CPU. Any samples',
    );
    out.push(
      '   shown are those drain-forced runs (~ the trial length), recorded because the first drain tick is handled',
    );
    out.push('   before the CPU notices the phase change)');
  }
  const u = pcts(merged[unboundIdx]);
  const uc = pcts(merged[STRATEGIES.findIndex((s) => s.name === 'unbound' && s.options.scope === 'cpu')]);
  const pq = pcts(pacedQ);
  const pr = pcts(pacedRt);
  const bq = pcts(b2bQ);
  const br = pcts(b2bRt);
  out.push(
    'unbound pool dispatch vs. a minimal Atomics.wait/notify pool (bench-local: 1 worker thread, 1 client thread),',
  );
  out.push(
    `same run, between the rounds with the machine paused; ${ROUNDS} x ${POOL_JOBS} jobs each way, first tenth of each batch dropped`,
  );
  out.push(
    ...table(
      ['', 'queue->start p50 us', 'p99 us', 'round trip p50 us', 'p99 us', 'n'],
      [
        ['deferlab unbound (scope cache)', us(u.p50), us(u.p99), '-', '-', String(u.n)],
        ['deferlab unbound scope=cpu', us(uc.p50), us(uc.p99), '-', '-', String(uc.n)],
        [
          `minimal pool, paced like unbound (worker sleeps between jobs)`,
          us(pq.p50),
          us(pq.p99),
          us(pr.p50),
          us(pr.p99),
          String(pq.n),
        ],
        ['minimal pool, back to back', us(bq.p50), us(bq.p99), us(br.p50), us(br.p99), String(bq.n)],
      ],
    ),
  );
  out.push(
    `  ratio unbound / minimal pool, queue->start p50: ${(u.p50 / pq.p50).toFixed(2)}x paced, ${(u.p50 / bq.p50).toFixed(2)}x back to back (p99: ${(u.p99 / pq.p99).toFixed(2)}x paced)`,
  );
  out.push(
    '  (for orientation, TOOLCHAIN.md: a minimal Atomics pool round trip ~11.5 us p50 here, a MessagePort pool ~3x that)',
  );
  out.push(`  cores: ${availableParallelism()}; the minimal pool runs 2 threads + main, the machine ${threads} + main`);
  process.stdout.write(`${out.join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  await main();
}
