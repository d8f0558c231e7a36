/**
 * Host stalls and GC (issue 28, item 1; src/machine/host-stall.ts): what recording them costs,
 * and the distribution of gaps between preemption points the threshold was chosen from.
 *
 *   1. The hot path's own cost: `HostStalls.at()` per preemption point (one thread, CPU time,
 *      best of 5 × 2M calls) beside the same loop without it.
 *   2. Machines side by side: detection off (threshold +∞: no /proc descriptors, no GC profile)
 *      and on (the default), otherwise identical; trials alternate off/on, on/off, ...; each
 *      round gives a paired ratio on/off of tcp_lat's one-way mean (from the message rate, as
 *      bench/timeline.ts), on tcp_lat alone and with 20k background interrupts/s per CPU (the
 *      default run's). Median ratio with a distribution-free 95% interval.
 *   3. The gap distribution: the default run's machine (tcp_lat 64 B, 20k interrupts/s, inline)
 *      at thresholds of 20 µs to 1 ms, one trial each: how many gaps pass each, and how many of
 *      those saw the thread's involuntary context switches grow (host preemption) — the lab's own
 *      long steps are gaps with none.
 *
 * Prints; never asserts. Run: npm run bench:stalls
 */
import { loadavg } from 'node:os';
import { nowNs } from '../src/clock.js';
import { tcpLatOptions } from '../src/config/defaults.js';
import type { CpuContext } from '../src/kernel/context.js';
import { HOST_STALL_THRESHOLD_NS, HostStalls } from '../src/machine/host-stall.js';
import type { MachineOptions } from '../src/machine/options.js';
import { type BenchUsage, benchArgs } from './cli.js';
import { builtin, isMain, Machine, machineOptions, median, table, threadsLine, trial, warmUp } from './lib.js';
import { medianInterval95 } from './tracing.js';

const ROUNDS = 10;
const WARMUP_MS = 300;
const TRIAL_WARMUP_MS = 30;
const TRIAL_MS = 200;
const GAP_TRIAL_MS = 1000;
const GAP_THRESHOLDS_US = [20, 50, 100, 200, 500, 1000];

const options = (irqRate: number, thresholdNs?: number): MachineOptions =>
  machineOptions({
    irq: { rate: irqRate, pattern: 'constant', burstSize: 32, cpus: [0, 1] },
    workload: tcpLatOptions(),
    strategies: [builtin('inline')],
    ...(thresholdNs !== undefined ? { hostStalls: { thresholdNs } } : {}),
  });

/** ns of CPU time per preemption point: [without the detector, with it]. */
function hotPathCost(): [number, number] {
  const fake = { cpu: 0 } as unknown as CpuContext;
  const det = new HostStalls(fake, { thresholdNs: 1e15 }, () => {}, 0, undefined, undefined);
  const N = 2_000_000;
  let sink = 0;
  const loop = (on: boolean) => {
    for (let k = 0; k < N; k++) {
      const now = nowNs();
      if (on) det.at(now);
      sink += now;
    }
  };
  const best = (on: boolean) => {
    let b = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 5; run++) {
      const c0 = process.cpuUsage();
      loop(on);
      const c = process.cpuUsage(c0);
      b = Math.min(b, ((c.user + c.system) * 1000) / N);
    }
    return b;
  };
  best(true);
  const r: [number, number] = [best(false), best(true)];
  if (sink === 0) process.stdout.write(''); // keep the sink alive
  return r;
}

async function sideBySide(irqRate: number): Promise<{ row: string[]; note: string; threads: number }> {
  const machines: Machine[] = [];
  const side: Record<'off' | 'on', number[]> = { off: [], on: [] };
  let stalls = 0;
  let threads = 0;
  try {
    for (const on of [false, true]) {
      const m = await Machine.boot(options(irqRate, on ? undefined : Number.POSITIVE_INFINITY));
      machines.push(m);
      threads += m.plan.threads.length;
      await warmUp(m, WARMUP_MS);
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const t = await trial(machines[k], TRIAL_WARMUP_MS, TRIAL_MS);
        side[k === 0 ? 'off' : 'on'].push(1e9 / (2 * (t.counters.app_messages / t.seconds)));
        if (k === 1) stalls += t.counters.host_stalls;
      }
    }
  } finally {
    for (const m of machines) await m.stop();
  }
  const ratios = side.on.map((v, i) => v / side.off[i]);
  const [lo, hi] = medianInterval95(ratios);
  const us = (x: number) => `${(x / 1000).toFixed(2)} us`;
  return {
    row: [
      `tcp_lat one-way mean, ${irqRate / 1000}k irqs/s`,
      us(median(side.off)),
      us(median(side.on)),
      median(ratios).toFixed(3),
      `${lo.toFixed(3)}-${hi.toFixed(3)}`,
    ],
    note: `  ${irqRate / 1000}k irqs/s: ${stalls} stalls in the "on" machine's ${ROUNDS} trials; on/off per round: ${ratios.map((x) => x.toFixed(3)).join(' ')}`,
    threads,
  };
}

