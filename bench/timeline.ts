/**
 * What `--timeline` costs (issue #16): the same short trials with the timeline rings off and on,
 * side by side in one run, on two workloads:
 *
 *   tcp_lat   64 B ping-pong, client CPU 0, server CPU 1, no background interrupts, inline:
 *             one-way mean from the message rate (1e9 / (2 × messages/s)), as bench/tracing.ts.
 *   irq       device interrupts offered at 2M/s to CPU 0 (more than a CPU here can take), no
 *             application: interrupts handled per second is the CPU's interrupt throughput;
 *             every interrupt writes 2 timeline records (its irq slice), plus the hard-IRQ
 *             entry's 2 per batch and the hand-offs'.
 *
 * Four machines (workload × timeline off/on, otherwise identical, trace points on in all); their
 * trials alternate off/on, on/off, ... so that drift on this noisy host hits both sides alike.
 * Each round gives one paired ratio on/off, summarised by its median with a distribution-free
 * 95% interval. After each "on" trial the main thread reads the rings, as a run does (not on a
 * measured path). Prints; never asserts.
 *
 * First, a hook's own cost on one thread (no scheduling noise): a begin/end pair with a
 * timestamp given, into a recorder that is off, and into one that records (a 131072-record ring).
 *
 * Run: npm run bench:timeline
 */
import { loadavg } from 'node:os';
import { nowNs } from '../src/clock.js';
import { tcpLatOptions } from '../src/config/defaults.js';
import { Phase, timelineRingWords } from '../src/hw/layout.js';
import { initTimelineRing, Timeline, TlWhat, timelineRecordsFor } from '../src/hw/timeline.js';
import type { MachineOptions } from '../src/machine/options.js';
import { TimelineCollector } from '../src/report/timeline/timeline.js';
import { type BenchUsage, benchArgs } from './cli.js';
import { builtin, isMain, Machine, machineOptions, median, table, threadsLine, trial, warmUp } from './lib.js';
import { medianInterval95 } from './tracing.js';

const ROUNDS = 12;
const WARMUP_MS = 300;
const TRIAL_WARMUP_MS = 30;
const TRIAL_MS = 200;
const WINDOW_MS = 50;

type Workload = 'tcp_lat' | 'irq';

const options = (w: Workload, timeline: boolean): MachineOptions =>
  machineOptions({
    ...(w === 'tcp_lat'
      ? {
          irq: { rate: 0, pattern: 'constant', burstSize: 32, cpus: [0, 1] },
          workload: tcpLatOptions(),
        }
      : { irq: { rate: 2_000_000, pattern: 'constant', burstSize: 32, cpus: [0] }, workload: { kind: 'irq_only' } }),
    strategies: [builtin('inline')],
    ...(timeline ? { timelineRecords: timelineRecordsFor(WINDOW_MS) } : {}),
  });

/** The figure a trial gives: one-way ns (tcp_lat), interrupts per second (irq). */
function figure(w: Workload, t: Awaited<ReturnType<typeof trial>>): number {
  return w === 'tcp_lat' ? 1e9 / (2 * (t.counters.app_messages / t.seconds)) : t.counters.interrupts / t.seconds;
}

/**
 * ns of CPU time per begin/end pair of hooks: [off, on], best of 5 runs of 2M pairs. CPU time
 * (process.cpuUsage: no machine runs yet, so it is this thread's), not wall time, so that a
 * loaded host's preemption is not counted.
 */
export function hookCost(): [number, number] {
  const cap = timelineRecordsFor(WINDOW_MS);
  const sab = new SharedArrayBuffer(timelineRingWords(cap) * 4);
  const i32 = new Int32Array(sab);
  initTimelineRing(i32, 0, cap);
  const on = new Timeline(i32, new Float64Array(sab), 0, nowNs);
  on.phase(Phase.Measure);
  const off = Timeline.off();
  const N = 2_000_000;
  const pairs = (tl: Timeline) => {
    for (let k = 0; k < N; k++) {
      tl.begin(TlWhat.Irq, 0, 1, 24, k);
      tl.end(TlWhat.Irq, 0, 1, 0, k + 0.5);
    }
  };
  const best = (tl: Timeline) => {
    let b = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 5; run++) {
      const c0 = process.cpuUsage();
      pairs(tl);
      const c = process.cpuUsage(c0);
      b = Math.min(b, ((c.user + c.system) * 1000) / N);
    }
    return b;
  };
  best(on); // compile both shapes before measuring either
  return [best(off), best(on)];
}

