/**
 * bench:twin's two sides of question (a), shared by its table (twin.ts) and its sweep of the
 * waker's work (twin-sweep.ts): the host's answer from bench/c/twin.c and the lab's from the
 * cpu-hog scenario's machine, each as a latency distribution with its share of prompt wake-ups,
 * and the scheduler rules alone on a fake clock (twin-model.ts) as the same distribution.
 *
 * Context: main thread; async where a lab machine runs. Timing figures, never asserted.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsHistogram } from 'hdr-histogram-js';
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import type { KernelName } from '../src/kernel/profiles.js';
import { HOST_HELPER_IDLE } from '../src/machine/host-threads.js';
import type { AppTaskSpec, HogHosting, MachineOptions } from '../src/machine/options.js';
import { decodeHistogram } from '../src/report/decode.js';
import type { Calibration, RunResults, StageName } from '../src/report/types.js';
import { specs, stageValue, strategy } from '../src/scenarios/common.js';
import { cpuHogPreset, requests } from '../src/scenarios/cpu-hog.js';
import { repoRoot } from './fastmix.js';
import { median } from './lib.js';
import type { RoundCount } from './twin-bar.js';
import { modelWaits } from './twin-model.js';

export const BOUND = 'workqueue(wq=system)';
export const UNBOUND = 'unbound(scope=system)';
/** The lab machine's CPUs: seed 004's two (cpu-hog needs two: the unbound worker's CPU). */
export const LAB_CPUS = 2;
/** The lab's warm-up before each measured trial (the cpu-hog preset's 300 ms). */
export const LAB_WARMUP_MS = 300;
/**
 * The rules' answers pool this many phases of the tick against the waker's period (twin-model.ts).
 * One nice-0 hog, the waker's CPU 421 µs, 1000 wake-ups a phase: 5.9% of wake-ups waited past
 * 0.5 ms over 8 phases, 7.8% over 32, 7.6% over 64 (~0.4 s a question at 32).
 */
export const MODEL_PHASES = 32;

/** One latency distribution (ns). */
export interface Dist {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  n: number;
  /** Share of the wake-ups served within PROMPT_NS. */
  prompt: number;
  /** Each round's wake-ups and those past PROMPT_NS (medianDist keeps them all): bench/twin-bar.ts's interval. */
  rounds?: readonly RoundCount[];
}

/**
 * A wake-up served within 500 µs is prompt (bench/c/twin.c PROMPT_NS): the wake-up path's own
 * cost, not a wait for a scheduler tick (4 ms at HZ 250). Beside a nice −20 hog the waits are a
 * mixture of prompt wake-ups and waits for a tick (docs/twin.md), and p50 falls on either side of
 * the boundary from run to run: the share says where the split is.
 */
export const PROMPT_NS = 500_000;

/** A side's answer: numbers, or why there are none. */
export type Answer = Dist | { none: string };

/** What a lab run of question (a) takes from bench:twin's options. */
export interface LabRunOptions {
  iters: number;
  periodUs: number;
  /** The lab side's time dilation factor (`--tdf`, src/harness/tdf.ts): 1, none. */
  tdf: number;
  /** Where the lab's hogs run (`--hogs`, src/machine/options.ts HOG_HOSTINGS). */
  hogs: HogHosting;
  /** The lab side's context-switch model (`--switch-cost`, src/harness/switch-cost.ts). */
  switchCost: 'host' | 'off';
}

// ---- the host ------------------------------------------------------------------------------

/** Compile bench/c/twin.c; undefined (and the reason) without a working compiler. */
export function compileTwin(dir: string): { bin?: string; why?: string } {
  const src = join(repoRoot(), 'bench', 'c', 'twin.c');
  const bin = join(dir, 'twin');
  const cc = spawnSync('cc', ['-O2', '-pthread', '-o', bin, src], { encoding: 'utf8' });
  if (cc.error) return { why: `no C compiler (cc: ${cc.error.message}); install gcc or clang to measure the host` };
  if (cc.status !== 0) return { why: `cc failed on ${src}: ${cc.stderr.trim().split('\n')[0]}` };
  return { bin };
}

/** The twin binary's `key=value` line, or why there is none. */
export type TwinOut = { values: Record<string, number> } | { none: string };

/** Run the twin binary. */
export function runTwin(bin: string, args: (string | number)[]): TwinOut {
  const r = spawnSync(bin, args.map(String), { encoding: 'utf8', timeout: 120_000 });
  if (r.error) return { none: `twin ${args[0]}: ${r.error.message}` };
  if (r.status !== 0)
    return { none: (r.stderr.trim().split('\n')[0] || `twin ${args[0]} exited ${r.status}`).replace(/^twin: /, '') };
  const out: Record<string, number> = {};
  for (const kv of r.stdout.trim().split(/\s+/)) {
    const [k, v] = kv.split('=');
    out[k] = Number(v);
  }
  return { values: out };
}

