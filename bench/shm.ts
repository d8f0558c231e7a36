/**
 * Shared-memory primitives (src/shm/): what a ring record, a doorbell wakeup, a lock and a
 * padded counter cost on this machine.
 *
 * Run: npm run build && node dist/bench/shm.js
 *
 *   rings     push+pop records/s: SpscRing and MpscRing in one thread (tinybench, BATCH records
 *             a call), then producer thread -> consumer thread over ~1 s (1024 slots; no naps:
 *             on a full ring the producer polls length() with loads, then claims again; on an
 *             empty one the consumer polls).
 *   doorbell  one-way wakeup latency (round trip / 2, timed on the initiating thread with
 *             process.hrtime.bigint()) of a two-thread ping-pong through two Doorbells ('if-idle':
 *             prepare, re-check the shared word, sleep; the other side stores the word, then
 *             ring()), beside a raw Atomics.wait/Atomics.notify ping-pong on the same words, in
 *             interleaved rounds (raw, doorbell, raw, ...) so machine noise hits both alike.
 *             Bar: doorbell p50 / raw p50 at most 1.1.
 *   lock      ShmLock lock+unlock uncontended (tinybench), and 2 threads contending over ~1 s.
 *   padding   two threads each incrementing its own counter, the counters adjacent (same cache
 *             line), 16 Int32 words apart (separate lines) or 32 apart (separate line pairs),
 *             beside one thread alone, in interleaved rounds (STYLE.md point 3: does the
 *             padding pay on V8?). Plain `i32[w]++` and `Atomics.add`.
 *
 * This file is also the worker entry for its own threads (workerData.benchShm). It prints and
 * never asserts; thread and core counts are printed with each figure.
 */
