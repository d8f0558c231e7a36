/**
 * The interrupt controller and local timers: `workers/irq`.
 *
 * It keeps `jiffies` (stored at each tick boundary from the shared clock and HZ), delivers the
 * tick to every CPU that is not idle (NOHZ: an idle CPU takes no tick unless a non-deferrable
 * timer has expired on it, or the period of its throttled RT tasks has ended (CPUF_RT_UNTHROTTLE:
 * the kernel's rt_period_timer), in which case it is kicked awake; during Drain every CPU ticks, so
 * deferred work parked on deferrable timers completes), and generates the device interrupts of
 * a trial at the chosen rate and pattern.
 *
 * Device interrupts are not raised on time: every ARRIVAL_REFILL_NS the thread publishes each
 * target CPU's arrivals for the next ARRIVAL_HORIZON_NS into that CPU's arrival ring
 * (irqchip.ts, Arrivals), and the CPU takes each at its first preemption point at or after its
 * due time, or, idle, sleeps until it is due. The thread itself only sleeps: it wakes for the
 * next tick boundary or refill, whichever is first (Atomics.wait oversleeps ~0.1 ms here; ticks
 * are therefore up to ~0.1 ms late, and arrivals are published far enough ahead not to care).
 * Arrivals more than IRQ_MAX_LAG_NS behind when generated (the thread was descheduled) are
 * skipped and counted, not burst out.
 *
 * With `--irq-trace` the arrivals come from a recorded trace instead (src/irq/replay.ts,
 * TraceReplay: due times and irq numbers as recorded, offset 0 at each trial's start), published
 * the same way and counted the same way, plus `irqs_replayed`.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { hostWaitMs, initClock, nowNs } from '../clock.js';
import { ARRIVAL_FIRST, ARRIVAL_FULL, Arrivals, IrqChip } from '../hw/irqchip.js';
import {
  C_EPOCH,
  C_IRQ_CPU_NS,
  C_JIFFIES,
  C_PHASE,
  C_STOP,
  CPU_COUNTERS,
  CPU_F64,
  CPU_NEXT_TIMER,
  CPU_OWNER,
  CPU_WORDS,
  CPUF_RT_UNTHROTTLE,
  CpuCounter,
  CpuFlag,
  GlobalCounter,
  genEnter,
  genExit,
  Phase,
} from '../hw/layout.js';
import { TlWhat, timelineOf } from '../hw/timeline.js';
import { TraceReplay } from '../irq/replay.js';
import { DOORBELL_WORDS, Doorbell } from '../shm/doorbell.js';
import { attachShm } from '../shm/layout.js';
import { MpscRing } from '../shm/ring.js';
import { readTid } from './host-threads.js';
import type { StartupData, WorkerMessage } from './protocol.js';

/** How far ahead arrivals are published: two refill periods, so a late refill never starves a CPU. */
export const ARRIVAL_HORIZON_NS = 4_000_000;
/** How often the thread refills the arrival rings (at most; it also wakes for ticks). */
export const ARRIVAL_REFILL_NS = 2_000_000;
/** How often the thread samples its own CPU time into C_IRQ_CPU_NS (a /proc read costs ~20 µs). */
export const IRQ_CPU_SAMPLE_NS = 50_000_000;

