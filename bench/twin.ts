/**
 * `npm run bench:twin`: every scheduler question the host's own kernel can answer from user space,
 * asked of it (bench/c/twin.c, compiled here with `cc -O2 -pthread`) and of the lab at the
 * profile nearest the host's kernel, side by side with the ratio lab/host (issue 24, docs/twin.md).
 *
 * Run: npm run bench:twin [-- --iters N] [--period-us T] [--work-us W] [--tdf N] [--hogs thread|cpu] [--switch-cost host|off]
 *      [--rounds N] [--sweep-work W1,W2,... [--sweep-nice N]]
 *                         [--waker-cpu host|work]
 *
 *  (a) N busy threads (N = 0, 1, 2) at nice -20 and at nice 0 pinned to CPU 0, and a nice-0
 *      waker pinned to CPU 0 that sleeps to an absolute deadline every T (clock_nanosleep) and
 *      then works W: its wake-up lateness p50/p99/max. The lab: `deferlab scenario cpu-hog`'s
 *      machine (src/scenarios/cpu-hog.ts) with N hogs, interrupts on CPU 0 at 1/T each queuing
 *      driver work to the bound kworker (nice 0, system_wq): each run's wait from the interrupt
 *      that queued it to its start (handoff_to_start; one sample per run, as twin.c takes one per
 *      wake-up and skips the periods a late one missed). The waker's CPU per wake-up is more than W on the host (its
 *      system calls: ~40 µs for W = 20 µs here), and under EEVDF a waker's lag, so its waits,
 *      depend on it: with `--waker-cpu host` (the default) the lab's work item and the rules'
 *      waker run for what the host's waker used per wake-up (twin.c's run=), with `work` for W.
 *  (b) two threads on CPU 0 handing a futex word back and forth (one switch), and two busy
 *      threads' shares of CPU 0 (CPU time). The lab: its switch between two tasks' threads is a
 *      host hand-off (its calibration's figure, not an emulated cost); the shares are the ticks a
 *      hog and a spinner on CPU 0 get from the lab's scheduler (Machine API).
 *  (c) a busy waker on CPU 0 and a futex sleeper on CPU 1, woken every T, iters times, in the
 *      rounds of (a) N = 1 at nice -20: cross-CPU wake-up latency. The lab: that run's unbound
 *      worker, woken from CPU 0's interrupt (CPU 0 running the hog) onto idle CPU 1: its
 *      wakeup_to_run, try_to_wake_up → it runs, the interval twin.c times (until 2026-12-06
 *      interrupt → work start, which adds the hard IRQ and queue_work the twin has none of).
 *      Until 2026-12-07 the host was asked with an idle waker every 2 ms in a later minute:
 *      on this VM the wake-up of an idle CPU is an IPI to a halted vCPU whose tail moves from
 *      minute to minute, so the two sides now share the minute and the gap (docs/twin.md).
 *  (d) a loopback TCP ping-pong with a nice -20 thread woken on the client's CPU every K exchanges
 *      against the lab's workqueue − inline at the same wake-ups per exchange (bench/twin-tcp.ts).
 *
 *  --sweep-work W1,W2,...: instead, (a) with one nice-0 hog (--sweep-nice: another nice) at each
 *      W, the share of wake-ups that waited past 0.5 ms on the host, in the lab and in the rules
 *      alone (bench/twin-sweep.ts).
 *
 * Without a C compiler the host side is skipped with one line and the lab side still runs.
 * Timing figures, never asserted: a loaded host moves both sides (its load average is printed).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { machineDefaults } from '../src/config/defaults.js';
import { type KernelName, kernelProfile } from '../src/kernel/profiles.js';
import { HOST_HELPER_NICE, IDLE_STARVED_MS } from '../src/machine/host-threads.js';
import { DEFAULT_HOGS, HOG_HOSTINGS, type HogHosting, type MachineOptions } from '../src/machine/options.js';
import type { Calibration, RunResults } from '../src/report/types.js';
import { strategy } from '../src/scenarios/common.js';
import { type BenchUsage, benchArgs, refuse } from './cli.js';
import { isMain, Machine, Phase, sleep } from './lib.js';
import {
  type Answer,
  BOUND,
  compileTwin,
  type Dist,
  hostDist,
  LAB_CPUS,
  LAB_WARMUP_MS,
  type Lab,
  type LabRunOptions,
  labDist,
  labHogs,
  labWorkNs,
  medianDist,
  modelDist,
  readCpuSeq,
  rulesDist,
  runTwin,
  type TwinOut,
  UNBOUND,
} from './twin-lab.js';
import { nodeCross } from './twin-node.js';
import { crossPartsLines, warmPeriodUs } from './twin-parts.js';
import { parseSweep, SWEEP_MAX, sweepWork } from './twin-sweep.js';
import { fmt, idleExitLines, pooledSlow, type Row, ratio, render, type Share } from './twin-table.js';
import { tcpTwin } from './twin-tcp.js';

/**
 * (a) and (c) are asked this many times by default (`--rounds`), each figure the median of the
 * rounds': one round's p99 moved up to 25× on this host's side between runs minutes apart, and a
 * single round put rows outside 0.5–2× that three rounds' medians put inside (docs/twin.md).
 */