import { availableParallelism, cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import { build, type Histogram } from 'hdr-histogram-js';
import { Bench } from 'tinybench';
import { DOORBELL_WORDS, Doorbell } from '../src/shm/doorbell.js';
import { attachShm, LINE_WORDS, ShmPlanner } from '../src/shm/layout.js';
import { DEFAULT_LOCK_SPIN, LOCK_WORDS, ShmLock } from '../src/shm/lock.js';
import { MpscRing, SpscRing } from '../src/shm/ring.js';
import { spawnWorker } from '../src/threads/spawn.js';

/** Records (or lock pairs) per tinybench call: spreads the timer's ~40-70 ns over many ops. */
const BATCH = 1000;
const RING_CAPACITY = 1024;
const RECORD_WORDS = 2;
/** Cross-thread throughput: warm-up, then the measured window. */
const WARMUP_MS = 200;
const WINDOW_MS = 1000;
/** Ping-pong: rounds per mode (interleaved), round trips per round, unrecorded warm-up round trips. */
const PING_ROUNDS = 12;
const PING_PER_ROUND = 2000;
const PING_WARMUP = 2000;
/** The doorbell bar: doorbell p50 at most this many times raw p50. */
const DOORBELL_BAR = 1.1;
/** Padding: rounds per layout and kind, and the length of one round. */
const PAD_ROUNDS = 6;
const PAD_ROUND_MS = 120;
/**
 * Word distance between the two counters: same line, next line (64 B), two lines (128 B: AMD
 * and Intel prefetchers can pull line pairs, so 64 B apart may still interfere). ALONE (0) is
 * the baseline: worker 0 runs by itself; two threads truly in parallel and not interfering
 * give twice its rate, so it also shows whether the OS gave the two threads two cores.
 */
const ALONE = 0;
const PAD_GAPS = [ALONE, 1, LINE_WORDS, 2 * LINE_WORDS] as const;

/**
 * Control region (Int32 words from its base), one cache line per writer:
 *   line 0  GO, STOP, ROUND, GAP   written by the main thread (Atomics.store), read by workers.
 *   line 1  COUNT0                 worker 0's progress (Atomics.store every PROGRESS_EVERY ops).
 *   line 2  COUNT1                 worker 1's progress.
 *   line 3  PING                   ping-pong: written by side A only.
 *   line 4  PONG                   ping-pong: written by side B only.
 *   line 5  SHARED                 lock bench: a plain counter written under the lock.
 */
const CTL_WORDS = 6 * LINE_WORDS;
const GO = 0;
const STOP = 1;
const ROUND = 2;
const GAP = 3;
const COUNT = [LINE_WORDS, 2 * LINE_WORDS] as const;
const PING = 3 * LINE_WORDS;
const PONG = 4 * LINE_WORDS;
const SHARED = 5 * LINE_WORDS;
/** Padding counters: their own region (line-aligned), room for the largest gap. */
const PAD_WORDS = 3 * LINE_WORDS;
const PROGRESS_EVERY = 1024;

type RingKind = 'spsc' | 'mpsc';
type PingMode = 'raw' | 'doorbell';

interface Shm {
  sab: SharedArrayBuffer;
  ctl: number;
  mpscRing: number;
  spscRing: number;
  bellA: number;
  bellB: number;
  lock: number;
  pad: number;
}

type Job =
  | { role: 'ring-producer' | 'ring-consumer'; kind: RingKind; index: 0 | 1 }
  | { role: 'ping'; side: 'A' | 'B'; schedule: PingMode[] }
  | { role: 'lock'; index: 0 | 1; spinLimit: number }
  | { role: 'pad'; index: 0 | 1; atomic: boolean };

interface WorkerData {
  benchShm: true;
  shm: Shm;
  job: Job;
}

/** The summary shape of STYLE.md point 14 (ns). */
interface Summary {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  count: number;
}

function summarize(h: Histogram): Summary {
  return {
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p99: h.getValueAtPercentile(99),
    p99_9: h.getValueAtPercentile(99.9),
    max: h.maxValue,
    count: h.totalCount,
  };
}

function layout(): Shm {
  const p = new ShmPlanner();
  const ctl = p.reserve('ctl', CTL_WORDS);
  const mpscRing = p.reserve('mpsc', MpscRing.wordsFor(RING_CAPACITY, RECORD_WORDS));
  const spscRing = p.reserve('spsc', SpscRing.wordsFor(RING_CAPACITY, RECORD_WORDS));
  const bellA = p.reserve('bellA', DOORBELL_WORDS);
  const bellB = p.reserve('bellB', DOORBELL_WORDS);
  const lock = p.reserve('lock', LOCK_WORDS);
  const pad = p.reserve('pad', PAD_WORDS);
  const { sab, map } = p.allocate();
  const i32 = attachShm(sab, map);
  MpscRing.init(i32, mpscRing, RING_CAPACITY, RECORD_WORDS);
  SpscRing.init(i32, spscRing, RING_CAPACITY, RECORD_WORDS);
  Doorbell.init(i32, bellA);
  Doorbell.init(i32, bellB);
  ShmLock.init(i32, lock);
  return { sab, ctl, mpscRing, spscRing, bellA, bellB, lock, pad };
}

// ---------------------------------------------------------------- worker side

function ringOf(i32: Int32Array, shm: Shm, kind: RingKind): SpscRing | MpscRing {
  return kind === 'spsc' ? new SpscRing(i32, shm.spscRing) : new MpscRing(i32, shm.mpscRing);
}

function awaitGo(i32: Int32Array, ctl: number): void {
  while (Atomics.load(i32, ctl + GO) === 0) Atomics.wait(i32, ctl + GO, 0, 100);
}

function ringProducer(i32: Int32Array, shm: Shm, kind: RingKind): void {
  const ring = ringOf(i32, shm, kind);
  const stop = shm.ctl + STOP;
  awaitGo(i32, shm.ctl);
  let seq = 0;
  while (Atomics.load(i32, stop) === 0) {
    for (let n = 0; n < PROGRESS_EVERY; n++) {
      const at = ring.claim();
      if (at < 0) {
        // Full: wait with loads only (a claim() retry loop would RMW the refused counter,
        // which shares the tail's line with the consumer's reads), then retry.
        while (ring.length() >= RING_CAPACITY && Atomics.load(i32, stop) === 0);
        continue;
      }
      i32[at] = seq;
      i32[at + 1] = ~seq;
      ring.publish();
      seq++;
    }
  }
}

function ringConsumer(i32: Int32Array, shm: Shm, kind: RingKind, index: 0 | 1): void {
  const ring = ringOf(i32, shm, kind);
  const stop = shm.ctl + STOP;
  const progress = shm.ctl + COUNT[index];
  awaitGo(i32, shm.ctl);
  let count = 0;
  let bad = 0;
  let polls = 0;
  for (;;) {
    const at = ring.peek();
    if (at < 0) {
      if (++polls === PROGRESS_EVERY) {
        polls = 0;
        if (Atomics.load(i32, stop) !== 0) break;
      }
      continue;
    }
    if (i32[at] !== count || i32[at + 1] !== ~count) bad++;
    ring.release();
    if ((++count & (PROGRESS_EVERY - 1)) === 0) Atomics.store(i32, progress, count);
  }
  if (bad) throw new Error(`ring consumer: ${bad} records out of sequence`);
}

/**
 * Ping-pong. Side A times each round trip i: store PING = i, wake B, wait for PONG = i.
 * Side B: wait for PING = i, store PONG = i, wake A. Round r uses schedule[r]; a warm-up round
 * of each mode comes first (not recorded).
 */
function ping(i32: Int32Array, shm: Shm, side: 'A' | 'B', schedule: PingMode[]): unknown {
  const mine = shm.ctl + (side === 'A' ? PING : PONG);
  const theirs = shm.ctl + (side === 'A' ? PONG : PING);
  const myBell = new Doorbell(i32, side === 'A' ? shm.bellA : shm.bellB, 'if-idle');
  const theirBell = new Doorbell(i32, side === 'A' ? shm.bellB : shm.bellA, 'if-idle');
  const hist = { raw: build(), doorbell: build() };
  const rounds: { mode: PingMode; p50: number }[] = [];
  awaitGo(i32, shm.ctl);
  const plan: [PingMode, number, boolean][] = [
    ['raw', PING_WARMUP, false],
    ['doorbell', PING_WARMUP, false],
    ...schedule.map((m): [PingMode, number, boolean] => [m, PING_PER_ROUND, true]),
  ];
  let i = 0;
  for (const [mode, n, record] of plan) {
    const round = build();
    for (let k = 0; k < n; k++) {
      i++;
      const t0 = side === 'A' ? process.hrtime.bigint() : 0n;
      if (side === 'A') wake(i32, mine, i, mode, theirBell);
      // Wait for the other side's word to reach i.
      if (mode === 'raw') {
        while (Atomics.load(i32, theirs) !== i) Atomics.wait(i32, theirs, i - 1);
      } else {
        for (;;) {
          if (Atomics.load(i32, theirs) === i) break;
          myBell.prepare();
          if (Atomics.load(i32, theirs) === i) {
            myBell.cancel();
            break;
          }
          myBell.sleep();
        }
      }
      if (side === 'B') {
        wake(i32, mine, i, mode, theirBell);
      } else if (record) {
        const oneWayNs = Math.round(Number(process.hrtime.bigint() - t0) / 2);
        hist[mode].recordValue(oneWayNs);
        round.recordValue(oneWayNs);
      }
    }
    if (record && side === 'A') rounds.push({ mode, p50: round.getValueAtPercentile(50) });
  }
  return {
    raw: summarize(hist.raw),
    doorbell: summarize(hist.doorbell),
    rounds,
    bell: myBell.stats(),
  };
}

function wake(i32: Int32Array, word: number, value: number, mode: PingMode, bell: Doorbell): void {
  Atomics.store(i32, word, value); // publishes; the other side's load of the word pairs with it
  if (mode === 'raw') Atomics.notify(i32, word, 1);
  else bell.ring();
}

function lockLoop(i32: Int32Array, shm: Shm, index: 0 | 1, spinLimit: number): void {
  const lock = new ShmLock(i32, shm.lock, spinLimit);
  const stop = shm.ctl + STOP;
  const progress = shm.ctl + COUNT[index];
  const shared = shm.ctl + SHARED;
  awaitGo(i32, shm.ctl);
  let count = 0;
  while (Atomics.load(i32, stop) === 0) {
    for (let n = 0; n < PROGRESS_EVERY; n++) {
      lock.lock();
      i32[shared]++;
      lock.unlock();
    }
    count += PROGRESS_EVERY;
    Atomics.store(i32, progress, count);
  }
}

/** Padding rounds: wait for ROUND to change, increment own counter until STOP === round. */
function padLoop(i32: Int32Array, shm: Shm, index: 0 | 1, atomic: boolean): void {
  let last = 0;
  for (;;) {
    while (Atomics.load(i32, shm.ctl + ROUND) === last) Atomics.wait(i32, shm.ctl + ROUND, last, 100);
    const round = Atomics.load(i32, shm.ctl + ROUND);
    if (round < 0) return;
    last = round;
    const gap = Atomics.load(i32, shm.ctl + GAP);
    if (gap === ALONE && index === 1) {
      // Sit the round out (waiting, not spinning) so worker 0 has the machine to itself.
      while (Atomics.load(i32, shm.ctl + STOP) !== round)
        Atomics.wait(i32, shm.ctl + STOP, Atomics.load(i32, shm.ctl + STOP), 10);
      parentPort!.postMessage({ type: 'round', round, ops: 0, ns: 1 });
      continue;
    }
    const w = shm.pad + index * gap;
    let ops = 0;
    const t0 = process.hrtime.bigint();
    if (atomic) {
      while (Atomics.load(i32, shm.ctl + STOP) !== round) {
        for (let n = 0; n < 4096; n++) Atomics.add(i32, w, 1);
        ops += 4096;
      }
    } else {
      while (Atomics.load(i32, shm.ctl + STOP) !== round) {
        for (let n = 0; n < 4096; n++) i32[w]++;
        ops += 4096;
      }
    }
    const ns = Number(process.hrtime.bigint() - t0);
    parentPort!.postMessage({ type: 'round', round, ops, ns });
  }
}

function runJob(d: WorkerData): void {
  const i32 = new Int32Array(d.shm.sab);
  const j = d.job;
  parentPort!.postMessage({ type: 'ready' });
  let result: unknown = null;
  switch (j.role) {
    case 'ring-producer':
      ringProducer(i32, d.shm, j.kind);
      break;
    case 'ring-consumer':
      ringConsumer(i32, d.shm, j.kind, j.index);
      break;
    case 'ping':
      result = ping(i32, d.shm, j.side, j.schedule);
      break;
    case 'lock':
      lockLoop(i32, d.shm, j.index, j.spinLimit);
      break;
    case 'pad':
      padLoop(i32, d.shm, j.index, j.atomic);
      break;
  }
  parentPort!.postMessage({ type: 'done', result });
}

// ---------------------------------------------------------------- main side

const SELF = new URL('./shm.js', import.meta.url);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function message<T>(w: Worker, type: string, ms = 120_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`bench worker sent no '${type}' within ${ms} ms`)), ms);
    const onMsg = (m: { type: string }) => m.type === type && done(null, m as T);
    const onErr = (e: Error) => done(e);
    const onExit = (code: number) => done(new Error(`bench worker exited (code ${code}) before '${type}'`));
    function done(e: Error | null, v?: T) {
      clearTimeout(timer);
      w.off('message', onMsg).off('error', onErr).off('exit', onExit);
      if (e) reject(e);
      else resolve(v!);
    }
    w.on('message', onMsg).on('error', onErr).on('exit', onExit);
  });
}

