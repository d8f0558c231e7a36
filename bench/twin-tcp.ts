/**
 * bench:twin's question (d), seed 000's in user space: what waking a nice −20 thread on the
 * client's CPU every K exchanges costs a loopback TCP ping-pong (bench/c/twin.c `tcp`), beside what
 * the lab's workqueue strategy (system_highpri_wq: a nice −20 kworker on the interrupted CPU) costs
 * its tcp_lat against inline, at the same rate of wake-ups per exchange.
 *
 * The host: a qperf-like client on CPU 0 and server on CPU 1 over 127.0.0.1 (TCP_NODELAY, 64-byte
 * messages); every K exchanges the client, after its receive, either does W of work itself
 * (`inline`) or wakes a nice −20 thread pinned to CPU 0 that does it (`wake`). Δ = wake − inline
 * in mean one-way latency. K is the lab's: exchanges per hand-off of its workqueue run, so both
 * sides defer work at the same rate per exchange. W is 1 µs: random.c's mix_interrupt_randomness()
 * (a BLAKE2s update of 32 bytes under input_pool.lock) takes well under that on a modern x86
 * (issue 25), so the host's Δ is the hand-off's cost, not the work's.
 *
 * The lab: its default machine (tcp_lat, the default NIC) at the profile nearest the host's
 * kernel, inline against workqueue, 3 interleaved trials each; Δ is the paired difference of mean
 * one-way latency with its 95% interval. Both are timing figures: nothing is asserted.
 *
 * Context: main thread, from bench/twin.ts main(); runs the lab and the twin binary in turn.
 */
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import type { KernelName } from '../src/kernel/profiles.js';
import type { RunResults, StrategyResult } from '../src/report/types.js';
import { specs, stageValue, strategy } from '../src/scenarios/common.js';
import { table } from './lib.js';

/** The twin binary's `key=value` line as numbers, or why there is none. */
export type HostRun = (args: (string | number)[]) => { values: Record<string, number> } | { none: string };

/** W: the deferred work's length on the host (see the header). */
const TCP_WORK_US = 1;
/** The message size: qperf tcp_lat's smallest, the seed's 64-byte point. */
const TCP_MSG_BYTES = 64;
/** Host repetitions of each mode, alternated (inline, wake, inline, ...) so a drift in the host's
 *  load moves both alike. */
const HOST_REPS = 3;
/** The fast pool triggers the lab is run at: random.c's 64 of seed 000's kernels, and every interrupt. */
const TRIGGERS = [64, 1];

interface LabSide {
  inlineMean: number;
  diff: number;
  ciLow: number;
  ciHigh: number;
  exchangesPerWake: number;
}
interface HostSide {
  inlineMean: number;
  diff: number;
  /** The smallest and largest of the reps' own wake − inline differences (ns): the host's noise. */
  diffLow: number;
  diffHigh: number;
  k: number;
  runs: number;
}

async function labTcp(
  profile: KernelName,
  hz: number,
  trigger: number,
  tdf: number,
): Promise<LabSide | { none: string }> {
  const config = resolveConfig({
    flags: {
      outDir: null,
      until: null,
      kernel: profile,
      hz,
      trials: 3,
      trialMs: '1s',
      warmupMs: '300ms',
      control: false,
      fastPool: { trigger },
      tdf,
    } as never,
    cwd: process.cwd(),
  });
  const r: RunResults = await runExperiment({
    ...config,
    strategies: specs(['inline', 'workqueue']),
    baseline: 'inline',
    sweep: null,
  });
  if (r.status !== 'completed') return { none: `the lab run ${r.status}: ${r.error?.message ?? ''}`.trim() };
  const point = r.points[0];
  const inl = strategy(point, 'inline');
  const wq: StrategyResult | undefined = strategy(point, 'workqueue');
  const c = wq?.comparison?.find((x) => x.stage === 'one_way' && x.metric === 'mean');
  const exchanges = wq?.merged.one_way?.summary.count ?? 0;
  const handoffs = wq?.counters.handoffs ?? 0;
  if (!inl || !wq || !c || handoffs === 0)
    return { none: 'no workqueue hand-off or no one-way comparison in the lab run' };
  return {
    inlineMean: stageValue(inl, 'one_way', 'mean'),
    diff: c.diff,
    ciLow: c.ciLow,
    ciHigh: c.ciHigh,
    exchangesPerWake: exchanges / handoffs,
  };
}