/**
 * The waker's CPU per cycle that twin.c wrote to CPUSEQ_FILE (ns, in order), or undefined where
 * the run wrote none (no compiler, a failed run).
 */
export function readCpuSeq(path: string): number[] | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
  const seq = text
    .trim()
    .split(/\s+/)
    .map(Number)
    .filter((x) => Number.isFinite(x) && x > 0);
  return seq.length > 0 ? seq : undefined;
}

export function hostDist(r: TwinOut): Answer {
  if ('none' in r) return r;
  const v = r.values;
  return {
    p50: v.p50,
    p90: v.p90,
    p99: v.p99,
    max: v.max,
    n: v.count,
    prompt: v.prompt / v.count,
    rounds: [{ n: v.count, slow: v.count - v.prompt, p50: v.p50, p99: v.p99 }],
  };
}

// ---- the lab -------------------------------------------------------------------------------

export interface Lab {
  profile: KernelName;
  hz: number;
  calibration?: Calibration;
  /**
   * labHogs' runs, and those whose helpers (cpu-hog's preset: SCHED_IDLE) were raised to the nice
   * because one starved (meta.hostHelpersRaisedMs; src/machine/host-threads.ts watchIdleHelpers).
   */
  idled?: { runs: number; raised: number };
}

function hogs(n: number, nice: number): AppTaskSpec[] {
  return Array.from({ length: n }, () => ({
    kind: 'hog' as const,
    cpu: 0,
    policy: 'normal' as const,
    nice,
    rtPrio: 0,
  }));
}

/**
 * The cpu-hog scenario's machine (its preset: idle halt, tracing, the driver's payload) with `n`
 * hogs at `nice` on CPU 0 and interrupts at 1/T on CPU 0: one trial of iters · T per strategy.
 */
export async function labHogs(
  lab: Lab,
  o: LabRunOptions,
  n: number,
  nice: number,
  unbound: boolean,
  workNs: number,
  /** Each run's work in order (the host waker's CPU per cycle), instead of workNs every run. */
  workSeq?: readonly number[],
): Promise<RunResults> {
  const config = resolveConfig({
    preset: {
      name: 'bench:twin',
      config: {
        ...cpuHogPreset.config,
        cpus: LAB_CPUS,
        hz: lab.hz,
        kernel: lab.profile,
        tdf: o.tdf,
        hogs: o.hogs,
        switchCost: o.switchCost,
        trials: 1,
        trialMs: `${Math.round((o.iters * o.periodUs) / 1000)}ms`,
        warmupMs: `${LAB_WARMUP_MS}ms`,
        control: false,
        irq: { ...cpuHogPreset.config.irq, rate: 1e6 / o.periodUs },
      } as never, // the preset's literal types (idle: 'halt') widened by the spread
    },
    flags: { outDir: null, until: null } as never,
    cwd: process.cwd(),
  });
  const run = {
    ...config,
    strategies: specs(unbound ? ['workqueue:wq=system', 'unbound:scope=system'] : ['workqueue:wq=system']),
    baseline: BOUND,
    sweep: null,
  };
  const r = await runExperiment(run, {
    ...(lab.calibration ? { calibration: lab.calibration } : {}),
    adjust: (m: MachineOptions): MachineOptions => ({
      ...m,
      workload: n > 0 ? { kind: 'custom', tasks: hogs(n, nice) } : { kind: 'irq_only' },
      // requests_slow counts the requests that waited past PROMPT_NS (cpu-hog's counter; the
      // prompt share printed here is per run, from handoff_to_start: labDist).
      payload: { kind: 'driver_work', workNs, slowNs: PROMPT_NS, ...(workSeq ? { workSeqNs: workSeq } : {}) },
      irq: { ...m.irq, cpus: [0] },
    }),
  });
  lab.calibration ??= r.meta.calibration;
  if (r.meta.hostHelpersPolicy === HOST_HELPER_IDLE) {
    lab.idled ??= { runs: 0, raised: 0 };
    lab.idled.runs++;
    if (r.meta.hostHelpersRaisedMs !== undefined) lab.idled.raised++;
  }
  return r;
}

/**
 * The lab's answer as the host's is counted: one sample per run of the work (handoff_to_start,
 * from the interrupt that queued it to its start), as twin.c counts one per wake-up and skips
 * the periods a late wake-up missed. Every request (request_to_start) would count the interrupts
 * that found the work still pending too, each waiting for the same run: beside two nice −20 hogs,
 * whose waits run to tens of ms, that is most requests, and their share of prompt ones falls
 * (22% against 52% per run in one probe) for a reason that is not the scheduler's.
 */