/** Start workers for `jobs` on fresh shared memory; resolves once all are ready. */
async function start(jobs: Job[]): Promise<{ shm: Shm; i32: Int32Array; ws: Worker[] }> {
  const shm = layout();
  const i32 = new Int32Array(shm.sab);
  const ws = jobs.map((job) => spawnWorker(SELF, { workerData: { benchShm: true, shm, job } satisfies WorkerData }));
  await Promise.all(ws.map((w) => message(w, 'ready')));
  return { shm, i32, ws };
}

function go(i32: Int32Array, shm: Shm): void {
  Atomics.store(i32, shm.ctl + GO, 1);
  Atomics.notify(i32, shm.ctl + GO);
}

/** Progress per second over the window after a warm-up, summed over the progress words `idx`. */
async function rate(i32: Int32Array, shm: Shm, idx: number[]): Promise<number> {
  const sum = () => idx.reduce((a, k) => a + Atomics.load(i32, shm.ctl + COUNT[k]), 0);
  await sleep(WARMUP_MS);
  const c0 = sum();
  const t0 = process.hrtime.bigint();
  await sleep(WINDOW_MS);
  const c1 = sum();
  const t1 = process.hrtime.bigint();
  return ((c1 - c0) * 1e9) / Number(t1 - t0);
}