async function gaps(): Promise<string[][]> {
  const rows: string[][] = [];
  for (const th of GAP_THRESHOLDS_US) {
    const m = await Machine.boot(options(20_000, th * 1000));
    try {
      await warmUp(m, WARMUP_MS);
      const t = await trial(m, TRIAL_WARMUP_MS, GAP_TRIAL_MS);
      const c = t.counters;
      const h = t.hist.host_stall;
      rows.push([
        `${th} us`,
        String(c.host_stalls),
        `${(c.host_stalls / t.seconds) | 0}/s`,
        c.host_stalls > 0 ? `${((100 * c.host_stalls_preempted) / c.host_stalls).toFixed(0)}%` : '-',
        `${(c.host_stall_us / 1000).toFixed(1)} ms (${(c.host_stall_us / 1e4 / t.seconds / m.opts.cpus) | 0}%)`,
        `${(c.host_steal_us / 1000).toFixed(1)} ms`,
        h ? `${(h.getValueAtPercentile(50) / 1000).toFixed(0)} / ${(h.maxValue / 1000).toFixed(0)} us` : '-',
        `${c.gc_pauses} (${(c.gc_us / 1000).toFixed(1)} ms)`,
        String(c.app_messages),
      ]);
    } finally {
      await m.stop();
    }
  }
  return rows;
}

export async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const [offNs, onNs] = hotPathCost();
  const out: string[] = [];
  const rows: string[][] = [];
  const notes: string[] = [];
  let threads = 0;
  for (const rate of [0, 20_000]) {
    const r = await sideBySide(rate);
    rows.push(r.row);
    notes.push(r.note);
    threads += r.threads;
  }
  const gapRows = await gaps();
  out.push(`host-stall bench: Node ${process.version}, ${threadsLine(threads, '; machines take turns')}`);
  out.push(`  host load average ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)} (1 min)`);
  out.push(
    `  one preemption point's clock read alone / with HostStalls.at() (one thread, CPU time, best of 5 x 2M): ${offNs.toFixed(1)} ns / ${onNs.toFixed(1)} ns`,
  );
  out.push(
    `  ${ROUNDS} rounds x ${TRIAL_MS} ms per trial and side, order off/on alternating; off: threshold +inf (no /proc, no GC profile); on: the default ${HOST_STALL_THRESHOLD_NS / 1000} us`,
  );
  out.push(...table(['', 'detection off (median)', 'on (median)', 'ratio on/off (median)', '95% interval'], rows));
  out.push(...notes);
  out.push('  (a ratio above 1 is a cost; an interval that holds 1 is no measurable difference at this noise)');
  out.push('');
  out.push(
    `  gaps between preemption points of running CPU threads: the default run's machine (tcp_lat 64 B, 20k irqs/s, inline), ${GAP_TRIAL_MS} ms at each threshold`,
  );
  out.push(
    ...table(
      [
        'threshold',
        'gaps above',
        'rate',
        'with invol. switch',
        'time in them (of CPU time)',
        'steal charged',
        'p50 / max',
        'GCs',
        'messages',
      ],
      gapRows,
    ),
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

export const USAGE: BenchUsage = {
  script: 'bench:stalls',
  about:
    "What recording host stalls and GC costs (the detector's own cost per preemption point, and machines with detection off and on, side by side), and the distribution of gaps between preemption points its threshold was chosen from. About 30 seconds.",
  flags: [],
};

if (isMain(import.meta.url)) {
  benchArgs(USAGE);
  await main();
}