const DEFAULT_ROUNDS = 3;
/** Shares: how long two busy tasks run side by side, host and lab. */
const SHARE_MS = 3000;
/**
 * (c) in Node itself (the runtime's floor), unpinned and pinned: this many wake-ups each, every T
 * (5 s each at T = 5 ms): enough that a share past 0.5 ms of ~1% is ten wake-ups, not five.
 */
const NODE_CROSS_ITERS = 1000;
const PINGPONG_ITERS = 20_000;
const HZ_VALUES = [100, 250, 300, 1000];

interface Options extends LabRunOptions {
  workUs: number;
  /** (a)'s work per wake-up on the lab's side: the host waker's measured CPU per wake-up, or W. */
  wakerCpu: 'host' | 'work';
  /** (a) and (c) asked this many times, host then lab each round; each figure is the median of the rounds'. */
  rounds: number;
  /** `--sweep-work`: instead of the table, (a) with one hog at each of these W (µs). */
  sweepWork: number[] | null;
  /** `--sweep-nice`: that hog's nice (default 0). */
  sweepNice: number;
}

/** Bad input: one line, exit 2. */
function usage(problem: string): never {
  return refuse('bench:twin', problem);
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    iters: 1000,
    periodUs: 5000,
    workUs: 20,
    tdf: 1,
    hogs: DEFAULT_HOGS,
    wakerCpu: 'host',
    switchCost: 'host',
    rounds: DEFAULT_ROUNDS,
    sweepWork: null,
    sweepNice: 0,
  };
  let sweep: string | undefined;
  let sweepNiceGiven = false;
  const ranges: Record<
    string,
    [Exclude<keyof Options, 'hogs' | 'wakerCpu' | 'switchCost' | 'sweepWork' | 'sweepNice'>, number, number]
  > = {
    '--iters': ['iters', 10, 100_000],
    '--period-us': ['periodUs', 100, 1_000_000],
    '--work-us': ['workUs', 0, 100_000],
    '--tdf': ['tdf', 1, 16],
    '--rounds': ['rounds', 1, 9],
  };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--hogs') {
      const v = argv[i + 1];
      if (!(HOG_HOSTINGS as readonly string[]).includes(v))
        usage(`--hogs must be one of ${HOG_HOSTINGS.join(', ')} (got ${v})`);
      o.hogs = v as HogHosting;
      continue;
    }
    if (argv[i] === '--waker-cpu') {
      const v = argv[i + 1];
      if (v !== 'host' && v !== 'work') usage(`--waker-cpu must be host or work (got ${v})`);
      o.wakerCpu = v;
      continue;
    }
    if (argv[i] === '--sweep-work') {
      if (argv[i + 1] === undefined) usage('--sweep-work needs a list of W in µs, e.g. --sweep-work 20,100,200,400');
      sweep = argv[i + 1];
      continue;
    }
    if (argv[i] === '--sweep-nice') {
      const v = Number(argv[i + 1]);
      if (!Number.isInteger(v) || v < -20 || v > 19)
        usage(`--sweep-nice must be the hog's nice, an integer from -20 to 19 (got ${argv[i + 1]})`);
      o.sweepNice = v;
      sweepNiceGiven = true;
      continue;
    }
    if (argv[i] === '--switch-cost') {
      const v = argv[i + 1];
      if (v !== 'host' && v !== 'off') usage(`--switch-cost must be host or off (got ${v})`);
      o.switchCost = v;
      continue;
    }
    const r = ranges[argv[i]];
    if (!r)
      usage(
        `unknown option ${argv[i]} (options: ${[...Object.keys(ranges), '--hogs', '--waker-cpu', '--switch-cost', '--sweep-work', '--sweep-nice'].join(', ')})`,
      );
    const v = Number(argv[i + 1]);
    const [key, lo, hi] = r;
    if (!Number.isInteger(v) || v < lo || v > hi)
      usage(`${argv[i]} must be an integer from ${lo} to ${hi} (got ${argv[i + 1]})`);
    o[key] = v;
  }
  if (o.workUs >= o.periodUs) usage(`--work-us must be below --period-us (got ${o.workUs} and ${o.periodUs})`);
  if (sweep !== undefined) {
    const ws = parseSweep(sweep, o.periodUs);
    if (typeof ws === 'string') usage(ws);
    o.sweepWork = ws;
  } else if (sweepNiceGiven)
    usage('--sweep-nice sets the hog of --sweep-work: give both, e.g. --sweep-work 20,30,40 --sweep-nice -20');
  return o;
}