async function stopAll(i32: Int32Array, shm: Shm, ws: Worker[]): Promise<unknown[]> {
  const done = ws.map((w) => message<{ result: unknown }>(w, 'done'));
  Atomics.store(i32, shm.ctl + STOP, 1);
  const r = await Promise.all(done);
  await Promise.all(ws.map((w) => w.terminate()));
  return r.map((m) => m.result);
}

function nsPerOp(bench: Bench, name: string): number {
  const t = bench.getTask(name);
  const r = t?.result;
  if (r?.state !== 'completed') throw new Error(`bench task ${name}: ${r?.state ?? 'missing'}`);
  return (r.latency.p50 * 1e6) / BATCH;
}

const fmtRate = (perS: number) => `${(perS / 1e6).toFixed(2)} M`;
const us = (ns: number) => `${(ns / 1000).toFixed(2)} µs`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Returns ShmLock's uncontended lock+unlock ns (measured in the same tinybench run). */
async function ringsOneThread(lines: string[]): Promise<number> {
  const shm = layout();
  const i32 = new Int32Array(shm.sab);
  const spsc = new SpscRing(i32, shm.spscRing);
  const mpsc = new MpscRing(i32, shm.mpscRing);
  const lock = new ShmLock(i32, shm.lock);
  const pushPop = (ring: SpscRing | MpscRing) => () => {
    for (let n = 0; n < BATCH; n++) {
      const at = ring.claim();
      i32[at] = n;
      i32[at + 1] = ~n;
      ring.publish();
      const p = ring.peek();
      if (i32[p] !== n) throw new Error('ring bench: wrong record');
      ring.release();
    }
  };
  const bench = new Bench({ time: 500, warmupTime: 200 });
  bench
    .add('SpscRing push+pop', pushPop(spsc))
    .add('MpscRing push+pop', pushPop(mpsc))
    .add('ShmLock lock+unlock', () => {
      for (let n = 0; n < BATCH; n++) {
        lock.lock();
        lock.unlock();
      }
    });
  await bench.run();
  lines.push(`rings, one thread (tinybench, ${BATCH} push+pop per call, median):`);
  for (const name of ['SpscRing push+pop', 'MpscRing push+pop']) {
    const ns = nsPerOp(bench, name);
    lines.push(`  ${name.padEnd(24)} ${fmtRate(1e9 / ns).padStart(11)} records/s  (${ns.toFixed(1)} ns a record)`);
  }
  return nsPerOp(bench, 'ShmLock lock+unlock');
}