export async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const [offNs, onNs] = hookCost();
  const lines: string[][] = [];
  const notes: string[] = [];
  let threads = 0;
  for (const w of ['tcp_lat', 'irq'] as Workload[]) {
    const machines: Machine[] = [];
    const side: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const collector = new TimelineCollector(WINDOW_MS, timelineRecordsFor(WINDOW_MS), 'bench');
    let records = 0;
    try {
      for (const on of [false, true]) {
        const m = await Machine.boot(options(w, on));
        machines.push(m);
        threads += m.plan.threads.length;
        await warmUp(m, WARMUP_MS);
      }
      for (let r = 0; r < ROUNDS; r++) {
        for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
          const m = machines[k];
          m.resetEntropy();
          const t = await trial(m, TRIAL_WARMUP_MS, TRIAL_MS);
          side[k === 0 ? 'off' : 'on'].push(figure(w, t));
          if (k === 1) {
            const end = m.nowNs();
            collector.trialEnd(m, {
              point: 0,
              label: 'inline',
              round: r,
              measureStartNs: end - t.seconds * 1e9,
              measureEndNs: end,
            });
          }
        }
      }
      records = machines[1].R.timeline.reduce((a, base) => a + Atomics.load(machines[1].i32, base), 0);
    } finally {
      for (const m of machines) await m.stop();
    }
    const ratios = side.on.map((v, i) => v / side.off[i]);
    const [lo, hi] = medianInterval95(ratios);
    const fmt = (x: number) => (w === 'tcp_lat' ? `${(x / 1000).toFixed(2)} us` : `${(x / 1e6).toFixed(3)} M/s`);
    lines.push([
      w === 'tcp_lat' ? 'tcp_lat one-way mean' : 'interrupt throughput',
      fmt(median(side.off)),
      fmt(median(side.on)),
      median(ratios).toFixed(3),
      `${lo.toFixed(3)}-${hi.toFixed(3)}`,
    ]);
    const meta = collector.file().otherData;
    notes.push(
      `  ${w}: ${records} timeline records written by the "on" machine's threads in all (Measure + Drain), ${meta.recordsOverwritten} overwritten before a read, ${meta.truncatedWindows.length} of ${meta.trials} windows truncated; on/off per round: ${ratios.map((x) => x.toFixed(3)).join(' ')}`,
    );
  }
  const out: string[] = [];
  out.push(`timeline bench: Node ${process.version}, ${threadsLine(threads, '; machines take turns')}`);
  out.push(`  host load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)} (1 min)`);
  out.push(
    `  one begin/end pair of hooks, timestamps given (one thread, CPU time, best of 5 x 2M): off ${offNs.toFixed(1)} ns, on ${onNs.toFixed(1)} ns (2 records of 32 bytes)`,
  );
  out.push(
    `  ${ROUNDS} rounds x ${TRIAL_MS} ms per trial and side, order off/on alternating; window ${WINDOW_MS} ms (${timelineRecordsFor(WINDOW_MS)} records a thread); inline, trace points on`,
  );
  out.push(
    ...table(['', 'timeline off (median)', 'timeline on (median)', 'ratio on/off (median)', '95% interval'], lines),
  );
  out.push(...notes);
  out.push(
    '  (for tcp_lat a ratio above 1 is a cost; for interrupt throughput a ratio below 1 is; an interval that holds 1 is no measurable difference at this noise)',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

export const USAGE: BenchUsage = {
  script: 'bench:timeline',
  about:
    'What --timeline costs: the same short trials with the timeline rings off and on, side by side, on tcp_lat and on a CPU taking all the device interrupts it can.',
  flags: [],
};

if (isMain(import.meta.url)) {
  benchArgs(USAGE);
  await main();
}