function hostTcp(host: HostRun, iters: number, k: number): HostSide | { none: string } {
  const means = { inline: 0, wake: 0 };
  let runs = 0;
  let diffLow = Number.POSITIVE_INFINITY;
  let diffHigh = Number.NEGATIVE_INFINITY;
  for (let rep = 0; rep < HOST_REPS; rep++) {
    const rep1 = { inline: 0, wake: 0 };
    for (const mode of ['inline', 'wake'] as const) {
      const r = host(['tcp', iters, k, TCP_WORK_US, mode, TCP_MSG_BYTES]);
      if ('none' in r) return r;
      rep1[mode] = r.values.mean;
      means[mode] += r.values.mean / HOST_REPS;
      if (mode === 'wake') runs += r.values.kthread_runs;
    }
    diffLow = Math.min(diffLow, rep1.wake - rep1.inline);
    diffHigh = Math.max(diffHigh, rep1.wake - rep1.inline);
  }
  return { inlineMean: means.inline, diff: means.wake - means.inline, diffLow, diffHigh, k, runs };
}

const us = (ns: number) => `${(ns / 1e3).toFixed(2)} µs`;
const pct = (d: number, base: number) => `${d >= 0 ? '+' : ''}${((100 * d) / base).toFixed(1)}%`;

/** Question (d): rows for each trigger, and the notes under them. */
export async function tcpTwin(
  host: HostRun,
  iters: number,
  profile: KernelName,
  hz: number,
  tdf = 1,
): Promise<string[]> {
  const body: string[][] = [];
  const notes: string[] = [];
  for (const trigger of TRIGGERS) {
    process.stderr.write(`(d) trigger ${trigger}: lab...   \r`);
    const lab = await labTcp(profile, hz, trigger, tdf);
    if ('none' in lab) {
      notes.push(`  (d) trigger ${trigger}: lab: ${lab.none}`);
      continue;
    }
    const k = Math.max(1, Math.round(lab.exchangesPerWake));
    process.stderr.write(`(d) trigger ${trigger}: host... \r`);
    const h = hostTcp(host, iters * 20, k);
    const labPct = (100 * lab.diff) / lab.inlineMean;
    const hostCells =
      'none' in h
        ? ['-', '-', '-']
        : [
            us(h.inlineMean),
            `${us(h.diff)} [${(h.diffLow / 1e3).toFixed(2)}, ${(h.diffHigh / 1e3).toFixed(2)}]`,
            pct(h.diff, h.inlineMean),
          ];
    if ('none' in h) notes.push(`  (d) trigger ${trigger}: host: ${h.none}`);
    const hostPct = 'none' in h ? Number.NaN : (100 * h.diff) / h.inlineMean;
    body.push([
      `(d) wake 1 in ${k} exchanges`,
      ...hostCells,
      us(lab.inlineMean),
      `${us(lab.diff)} [${(lab.ciLow / 1e3).toFixed(2)}, ${(lab.ciHigh / 1e3).toFixed(2)}]`,
      pct(lab.diff, lab.inlineMean),
      Number.isFinite(hostPct) && Math.abs(hostPct) > 0.05 ? `${(labPct / hostPct).toFixed(2)}x` : 'n/a',
      // The wake-up's own cost per exchange, in µs on both sides (the two inline baselines differ
      // by the host's whole loopback stack); only where every host rep saw the wake-up cost something.
      'none' in h || !(h.diffLow > 0) ? 'n/a' : `${(lab.diff / h.diff).toFixed(2)}x`,
    ]);
  }
  return [
    ...table(
      [
        'question',
        'host inline',
        'host Δ [reps]',
        'host Δ%',
        'lab inline',
        'lab Δ [95%]',
        'lab Δ%',
        'lab/host Δ%',
        'lab/host Δ',
      ],
      body,
    ),
    `  (d) one-way mean latency; host: loopback TCP, ${TCP_MSG_BYTES} B, ${HOST_REPS} alternated runs of each mode, wake`,
    `      = a nice -20 thread on the client's CPU doing ${TCP_WORK_US} µs; lab: tcp_lat, workqueue − inline at fast-pool`,
    `      trigger ${TRIGGERS.join(' and ')}, K = the lab's exchanges per hand-off (both CPUs' interrupts).`,
    "      host Δ [reps]: the mean difference and the smallest and largest of the runs' own; lab/host Δ: the",
    "      wake-up's cost per exchange in µs, lab over host (n/a where a host run saw none: the host's noise).",
    ...notes,
  ];
}