async function ringsTwoThreads(lines: string[]): Promise<void> {
  lines.push(
    `rings, producer thread -> consumer thread (2 threads on ${availableParallelism()} cores, ${RING_CAPACITY} slots, ${WINDOW_MS} ms after ${WARMUP_MS} ms warm-up):`,
  );
  for (const kind of ['spsc', 'mpsc'] as const) {
    const { shm, i32, ws } = await start([
      { role: 'ring-consumer', kind, index: 0 },
      { role: 'ring-producer', kind, index: 0 },
    ]);
    go(i32, shm);
    const r = await rate(i32, shm, [0]);
    const refused =
      kind === 'spsc' ? new SpscRing(i32, shm.spscRing).refused() : new MpscRing(i32, shm.mpscRing).refused();
    await stopAll(i32, shm, ws);
    lines.push(
      `  ${(kind === 'spsc' ? 'SpscRing' : 'MpscRing (1 producer)').padEnd(24)} ${fmtRate(r).padStart(11)} records/s  (claims refused, ring full: ${refused})`,
    );
  }
}

interface PingResult {
  raw: Summary;
  doorbell: Summary;
  rounds: { mode: PingMode; p50: number }[];
  bell: { sent: number; avoided: number; sleeps: number; spurious: number };
}

async function doorbellLatency(lines: string[]): Promise<void> {
  const schedule: PingMode[] = [];
  for (let r = 0; r < PING_ROUNDS; r++) schedule.push('raw', 'doorbell');
  const { shm, i32, ws } = await start([
    { role: 'ping', side: 'A', schedule },
    { role: 'ping', side: 'B', schedule },
  ]);
  go(i32, shm);
  const [a] = (await stopAll(i32, shm, ws)) as [PingResult, unknown];
  const ratio = a.doorbell.p50 / a.raw.p50;
  const raws = a.rounds.filter((r) => r.mode === 'raw').map((r) => r.p50);
  const bells = a.rounds.filter((r) => r.mode === 'doorbell').map((r) => r.p50);
  const roundRatios = bells.map((b, k) => b / raws[k]);
  lines.push(
    `doorbell wakeup, one-way = round trip / 2 (2 threads on ${availableParallelism()} cores; ${PING_ROUNDS} rounds of each, ${PING_PER_ROUND} round trips a round, interleaved raw/doorbell):`,
  );
  const row = (name: string, s: Summary) =>
    lines.push(
      `  ${name.padEnd(34)} p50 ${us(s.p50).padStart(9)}  p90 ${us(s.p90).padStart(9)}  p99 ${us(s.p99).padStart(9)}  p99.9 ${us(s.p99_9).padStart(9)}  max ${us(s.max).padStart(10)}  n ${s.count}`,
    );
  row('raw Atomics.wait/notify', a.raw);
  row("Doorbell 'if-idle' (prepare/re-check)", a.doorbell);
  lines.push(
    `  side A's doorbell: ${a.bell.sleeps} sleeps, ${a.bell.sent} notifies sent to it, ${a.bell.avoided} rings avoided (A awake), ${a.bell.spurious} spurious`,
  );
  lines.push(
    `  per-round p50 ratio doorbell/raw: median ${median(roundRatios).toFixed(3)}, min ${Math.min(...roundRatios).toFixed(3)}, max ${Math.max(...roundRatios).toFixed(3)}`,
  );
  lines.push(
    `  bar (doorbell p50 / raw p50 <= ${DOORBELL_BAR}): ${ratio <= DOORBELL_BAR ? 'met' : 'NOT met'} (${ratio.toFixed(3)})`,
  );
}