// ---- the host ------------------------------------------------------------------------------

/** CONFIG_HZ from /boot/config-$(uname -r) or /proc/config.gz; else measured from jiffies. */
async function hostHz(): Promise<{ hz: number | undefined; how: string }> {
  const fromConfig = (text: string) => /^CONFIG_HZ=(\d+)$/m.exec(text)?.[1];
  const boot = `/boot/config-${release()}`;
  try {
    const v = fromConfig(readFileSync(boot, 'utf8'));
    if (v) return { hz: Number(v), how: `CONFIG_HZ in ${boot}` };
  } catch {}
  try {
    const v = fromConfig(gunzipSync(readFileSync('/proc/config.gz')).toString('utf8'));
    if (v) return { hz: Number(v), how: 'CONFIG_HZ in /proc/config.gz' };
  } catch {}
  // /proc/timer_list prints "jiffies: N" (the global count): two readings 1 s apart.
  const jiffies = () => {
    try {
      const m = /^jiffies: (\d+)$/m.exec(readFileSync('/proc/timer_list', 'utf8'));
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  };
  const j0 = jiffies();
  const t0 = performance.now();
  await sleep(1000);
  const j1 = jiffies();
  if (j0 === undefined || j1 === undefined)
    return { hz: undefined, how: 'unknown (no kernel config, no /proc/timer_list)' };
  const rate = ((j1 - j0) * 1000) / (performance.now() - t0);
  const near = HZ_VALUES.find((h) => Math.abs(rate - h) / h < 0.1);
  return near
    ? { hz: near, how: `measured: jiffies advanced ${rate.toFixed(0)}/s (/proc/timer_list)` }
    : { hz: undefined, how: `unknown (jiffies advanced ${rate.toFixed(0)}/s, no HZ near it)` };
}

/**
 * The lab profile nearest a kernel release: EEVDF with delayed dequeue from 6.12 (the lab's
 * 6.18), EEVDF from 6.6 (6.9), CFS with the ksoftirqd rule in 6.1–6.5 (6.1), older CFS (5.15).
 */
export function nearestProfile(rel: string): { profile: KernelName; sched: 'eevdf' | 'cfs' } {
  const v = releaseNumber(rel);
  if (v >= 6012) return { profile: '6.18', sched: 'eevdf' };
  if (v >= 6006) return { profile: '6.9', sched: 'eevdf' };
  if (v >= 6001) return { profile: '6.1', sched: 'cfs' };
  return { profile: '5.15', sched: 'cfs' };
}

/** `6.18.44-fc` → 6018 (major · 1000 + minor); 0 when it does not parse. */
function releaseNumber(rel: string): number {
  const m = /^(\d+)\.(\d+)/.exec(rel);
  return m ? Number(m[1]) * 1000 + Number(m[2]) : 0;
}

/** What the host's kernel has that its nearest profile does not (fair.c; docs/twin.md). */
function kernelDifferences(rel: string): string | undefined {
  const v = releaseNumber(rel);
  if (v >= 6019)
    return 'this kernel is newer than the 6.18 profile (the fair class as in 6.18.2): later changes are not modelled';
  if (v >= 6012 && v < 6017)
    return 'this kernel is 6.12-6.16: the 6.18 profile protects slices as 6.17 does (vprot), where these had did_preempt_short(), and 6.12.0-6.14 a 0.75 ms base slice';
  return undefined;
}

// ---- the lab -------------------------------------------------------------------------------

/** Ticks a nice-`a` hog and a nice-`b` spinner get on CPU 0 of the lab over SHARE_MS (Machine API). */
async function labShare(lab: Lab, a: number, b: number, hogs: HogHosting): Promise<Share> {
  const opts: MachineOptions = {
    ...machineDefaults(LAB_CPUS),
    hz: lab.hz,
    kernel: lab.profile,
    hogs,
    // Idle CPU 1 halts: polling it would spin beside CPU 0's two busy threads on a small host.
    idle: { policy: 'halt', maxPollNs: 0 },
    irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
    workload: {
      kind: 'custom',
      tasks: [
        { kind: 'hog', cpu: 0, policy: 'normal', nice: a, rtPrio: 0 },
        { kind: 'spinner', cpu: 0, nice: b },
      ],
    },
  };
  const m = await Machine.boot(opts);
  try {
    const [ta, tb] = m.plan.tasks.filter((t) => t.kind === 'app').map((t) => t.id);
    m.setPhase(Phase.Measure);
    await sleep(LAB_WARMUP_MS);
    const a0 = m.ticks(ta);
    const b0 = m.ticks(tb);
    await sleep(SHARE_MS);
    const da = m.ticks(ta) - a0;
    const db = m.ticks(tb) - b0;
    if (m.fault) return { none: `the lab machine faulted: ${m.fault.message}` };
    if (db === 0) return { none: `the second task got no tick in ${SHARE_MS} ms (${da} to the first)` };
    return { ratio: da / db, detail: `${da} : ${db} ticks` };
  } finally {
    await m.stop();
  }
}

// ---- main ----------------------------------------------------------------------------------

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const o = parseArgs(argv);
  const started = Date.now();
  const rel = release();
  const { hz, how } = await hostHz();
  const { profile, sched } = nearestProfile(rel);
  const labHz = hz !== undefined && HZ_VALUES.includes(hz) ? hz : 1000;
  const lab: Lab = { profile, hz: labHz };
  const load0 = loadavg();
  const out = (s = '') => process.stdout.write(`${s}\n`);
  out(`# bench:twin: the host's kernel beside the lab (issue 24; docs/twin.md)`);
  out(
    `host: Linux ${rel}, ${sched === 'eevdf' ? 'EEVDF' : 'CFS'}; HZ ${hz ?? 'unknown'} (${how}); ${availableParallelism()} cores; load ${load0.map((x) => x.toFixed(2)).join(' ')}`,
  );
  out(
    `lab: profile ${profile} (${kernelProfile(profile).summary}), ${LAB_CPUS} CPUs, HZ ${labHz}${hz === undefined ? ' (host HZ unknown: the lab default)' : ''}${o.tdf > 1 ? `, TDF ${o.tdf} for (a), (c) and (d) (--tdf: the lab's clock at host time / ${o.tdf})` : ''}, hogs on ${o.hogs === 'cpu' ? "CPU 0's thread (--hogs cpu: a same-thread switch)" : 'threads of their own (--hogs thread: a host hand-off per switch)'}, ${o.switchCost === 'host' ? "switches charged at this host's kernel switch (--switch-cost host, a model)" : "switches at the lab's own cost (--switch-cost off)"}`,
  );
  const diff = kernelDifferences(rel);
  if (diff) out(`note: ${diff}`);
  const T = o.periodUs;
  const W = o.workUs;
  out(
    o.sweepWork
      ? `(a) waker: nice 0 on CPU 0, every ${T / 1000} ms, ${o.iters} wake-ups a round${o.rounds > 1 ? `, ${o.rounds} rounds (host then lab each round; shares pooled, p99 the median of the rounds')` : ''}; one hog at nice ${o.sweepNice}; W swept`
      : `(a) waker: nice 0 on CPU 0, every ${T / 1000} ms, ${W} µs of work, ${o.iters} wake-ups; the lab: cpu-hog's bound kworker, ${1e6 / T} interrupts/s on CPU 0 each queuing ${W} µs${o.rounds > 1 ? `; (a) and (c) in ${o.rounds} rounds, host then lab, each figure the median of the rounds' (--rounds)` : ''}`,
  );

  const dir = mkdtempSync(join(tmpdir(), 'deferlab-twin-'));
  try {
    const { bin, why } = compileTwin(dir);
    if (!bin) out(`host side skipped: ${why}`);
    const host = (args: (string | number)[]): TwinOut => (bin ? runTwin(bin, args) : { none: `skipped: ${why}` });

    if (o.sweepWork) {
      out();
      for (const l of await sweepWork(o.sweepWork, o.sweepNice, o, lab, host, dir)) out(l);
      out(`load ${load0[0].toFixed(2)} → ${loadavg()[0].toFixed(2)}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return;
    }
    const rows: Row[] = [];
    const cases: { n: number; nice: number }[] = [
      { n: 0, nice: 0 },
      { n: 1, nice: -20 },
      { n: 2, nice: -20 },
      { n: 1, nice: 0 },
      { n: 2, nice: 0 },
    ];
    let unboundLab: Answer = { none: 'not run' };
    let crossHost: Answer = { none: 'not run' };
    /** (a) no hog's host answer, and the lab's halted CPU 0 woken by the host's timer (idle_exit). */
    let idleExit: { host: Answer; lab: Answer } | undefined;
    /** (c)'s runs, one per round, and its host answers (twin-parts.ts); the warm run beside them. */
    const unboundRuns: RunResults[] = [];
    let crossAnswersAll: Answer[] = [];
    let warmRun: RunResults | undefined;
    const wakerRuns: string[] = [];
    for (const c of cases) {
      const q = c.n === 0 ? '(a) no hog' : `(a) ${c.n} hog${c.n > 1 ? 's' : ''} nice ${c.nice}`;
      const withUnbound = c.n === 1 && c.nice === -20;
      const hostAnswers: Answer[] = [];
      const labAnswers: Answer[] = [];
      const unboundAnswers: Answer[] = [];
      const crossAnswers: Answer[] = [];
      const idleExits: Answer[] = [];
      let workNs = W * 1000;
      let hostRun: number | undefined;
      let workSeq: number[] | undefined;
      let r: RunResults | undefined;
      for (let round = 0; round < o.rounds; round++) {
        const at = o.rounds > 1 ? ` (round ${round + 1} of ${o.rounds})` : '';
        process.stderr.write(`${q}: host${at}...\r`);
        const seqFile = join(dir, `cpuseq-${c.n}-${c.nice}-${round}.txt`);
        const hr = host(['hogs', c.n, c.nice, T, W, o.iters, seqFile]);
        // The waker's CPU per cycle, for the lab's work item and the rules (the first round that wrote one).
        if (workSeq === undefined && o.wakerCpu === 'host') workSeq = readCpuSeq(seqFile);
        hostAnswers.push(hostDist(hr));
        // (c) on the host, asked as the lab's is and in the same minute: CPU 0 busy (the lab's
        // CPU 0 runs the hog when its interrupt wakes CPU 1) waking a sleeper on idle CPU 1
        // every T, iters times (docs/twin.md, "(c) asked as the lab is asked").
        if (withUnbound) crossAnswers.push(hostDist(host(['cross', o.iters, T, 'busy'])));
        // The lab's work per wake-up: what the host's waker used in the first round that measured it.
        if (hostRun === undefined && 'values' in hr && hr.values.run > 0) hostRun = hr.values.run;
        workNs = labWorkNs(o.wakerCpu, hostRun, W);
        process.stderr.write(`${q}: lab${at}... \r`);
        r = await labHogs(lab, o, c.n, c.nice, withUnbound, workNs, workSeq);
        labAnswers.push(labDist(r, BOUND));
        if (withUnbound) {
          unboundAnswers.push(labDist(r, UNBOUND, 'wakeup_to_run'));
          unboundRuns.push(r);
        }
        if (c.n === 0) idleExits.push(labDist(r, BOUND, 'idle_exit'));
      }
      wakerRuns.push(`${q.slice(4)} ${hostRun !== undefined ? fmt(hostRun) : 'n/a'}`);
      const h = medianDist(hostAnswers);
      const rules = (kernel: KernelName): Dist =>
        rulesDist(lab, kernel, {
          hogs: c.n,
          nice: c.nice,
          periodUs: T,
          workNs,
          iters: o.iters,
          ...(workSeq ? { workSeq } : {}),
        });
      const model = rules(lab.profile);
      // The rules of the profile before delayed dequeue too, when the host's is a later one.
      const older = lab.profile === '6.18' ? rules('6.9') : undefined;
      const idle = c.n === 0 ? medianDist(idleExits) : undefined;
      rows.push({
        question: q,
        host: h,
        lab: medianDist(labAnswers),
        model,
        ...(older ? { older } : {}),
        // With no hog the host's tail is its timer delivered to a halted vCPU, which its column
        // holds; the lab's CPU 0 is woken by the host's timer the same way, before its column
        // starts (idle_exit): the part to judge the host's tail against (twin-table.ts barLines).
        ...(idle
          ? {
              explain: {
                k: 'p99' as const,
                part: idle,
                name: "the host's timer waking a halted CPU (the lab's: idle_exit)",
              },
            }
          : {}),
      });
      if (idle) idleExit = { host: h, lab: idle };
      if (withUnbound) {
        unboundLab = medianDist(unboundAnswers);
        crossHost = medianDist(crossAnswers);
        crossAnswersAll = crossAnswers;
        // (c)'s emulated path after a shorter sleep: the same machine at a tenth of the period.
        process.stderr.write(`${q}: lab, (c) warm...   \r`);
        warmRun = await labHogs(lab, { ...o, periodUs: warmPeriodUs(T) }, c.n, c.nice, true, workNs);
      }
    }
    process.stderr.write('(b), (c)...                 \r');
    const pp = hostDist(host(['pingpong', PINGPONG_ITERS]));
    const cal = lab.calibration;
    rows.push({
      question: '(b) switch, 2 tasks 1 CPU',
      host: pp,
      // How the lab switches two tasks of one CPU: with hogs on the CPU's thread (--hogs cpu), a
      // same-thread switch through the scheduler; with hogs on threads, a host hand-off.
      lab: !cal
        ? { none: 'no calibration' }
        : o.hogs === 'cpu'
          ? {
              // As the lab's runs switch: with the --switch-cost floor charged when they have one.
              p50: cal.sameThreadSwitchChargedNs ?? cal.sameThreadSwitchNs,
              p90: Number.NaN,
              p99: Number.NaN,
              max: Number.NaN,
              n: 0,
              prompt: Number.NaN,
            }
          : {
              p50: cal.handoffP50Ns,
              p90: Number.NaN,
              p99: cal.handoffP99Ns,
              max: Number.NaN,
              n: cal.roundTrips,
              prompt: Number.NaN,
            },
    });
    rows.push({
      question: '(c) wake-up CPU 0 → CPU 1',
      host: crossHost,
      lab: unboundLab,
      // The host's futex wake-up inside the lab's (c), per round (twin-parts.ts).
      hostPart: { part: medianDist(unboundRuns.map((r) => labDist(r, UNBOUND, 'kick_wake'))), name: 'its kick_wake' },
    });
    const shareOf = (r: TwinOut): Share => {
      if ('none' in r) return r;
      const { a_ns: a, b_ns: b } = r.values;
      if (!(b > 0)) return { none: 'the second thread got no CPU time' };
      return { ratio: a / b, detail: `${(a / 1e6).toFixed(0)} : ${(b / 1e6).toFixed(0)} ms of CPU` };
    };
    const shares = [
      {
        question: '(b) share nice 0 : nice 0',
        host: shareOf(host(['share', 0, 0, SHARE_MS])),
        lab: await labShare(lab, 0, 0, o.hogs),
      },
      {
        question: '(b) share nice -20 : nice 0',
        host: shareOf(host(['share', -20, 0, SHARE_MS])),
        lab: await labShare(lab, -20, 0, o.hogs),
      },
    ];
    process.stderr.write('                            \r');
    out();
    for (const l of render(rows, shares)) out(l);
    out();
    out(
      o.hogs === 'cpu'
        ? `  (b) switch, lab: its calibrated same-thread switch (two tasks hosted on one CPU's thread, through the\n      scheduler: how --hogs cpu switches a hog); one figure, no p99.${switchModelNote(cal)}\n  (c) lab: the unbound worker of`
        : '  (b) switch, lab: its calibrated host hand-off between two threads (the lab switches tasks by handing\n      the CPU from one host thread to another: --hogs thread); no max measured. (c) lab: the unbound worker of',
    );
    out(
      "      (a) 1 hog nice -20, woken on idle CPU 1 by CPU 0's interrupt: try_to_wake_up → it runs (wakeup_to_run),",
    );
    out(
      `      the interval twin.c times (FUTEX_WAKE called → the sleeper runs); host: twin.c's waker spinning on CPU 0\n      (as the lab's CPU 0 runs the hog) wakes CPU 1 every ${T / 1000} ms, ${o.iters} times, in the same rounds as the lab's.`,
    );
    // The floor under the lab's (c): the same wake-up between two JavaScript threads, unpinned as
    // the lab's threads are, and pinned as twin.c's are (bench/twin-node.ts: where the tail goes).
    const cHost = rows.find((r) => r.question.startsWith('(c)'))?.host;
    const hostSlow = !cHost || 'none' in cHost ? 'n/a' : `${(100 * pooledSlow(cHost)).toFixed(1)}%`; // as the ‡ line pools it
    for (const pin of [false, true]) {
      const nc = await nodeCross(NODE_CROSS_ITERS, T, pin);
      const node = modelDist(nc.sorted.length ? nc.sorted : [Number.NaN]);
      const how = !pin
        ? "not pinned, as the lab's"
        : nc.unpinned
          ? `not pinned: ${nc.unpinned}`
          : "pinned to two host CPUs, as twin.c's";
      out(
        `  (c) in Node itself, ${how}: ${node.n} wake-ups of a thread in Atomics.wait by Atomics.notify every ${T / 1000} ms (bench/twin-node.ts): p50 ${fmt(node.p50)}, p90 ${fmt(node.p90)}, p99 ${fmt(node.p99)}, max ${fmt(node.max)}, past 0.5 ms ${(100 * (1 - node.prompt)).toFixed(1)}% (host ${hostSlow})${nc.lost ? `, ${nc.lost} lost` : ''};`,
      );
      const nodeHost = !cHost || 'none' in cHost ? 'n/a' : ratio(node.p50, cHost.p50);
      const labNode = 'none' in unboundLab ? 'n/a' : ratio(unboundLab.p50, node.p50);
      out(
        pin
          ? `      the wake-up itself, without the host's placement: Node/host p50 ${nodeHost}, lab/Node p50 ${labNode}.`
          : `      the runtime's floor under the lab's wake-ups, the host's placement of its threads included: Node/host p50 ${nodeHost}, lab/Node p50 ${labNode}.`,
      );
    }
    // The same floor inside the lab's own (c): the woken CPU's thread, ring → it runs again.
    const unboundRun = unboundRuns.at(-1);
    const ks = unboundRun?.status === 'completed' ? strategy(unboundRun.points[0], UNBOUND) : undefined;
    const kick = ks?.merged.kick_wake?.summary;
    const whole = ks?.merged.handoff_to_start?.summary;
    if (whole && whole.count > 0)
      out(
        `  (c) the unbound worker's whole path in the last round, interrupt → work start (handoff_to_start; the hard IRQ and queue_work before the wake-up, which the host's twin has none of): p50 ${fmt(whole.p50)}, p99 ${fmt(whole.p99)}, max ${fmt(whole.max)}.`,
      );
    out(
      kick && kick.count > 0
        ? `  (c) of which the host's wake-up of the lab's halted CPU threads (kick_wake: another thread's notify → the halted thread runs again; ${kick.count} in the last round's window, its tail; the rounds' p50s are in the parts below): p50 ${fmt(kick.p50)}, p99 ${fmt(kick.p99)}, max ${fmt(kick.max)}.`
        : '  (c) kick_wake (the host waking a halted CPU thread): none recorded in the window.',
    );
    if (unboundRuns.length) for (const l of crossPartsLines(unboundRuns, crossAnswersAll, warmRun, T)) out(l);
    if (idleExit) for (const l of idleExitLines(idleExit.host, idleExit.lab)) out(l);
    out(
      `  (a) the host's waker used per wake-up (CPU time: ${W} µs of work and its system calls): ${wakerRuns.join(', ')};`,
    );
    out(
      o.wakerCpu === 'host'
        ? "      the lab's work item and the rules' waker ran each cycle's CPU in order, as the host's waker used it\n      (twin.c's CPUSEQ_FILE; --waker-cpu host; `work`: W alone)."
        : `      the lab's work item and the rules' waker ran W = ${W} µs (--waker-cpu work).`,
    );
    out(`  Weight ratio nice -20 : nice 0 is 88761 : 1024 = 86.68 : 1. lab/host: the lab's figure over the host's.`);
    if (lab.idled)
      out(
        `  The lab's helper threads under SCHED_IDLE (cpu-hog's preset): ${lab.idled.raised ? `raised to nice ${HOST_HELPER_NICE} in ${lab.idled.raised} of ${lab.idled.runs} runs, where one waited ${IDLE_STARVED_MS} ms without a slice (the host's cores were full; docs/twin.md)` : `stayed so in all ${lab.idled.runs} runs`}.`,
      );
    out();
    for (const l of await tcpTwin(host, o.iters, lab.profile, lab.hz, o.tdf)) out(l);
    const load1 = loadavg();
    out(`load ${load0[0].toFixed(2)} → ${load1[0].toFixed(2)}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const USAGE: BenchUsage = {
  script: 'bench:twin',
  about:
    "The scheduler beside the host's own kernel (docs/twin.md): each question asked of the host by a small C program compiled now (hog threads against a periodic waker, a ping-pong on one CPU, a wake-up across CPUs, a loopback TCP ping-pong with a nice -20 thread woken on the client's CPU) and of the lab at the kernel profile nearest the host's, side by side with their ratios, the host's kernel version and HZ printed with it; under the table, every ratio against issue 24's bar of 0.5–2x: inside, outside, or undecided where a ratio between modes is compared by its shares with a 95% interval that straddles an end (bench/twin-bar.ts). About 6 minutes (three rounds; `--rounds 1`: about 2.5); needs cc (without one the host side is skipped, saying so, and the lab side still runs).",
  flags: [
    { flag: '--iters', value: 'N', help: 'wake-ups per question, 10..100000 (default 1000)' },
    { flag: '--period-us', value: 'T', help: "the waker's period, µs, 100..1000000 (default 5000)" },
    { flag: '--work-us', value: 'W', help: "the waker's work per wake-up, µs, below the period (default 20)" },
    { flag: '--tdf', value: 'N', help: "the lab side's time dilation factor, 1..16 (default 1)" },
    { flag: '--hogs', value: HOG_HOSTINGS.join('|'), help: `where the lab's hogs run (default ${DEFAULT_HOGS})` },
    {
      flag: '--waker-cpu',
      value: 'host|work',
      help: "the lab's work per wake-up: what the host's waker used (host, the default) or W",
    },
    {
      flag: '--rounds',
      value: 'N',
      help: `(a) and (c) asked N times, host then lab each round, each figure the median of the rounds (1..9, default ${DEFAULT_ROUNDS}): the host side moves up to 25x at p99 between runs minutes apart`,
    },
    {
      flag: '--switch-cost',
      value: 'host|off',
      help: "the lab side's context-switch model: this host's kernel switch as a floor (host, the default) or none",
    },
    {
      flag: '--sweep-work',
      value: 'W1,W2,...',
      help: `instead of the table: (a) with one nice-0 hog at each work per wake-up (µs, up to ${SWEEP_MAX}), the share of wake-ups that waited past 0.5 ms on the host, in the lab and in the rules alone (why one nice-0 hog's p99 sits between modes)`,
    },
    {
      flag: '--sweep-nice',
      value: 'N',
      help: "with --sweep-work: the hog's nice (-20..19, default 0); -20 asks how the share served at once beside a nice -20 hog moves with the waker's CPU",
    },
  ],
};

if (isMain(import.meta.url)) {
  main(benchArgs(USAGE)).catch((e) => {
    process.stderr.write(`bench:twin: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}

/**
 * (b)'s note on the switch model (--switch-cost): the lab's figure is then its switch charged at
 * the host kernel's measured cost, so (b) agrees by the model; its own switch is printed beside.
 */
function switchModelNote(cal: Calibration | undefined): string {
  if (cal?.sameThreadSwitchChargedNs === undefined) return " No --switch-cost floor: the lab's own switch.";
  return (
    `\n      With the --switch-cost model (a floor measured on this host's kernel: futex ping-pong minus its system\n` +
    `      calls), the lab's switch is ${fmt(cal.sameThreadSwitchChargedNs)}; its own, uncharged: ${fmt(cal.sameThreadSwitchNs)}` +
    ` (${(cal.sameThreadSwitchNs / cal.sameThreadSwitchChargedNs).toFixed(2)}x). The host's twin adds the two system calls.`
  );
}