/**
 * `label`'s distribution of `stage` in run `r`: handoff_to_start (interrupt → work start) for (a),
 * wakeup_to_run (try_to_wake_up → the woken task runs: what twin.c's `cross` times) for (c),
 * idle_exit (a halted CPU's interrupt due → its thread runs: the host's timer) beside (a) no hog.
 */
export function labDist(r: RunResults, label: string, stage: StageName = 'handoff_to_start'): Answer {
  if (r.status !== 'completed') return { none: `the lab run ${r.status}: ${r.error?.message ?? ''}`.trim() };
  const s = strategy(r.points[0], label);
  const st = s?.merged[stage];
  if (!st || st.summary.count === 0) {
    const q = requests(s);
    return { none: `no ${stage} in the window (${q.interrupts} requests)` };
  }
  // decodeHistogram decodes into a plain-JS histogram (its useWebAssembly false): a JsHistogram.
  const h = decodeHistogram(st.histogram, `${label} ${stage}`) as JsHistogram;
  const top = h.countsArrayIndex(PROMPT_NS); // the bucket holding 500 µs: at the histogram's precision
  let prompt = 0;
  for (let i = 0; i <= top; i++) prompt += h.getCountAtIndex(i);
  const v = (k: 'p50' | 'p90' | 'p99' | 'max') => stageValue(s, stage, k);
  return {
    p50: v('p50'),
    p90: v('p90'),
    p99: v('p99'),
    max: v('max'),
    n: st.summary.count,
    prompt: prompt / st.summary.count,
    rounds: [{ n: st.summary.count, slow: st.summary.count - prompt, p50: v('p50'), p99: v('p99') }],
  };
}

/**
 * The work the lab's job and the rules' waker run per wake-up (ns): what the host's waker used
 * (twin.c's `run`, `--waker-cpu host`) when a host run measured it, else W.
 */
export function labWorkNs(wakerCpu: 'host' | 'work', hostRun: number | undefined, workUs: number): number {
  return wakerCpu === 'host' && hostRun !== undefined ? hostRun : workUs * 1000;
}

/** Question (a) asked of `kernel`'s scheduler rules alone, pooled over MODEL_PHASES phases (twin-model.ts). */
export function rulesDist(
  lab: Lab,
  kernel: KernelName,
  q: { hogs: number; nice: number; periodUs: number; workNs: number; iters: number; workSeq?: readonly number[] },
): Dist {
  return modelDist(
    modelWaits({
      kernel,
      hz: lab.hz,
      cpus: LAB_CPUS,
      hogs: q.hogs,
      nice: q.nice,
      periodNs: q.periodUs * 1000,
      workNs: q.workNs,
      wakeups: q.iters,
      phases: MODEL_PHASES,
      ...(q.workSeq ? { workSeq: q.workSeq } : {}),
    }),
  );
}

/** The fake clock's waits (sorted, ns) as a distribution. */
export function modelDist(waits: number[]): Dist {
  const at = (f: number) => waits[Math.min(waits.length - 1, Math.floor(f * (waits.length - 1)))];
  const prompt = waits.filter((w) => w <= PROMPT_NS).length / waits.length;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), n: waits.length, prompt };
}

/**
 * Several rounds' answers as one: each figure the median of the rounds' (`--rounds`), so that one
 * round the host (or the lab's host) had a bad minute in does not decide a ratio alone; `n` is
 * the total. A round without numbers is left out; none with numbers: the first's reason.
 */
export function medianDist(answers: readonly Answer[]): Answer {
  const ds = answers.filter((a): a is Dist => !('none' in a));
  if (ds.length === 0) return answers[0] ?? { none: 'not run' };
  if (ds.length === 1) return ds[0];
  const m = (f: (d: Dist) => number) => median(ds.map(f));
  return {
    p50: m((d) => d.p50),
    p90: m((d) => d.p90),
    p99: m((d) => d.p99),
    max: m((d) => d.max),
    n: ds.reduce((a, d) => a + d.n, 0),
    prompt: m((d) => d.prompt),
    // Every round in its place (one without numbers as n 0, no figures), so that round i of the
    // host still pairs with round i of the lab (twin-bar.ts roundsRatio).
    ...(ds.every((d) => d.rounds)
      ? { rounds: answers.flatMap((a) => ('none' in a ? [{ n: 0, slow: 0 }] : (a.rounds ?? []))) }
      : {}),
  };
}