/** This thread's CPU time in ns (Linux /proc/thread-self/schedstat; NaN where there is none). */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}
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
    initClock(data.epochNs, opts.tdf ?? 1);
    const i32 = attachShm(sab, R.map);
    const bells = plan.threads.map((_, t) => new Doorbell(i32, R.bells + t * DOORBELL_WORDS, opts.notify));
    const rings = R.irqRings.map((b) => new MpscRing(i32, b));
    const chip = new IrqChip(i32, R.cpu, R.globalCounters, rings, bells.slice(0, opts.cpus), opts.notify);
    const myBell = bells[threadId];
    const rand = mulberry32(opts.seed);
    const n = opts.cpus;
    const hz = opts.hz;
    const tickNs = 1e9 / hz;
    // --irq-trace: the trace's arrivals replace the generator's.
    const replay = opts.irqTrace ? new TraceReplay(opts.irqTrace) : undefined;
    const targets = replay ? replay.targets : opts.irq.cpus.filter((c) => c < n);
    const rate = opts.irq.rate;
    const gap = rate > 0 ? 1e9 / rate : Number.POSITIVE_INFINITY;
    const next = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    const burstLeft = new Int32Array(n);
    let lastJ = -1;
    let wasActive = false;
    /** The collect epoch the current stretch of arrivals started in: a new trial is a new stretch. */
    let stretchEpoch = -1;

    const advance = (c: number, t: number): number => {
      if (replay) return replay.advance(c);
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

    const arrivals = new Arrivals(i32, R.arrivals);
    const tl = timelineOf(i32, new Float64Array(sab), R, threadId, nowNs);
    post({
      type: 'ready',
      thread: threadId,
      objects: [],
      objectNames: [],
      wasm: false,
      clockErrorNs: 0,
      tid: readTid(),
    });
    const f64 = new Float64Array(sab);
    let lastSample = Number.NEGATIVE_INFINITY;
    let lastPhase = -1;
    for (;;) {
      if (Atomics.load(i32, R.control + C_STOP) !== 0) return;
      const phase = Atomics.load(i32, R.control + C_PHASE) as Phase;
      tl.phase(phase);
      const now = nowNs();
      if (phase !== lastPhase || now - lastSample > IRQ_CPU_SAMPLE_NS) {
        f64[(R.control + C_IRQ_CPU_NS) / 2] = threadCpuNs();
        lastSample = now;
        lastPhase = phase;
      }
      // Ticks.
      const j = Math.floor(now / tickNs) | 0;
      if (j !== lastJ) {
        lastJ = j;
        Atomics.store(i32, R.control + C_JIFFIES, j);
        tl.instant(TlWhat.Jiffy, -1, j, 0, now);
        if (phase !== Phase.Boot) {
          for (let c = 0; c < n; c++) {
            const idle = Atomics.load(i32, R.cpu + c * CPU_WORDS + CPU_OWNER) === c;
            if (!idle || phase === Phase.Drain) {
              chip.flag(c, CpuFlag.Tick);
            } else if (
              j - Atomics.load(i32, R.cpu + c * CPU_WORDS + CPU_NEXT_TIMER) >= 0 ||
              // A throttled RT queue's period timer (an hrtimer: NOHZ does not stop it) has expired.
              now >= f64[R.cpuF64 / 2 + c * CPU_F64 + CPUF_RT_UNTHROTTLE]
            ) {
              i32[R.cpu + c * CPU_WORDS + CPU_COUNTERS + CpuCounter.nohz_kicks]++; // statistic, this thread only
              chip.flag(c, CpuFlag.Tick);
            }
          }
        }
      }
      // Device interrupts: publish every target's arrivals up to the horizon.
      const active = (phase === Phase.Warmup || phase === Phase.Measure) && (rate > 0 || replay !== undefined);
      // A stretch starts with each trial's warm-up (a new epoch, should the pause between two
      // trials pass while this thread slept).
      const epoch = Atomics.load(i32, R.control + C_EPOCH);
      if (active && (!wasActive || epoch !== stretchEpoch)) {
        stretchEpoch = epoch;
        replay?.start(now);
        for (const c of targets) next[c] = replay ? replay.due(c) : now + rand() * gap;
      }
      wasActive = active;
      // A generation step (C_GEN_INFLIGHT): the phase is read again after entering, so nothing
      // is published after the drain has checked the rings.
      if (active && genEnter(i32, R.control)) {
        tl.begin(TlWhat.GenStep, -1, 0, 0, now);
        const until = now + ARRIVAL_HORIZON_NS;
        for (const c of targets) {
          if (now - next[c] > IRQ_MAX_LAG_NS) {
            const behind = replay ? replay.skipBefore(c, now) : Math.floor((now - next[c]) / gap);
            Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_skipped, behind);
            next[c] = replay ? replay.due(c) : now;
          }
          let published = 0;
          let first = false;
          while (next[c] <= until) {
            const r = arrivals.publish(c, next[c], replay ? replay.irq(c) : IRQ_BASE + c);
            if (r === ARRIVAL_FULL) {
              Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_dropped, 1);
            } else {
              published++;
              if (r === ARRIVAL_FIRST) first = true;
            }
            next[c] = advance(c, next[c]);
          }
          if (published) Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_raised, published);
          if (published && replay) Atomics.add(i32, R.globalCounters + GlobalCounter.irqs_replayed, published);
          tl.instant(TlWhat.Refill, -1, c, published, now);
          // The CPU may sleep with no deadline (its ring was empty): wake it to see the new ones.
          if (first) chip.kick(c);
        }
        genExit(i32, R.control);
        tl.end(TlWhat.GenStep, -1);
      }
      // Sleep until the next tick boundary or refill.
      const wake = Math.min((j + 1) * tickNs, active ? now + ARRIVAL_REFILL_NS : Number.POSITIVE_INFINITY);
      myBell.prepare();
      if (Atomics.load(i32, R.control + C_STOP) !== 0 || Atomics.load(i32, R.control + C_PHASE) !== phase) {
        myBell.cancel();
        continue;
      }
      // An emulated span, waited on the host: × TDF (src/clock.ts hostWaitMs).
      myBell.sleep(hostWaitMs(wake - nowNs()));
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
