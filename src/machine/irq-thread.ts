/**
 * The interrupt controller and local timers: `workers/irq`.
 *
 * It keeps `jiffies` (stored at each tick boundary from the shared clock and HZ), delivers the
 * tick to every CPU that is not idle (NOHZ: an idle CPU takes no tick unless a non-deferrable
 * timer has expired on it, in which case it is kicked awake; during Drain every CPU ticks, so
 * deferred work parked on deferrable timers completes), and raises device interrupts on the
 * chosen CPUs at the chosen rate and pattern while a trial runs.
 *
 * Pacing: events are scheduled at absolute times. The thread sleeps in Atomics.wait when the
 * next event is more than IRQ_SLEEP_MIN_NS away (a wait oversleeps ~0.1 ms here), then raises
 * every event whose time has come, each stamped with the time it was actually raised (so that
 * irq_raise → irq_entry measures the machine, not the generator's lateness). It spins only for
 * the last IRQ_SLEEP_MIN_NS, bounded by the deadline.
 * Device interrupts more than IRQ_MAX_LAG_NS behind are skipped and counted, not burst out.
 */
import { parentPort } from 'node:worker_threads';
import { initClock, nowNs } from '../clock.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { attachShm } from '../shm/layout.js';
import { MpscRing } from '../shm/ring.js';
import { IrqChip, Vector } from './irqchip.js';
import {
  C_JIFFIES,
  C_PHASE,
  C_STOP,
  CPU_COUNTERS,
  CPU_NEXT_TIMER,
  CPU_OWNER,
  CPU_WORDS,
  CpuCounter,
  CpuFlag,
  GlobalCounter,
  genEnter,
  genExit,
  Phase,
} from './layout.js';
import type { StartupData, WorkerMessage } from './protocol.js';

/** Below this, spin to the deadline instead of sleeping (Atomics.wait oversleeps ~100 µs here). */
export const IRQ_SLEEP_MIN_NS = 150_000;
/** Device interrupts this far behind schedule are skipped (counted), not raised in a burst. */
export const IRQ_MAX_LAG_NS = 10_000_000;
/** First device irq number; CPU c's device is irq IRQ_BASE + c. */
const IRQ_BASE = 24;

/** mulberry32: a small seeded PRNG (the seed is printed in every report). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startIrqThread(data: StartupData): Promise<void> {
  const { sab, regions: R, plan, opts, threadId } = data;
  const post = (m: WorkerMessage) => parentPort?.postMessage(m);
  try {
    initClock(data.epochNs);
    const i32 = attachShm(sab, R.map);
    const bells = plan.threads.map((_, t) => new Doorbell(i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    const rings = R.irqRings.map((b) => new MpscRing(i32, b));
    const chip = new IrqChip(i32, R.cpu, R.globalCounters, rings, bells.slice(0, opts.cpus), opts.notify);
    const myBell = bells[threadId];
    const rand = mulberry32(opts.seed);
    const n = opts.cpus;
    const hz = opts.hz;
    const tickNs = 1e9 / hz;
    const targets = opts.irq.cpus.filter((c) => c < n);
    const rate = opts.irq.rate;
    const gap = rate > 0 ? 1e9 / rate : Number.POSITIVE_INFINITY;
    const next = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    const burstLeft = new Int32Array(n);
    let lastJ = -1;
    let wasActive = false;

    const advance = (c: number, t: number): number => {
      switch (opts.irq.pattern) {
        case 'poisson':
          return t - Math.log(1 - rand()) * gap;
        case 'bursts':
          if (--burstLeft[c] > 0) return t;
          burstLeft[c] = opts.irq.burstSize;
          return t + gap * opts.irq.burstSize;
        default:
          return t + gap;
      }
    };

    post({ type: 'ready', thread: threadId, objects: [], wasm: false, clockErrorNs: 0 });
    for (;;) {
      if (Atomics.load(i32, R.control + C_STOP) !== 0) return;
      const phase = Atomics.load(i32, R.control + C_PHASE) as Phase;
      const now = nowNs();
      // Ticks.
      const j = Math.floor(now / tickNs) | 0;
      if (j !== lastJ) {
        lastJ = j;
        Atomics.store(i32, R.control + C_JIFFIES, j);
        if (phase !== Phase.Boot) {
          for (let c = 0; c < n; c++) {
            const idle = Atomics.load(i32, R.cpu + c * CPU_WORDS + CPU_OWNER) === c;
            if (!idle || phase === Phase.Drain) {
              chip.flag(c, CpuFlag.Tick);
            } else if (j - Atomics.load(i32, R.cpu + c * CPU_WORDS + CPU_NEXT_TIMER) >= 0) {
              i32[R.cpu + c * CPU_WORDS + CPU_COUNTERS + CpuCounter.nohz_kicks]++; // statistic, this thread only
              chip.flag(c, CpuFlag.Tick);
            }
          }
        }
      }
      // Device interrupts.
      const active = (phase === Phase.Warmup || phase === Phase.Measure) && rate > 0;
      if (active && !wasActive) for (const c of targets) next[c] = now + rand() * gap;
      wasActive = active;
      let wake = (j + 1) * tickNs;
      // A generation step (C_GEN_INFLIGHT): the phase is read again after entering, so a raise
      // never lands after the drain has checked the rings.
      if (active && genEnter(i32, R.control)) {
        for (const c of targets) {
          if (now - next[c] > IRQ_MAX_LAG_NS) {
            Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_skipped, Math.floor((now - next[c]) / gap));
            next[c] = now;
          }
          while (next[c] <= now) {
            const t = nowNs();
            if (chip.raise(c, Vector.Device, IRQ_BASE + c, t))
              Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_raised, 1);
            next[c] = advance(c, next[c]);
          }
          if (next[c] < wake) wake = next[c];
        }
        genExit(i32, R.control);
      }
      // Wait for the next event.
      const delta = wake - nowNs();
      if (delta > IRQ_SLEEP_MIN_NS) {
        myBell.prepare();
        if (Atomics.load(i32, R.control + C_STOP) !== 0 || Atomics.load(i32, R.control + C_PHASE) !== phase) {
          myBell.cancel();
          continue;
        }
        myBell.sleep((delta - IRQ_SLEEP_MIN_NS / 2) / 1e6);
      } else {
        const until = wake;
        while (nowNs() < until) {
          /* bounded by the deadline, at most IRQ_SLEEP_MIN_NS */
        }
      }
    }
  } catch (e) {
    const err =
      e instanceof Error
        ? e
        : new Error(`threw ${typeof e === 'string' ? JSON.stringify(e) : String(e)} (not an Error)`);
    post({
      type: 'fault',
      thread: threadId,
      threadName: 'irq',
      message: err.message,
      stack: err.stack,
      cpu: -1,
      task: 'irq',
      context: 'thread',
      kind: 'fault',
    });
  }
}