async function lockContended(lines: string[], lockUncontendedNs: number): Promise<void> {
  lines.push(`ShmLock:`);
  lines.push(`  uncontended lock+unlock (tinybench, one thread, median) ${lockUncontendedNs.toFixed(1)} ns`);
  for (const spinLimit of [DEFAULT_LOCK_SPIN, 0]) {
    const { shm, i32, ws } = await start([
      { role: 'lock', index: 0, spinLimit },
      { role: 'lock', index: 1, spinLimit },
    ]);
    const lock = new ShmLock(i32, shm.lock, spinLimit);
    go(i32, shm);
    const r = await rate(i32, shm, [0, 1]);
    await stopAll(i32, shm, ws);
    const st = lock.stats();
    lines.push(
      `  contended, 2 threads on ${availableParallelism()} cores, spinLimit ${String(spinLimit).padEnd(3)} ${fmtRate(r).padStart(11)} acquisitions/s  (whole run: ${((100 * st.contended) / st.acquired).toFixed(1)}% contended, ${((100 * st.slept) / st.acquired).toFixed(2)}% slept)`,
    );
  }
}

async function padding(lines: string[]): Promise<void> {
  lines.push(
    `padding: 2 threads on ${availableParallelism()} cores, each incrementing its own counter; ${PAD_ROUNDS} interleaved rounds of ${PAD_ROUND_MS} ms per layout after a warm-up round, median of per-round sums over the threads:`,
  );
  for (const atomic of [false, true]) {
    const { shm, i32, ws } = await start([
      { role: 'pad', index: 0, atomic },
      { role: 'pad', index: 1, atomic },
    ]);
    const perGap = new Map<number, number[]>(PAD_GAPS.map((g) => [g, []]));
    let round = 0;
    // Round -1 warms up (V8 compiles the loop: its first rounds run several times slower).
    for (let r = -1; r < PAD_ROUNDS; r++) {
      for (const gap of r % 2 ? [...PAD_GAPS].reverse() : PAD_GAPS) {
        round++;
        const msgs = ws.map((w) => message<{ ops: number; ns: number }>(w, 'round'));
        Atomics.store(i32, shm.ctl + GAP, gap);
        Atomics.store(i32, shm.ctl + ROUND, round);
        Atomics.notify(i32, shm.ctl + ROUND);
        await sleep(PAD_ROUND_MS);
        Atomics.store(i32, shm.ctl + STOP, round);
        Atomics.notify(i32, shm.ctl + STOP);
        const res = await Promise.all(msgs);
        if (r >= 0) perGap.get(gap)!.push(res.reduce((a, m) => a + (m.ops * 1e9) / m.ns, 0));
      }
    }
    Atomics.store(i32, shm.ctl + ROUND, -1);
    Atomics.notify(i32, shm.ctl + ROUND);
    await Promise.all(ws.map((w) => w.terminate()));
    const alone = median(perGap.get(ALONE)!);
    const adj = median(perGap.get(1)!);
    lines.push(`  ${atomic ? 'Atomics.add(i32, w, 1)' : 'i32[w]++ (plain)'}`);
    for (const gap of PAD_GAPS) {
      const xs = perGap.get(gap)!;
      const m = median(xs);
      const name =
        gap === ALONE
          ? '1 thread alone'
          : gap === 1
            ? '2, adjacent (4 B apart)'
            : `2, ${gap} words (${gap * 4} B) apart`;
      const vs =
        gap === ALONE
          ? ''
          : `   ${(m / alone).toFixed(2)}x alone${gap === 1 ? '' : `, ${(m / adj).toFixed(2)}x adjacent`}`;
      lines.push(
        `    ${name.padEnd(26)} ${fmtRate(m).padStart(10)} increments/s (rounds ${fmtRate(Math.min(...xs)).trim()}-${fmtRate(Math.max(...xs)).trim()})${vs}`,
      );
    }
    if (median(perGap.get(2 * LINE_WORDS)!) < 1.5 * alone) {
      lines.push('    (the two threads did not get two cores to themselves: other load? The layouts are not compared)');
    }
  }
}

/** Share (%) of all cores' time spent idle over the next 0.5 s: other load on the machine. */
async function idlePercent(): Promise<number> {
  const sample = () => {
    let idle = 0;
    let all = 0;
    for (const c of cpus()) {
      idle += c.times.idle;
      all += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
    }
    return { idle, all };
  };
  const a = sample();
  await sleep(500);
  const b = sample();
  return Math.round((100 * (b.idle - a.idle)) / Math.max(1, b.all - a.all));
}

export async function main(): Promise<void> {
  const lines: string[] = [];
  const out = () => {
    process.stdout.write(`${lines.join('\n')}\n`);
    lines.length = 0;
  };
  lines.push(
    `shm bench: Node ${process.version}, ${availableParallelism()} cores (os.availableParallelism()); all cores idle ${await idlePercent()}% in the 0.5 s before start`,
  );
  const lockNs = await ringsOneThread(lines);
  out();
  await ringsTwoThreads(lines);
  out();
  await doorbellLatency(lines);
  out();
  await lockContended(lines, lockNs);
  out();
  await padding(lines);
  lines.push(
    `all cores idle ${await idlePercent()}% in the 0.5 s after the end (other processes may share these cores)`,
  );
  out();
}

if (!isMainThread && (workerData as WorkerData | null)?.benchShm) {
  runJob(workerData as WorkerData);
} else if (isMainThread && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
