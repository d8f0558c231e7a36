/**
 * The frozen defaults and the accepted range of every setting, in one place.
 *
 * Four defaults depend on the run and are computed when the config is resolved:
 *   seed            a random uint32 (printed, so the run can be replayed with --seed)
 *   outDir          deferlab-results/<YYYYMMDD-HHMMSS> under the working directory
 *   topology        each CPU its own SMT group; one cache group and one NUMA node of all CPUs
 *   unboundWorkers  the CPU count
 * (the last two are {@link machineDefaults}' for the CPU count), and `cpus` defaults to the CPU count a given topology describes, if one is given.
 */

import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { KernelName as KernelProfileName } from '../kernel/profiles.js';
import { DEFAULT_KERNEL } from '../kernel/profiles.js';
import { DEFAULT_KTHREAD_CHARGE } from '../kernel/sched/rq.js';
import { IDLE_POLICIES } from '../machine/cpuidle.js';
import type { HostHelperMode } from '../machine/host-threads.js';
import type { HogHosting as HogHostingName, KthreadHosting as KthreadHostingName } from '../machine/options.js';
import {
  DEFAULT_HOGS,
  DEFAULT_IDLE,
  DEFAULT_KTHREADS,
  defaultTopology,
  type MachineOptions,
  type TcpLatOptions,
} from '../machine/options.js';
import { DEFAULT_NIC, type NicOptions, type NicProfileName, nicOptions } from '../net/profiles.js';
import type { FastPoolVariant as FastMixVariant } from '../random/fastpool.js';
import type { NotifyPolicy } from '../shm/doorbell.js';
import { builtinRef } from '../strategies/ref.js';
import { DEFAULT_STRATEGY_SPECS } from './strategy-spec.js';

/** The HZ values kernels are built with (CONFIG_HZ_100 ... CONFIG_HZ_1000). */
export const HZ_VALUES = [100, 250, 300, 1000] as const;
export type Hz = (typeof HZ_VALUES)[number];

export const WORKLOAD_KINDS = ['tcp_lat', 'irq_only'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export const IRQ_PATTERNS = ['constant', 'poisson', 'bursts'] as const;
export type IrqPattern = (typeof IRQ_PATTERNS)[number];

/** `if-idle`: ring a doorbell only when its sleeper said it sleeps; `always`: every time (src/shm/doorbell.ts). */
export { NOTIFY_POLICIES, type NotifyPolicy } from '../shm/doorbell.js';
/** cpuidle policies (src/machine/cpuidle.ts); `auto` picks one for the host (autoIdlePolicy). */
export const IDLE_POLICY_NAMES = ['auto', ...IDLE_POLICIES] as const;
export type IdlePolicy = (typeof IDLE_POLICY_NAMES)[number];

/**
 * `--idle auto`: `poll` when other processes leave the host a core free for every emulated CPU,
 * else `halt`. "Free" is measured: the host's idle CPU time over IDLE_SAMPLE_MS before the run (Linux
 * /proc/stat; {@link sampleIdleCores}), or, where that cannot be read, the 1-minute load average
 * below the core count. Measured on this 2-core host (bench/host.ts section 2, tcp_lat 64 B inline
 * at background 0 / 1k / 20k interrupts per CPU): quiet, `poll` gave one-way means of 4.0–11.6 µs
 * and `halt` 11.8–45.1 µs (a futex wake per message); with other work on the host, polling threads
 * are descheduled for whole host time slices and the means went to hundreds of µs or milliseconds
 * under `poll` and `haltpoll`, while `halt` stayed at 16–32 µs. The choice is made once per process
 * and CPU count, and shown in the setup line.
 */
export function autoIdlePolicy(cpus: number, freeCores: number): Exclude<IdlePolicy, 'auto'> {
  // A little slack: a quiet host's sample is never quite whole.
  return freeCores >= cpus - 0.3 ? 'poll' : 'halt';
}

/** How long the host's idleness is sampled before a run whose idle policy is `auto`. */
export const IDLE_SAMPLE_MS = 200;

let autoChoice: { cpus: number; policy: Exclude<IdlePolicy, 'auto'>; freeCores: number } | undefined;

/**
 * Idle and total CPU time of the host (/proc/stat's "cpu" line, all CPUs) and this process's own
 * (/proc/self/stat utime + stime), in USER_HZ ticks; undefined off Linux.
 */
function cpuTimes(): { idle: number; total: number; own: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    if (f.length < 4 || f.some((x) => !Number.isFinite(x))) return undefined;
    // /proc/self/stat: fields 14 and 15 (utime, stime), after the ")" that ends the command name.
    const self = readFileSync('/proc/self/stat', 'latin1');
    const g = self.slice(self.lastIndexOf(')') + 2).split(' ');
    const own = Number(g[11]) + Number(g[12]);
    if (!Number.isFinite(own)) return undefined;
    return { idle: f[3] + (f[4] ?? 0), total: f.reduce((a, x) => a + x, 0), own };
  } catch {
    return undefined;
  }
}

/**
 * Cores other processes left free over `ms`: the host's idle share of all CPU time, plus what
 * this process used itself (its start-up is not "other work"), × cores; undefined where /proc
 * cannot be read. Context: main thread, before a run; waits with a timer.
 */
export async function sampleIdleCores(ms = IDLE_SAMPLE_MS): Promise<number | undefined> {
  const a = cpuTimes();
  if (!a) return undefined;
  await new Promise<void>((r) => setTimeout(r, ms));
  const b = cpuTimes();
  if (!b || b.total <= a.total) return undefined;
  const cores = availableParallelism();
  return Math.min(cores, ((b.idle - a.idle + b.own - a.own) / (b.total - a.total)) * cores);
}

/** Resolve `--idle auto` for `cpus` CPUs from a fresh sample of the host (once per process and CPU count). */
export async function primeAutoIdle(cpus: number): Promise<Exclude<IdlePolicy, 'auto'>> {
  if (autoChoice?.cpus === cpus) return autoChoice.policy;
  const freeCores = (await sampleIdleCores()) ?? availableParallelism() - loadavg()[0];
  autoChoice = { cpus, policy: autoIdlePolicy(cpus, freeCores), freeCores };
  return autoChoice.policy;
}

/** `--idle auto` resolved for `cpus` CPUs: the choice primeAutoIdle made, else (tests, tools that
 *  boot machines directly) one from the load average, not remembered. */
export function autoIdle(cpus: number): Exclude<IdlePolicy, 'auto'> {
  if (autoChoice?.cpus === cpus) return autoChoice.policy;
  return autoIdlePolicy(cpus, availableParallelism() - loadavg()[0]);
}

/** The free cores behind the last `auto` choice (for the setup line). */
export function autoIdleFreeCores(): number | undefined {
  return autoChoice?.freeCores;
}
export { KERNEL_NAMES as KERNEL_PROFILE_NAMES, type KernelName as KernelProfileName } from '../kernel/profiles.js';
export { HOST_STALL_MODES, type HostStallMode } from '../machine/host-stall.js';
// Each vocabulary is declared once, by its owner: where bound kthreads run (src/machine/options.ts),
// the kernel profiles (src/kernel/profiles.ts), random.c's fast_mix variants: `64` is the SipHash
// permutation, `32` the hsiphash one (src/random/fastpool.ts).
export {
  HOG_HOSTINGS as HOG_HOSTING_NAMES,
  type HogHosting as HogHostingName,
  KTHREAD_HOSTINGS as KTHREAD_HOSTING_NAMES,
  type KthreadHosting as KthreadHostingName,
} from '../machine/options.js';
export { FAST_POOL_VARIANTS as FAST_MIX_VARIANTS, type FastPoolVariant as FastMixVariant } from '../random/fastpool.js';

import type { HostStallMode } from '../machine/host-stall.js';

const MiB = 2 ** 20;

/** Inclusive ranges. Units are in the names of the settings (Ms, Bytes, Ns) or said here. */
export const LIMITS = Object.freeze({
  /** One worker thread per CPU; 64 is far more than a CI machine's cores can host usefully. */
  cpus: { min: 1, max: 64 },
  trialMs: { min: 50, max: 600_000 },
  warmupMs: { min: 0, max: 60_000 },
  /** 0: trials are not sliced. */
  sliceMs: { min: 0, max: 600_000 },
  trials: { min: 1, max: 1000 },
  /** Bytes; also at most ringBytes. */
  msgSize: { min: 1, max: 256 * MiB },
  /** Bytes, a power of two. */
  ringBytes: { min: 4096, max: 256 * MiB },
  /** CPU ids; also below cpus. */
  cpuId: { min: 0, max: 63 },
  /** Interrupts per second per target CPU. */
  irqRate: { min: 0, max: 2_000_000 },
  burstSize: { min: 2, max: 4096 },
  /** random.c mixes after 1024 interrupts; the fast pool's count is 16 bits. */
  trigger: { min: 1, max: 65_535 },
  unboundWorkers: { min: 1, max: 64 },
  lockSpins: { min: 0, max: 1_000_000 },
  watchdogMs: { min: 100, max: 60_000 },
  /** --until: the Δ-mean interval's target half-width, % of the baseline mean. */
  untilPct: { min: 0.1, max: 100 },
  /** --threshold: the practical-significance band, % of the baseline's value (family.ts). */
  thresholdPct: { min: 0, max: 50 },
  /** --max-time, per sweep point. */
  maxTimeMs: { min: 1000, max: 86_400_000 },
  /** IP MTU: IPv4's minimum datagram every host must take (576) up to IPoIB CM's 65520; each
   *  NIC profile has its own maximum too (src/net/profiles.ts, maxMtu). */
  mtu: { min: 576, max: 65_520 },
  /** Link data rate, Gb/s. */
  linkRate: { min: 0.01, max: 800 },
  /** ethtool rx-usecs / rx-frames: mlx4's CQ moderation fields are 16 bits. */
  rxUsecs: { min: 0, max: 65_535 },
  rxFrames: { min: 0, max: 65_535 },
  /** tcp_lat client/server pairs (seed 000's experiment used 8). */
  instances: { min: 1, max: 16 },
  /** --timeline-window: the last part of each trial the timeline keeps (the rings hold ~1500
   *  records a ms per thread, at most 262144: src/hw/timeline.ts). */
  timelineWindowMs: { min: 1, max: 1000 },
  /** --tdf: time dilation factor; why 16 at most: src/harness/tdf.ts (TDF_MAX). */
  tdf: { min: 1, max: 16 },
  /** --switch-cost NS: a given context-switch floor, emulated ns (src/harness/switch-cost.ts); a
   *  kernel switch costs 1–5 µs, 100 µs leaves room for a sweep far past any kernel's. */
  switchCost: { min: 0, max: 100_000 },
  /** --nodes: NUMA nodes the CPUs are split into (seed 000's X7 server: 2 sockets). */
  nodes: { min: 1, max: 16 },
});

/** Freeze a value and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The watchdog's default for a machine of `cpus` CPUs: 2 s per two CPUs (at least 2 s, at most
 * the flag's 60 s). The lab's hosts have a few cores; a machine of more CPUs than cores shares
 * them, and a CPU thread holding a lock (inline's input_pool.lock in hardirq) may wait that
 * much longer for a core: a 16-CPU run at host load 55 tripped 2 s while nothing was stuck.
 */
export function defaultWatchdogMs(cpus: number): number {
  return Math.min(60_000, Math.max(2_000, 1_000 * cpus));
}

/** Directory under the working directory that holds one timestamped directory per run. */
export const RESULTS_PARENT_DIR = 'deferlab-results';

export const DEFAULTS = deepFreeze({
  cpus: 2,
  hz: 250 as Hz,
  trialMs: 1000,
  warmupMs: 300,
  /** Slices of a trial, interleaved over the round's strategies (src/harness/round.ts). */
  sliceMs: 100,
  trials: 5,
  strategies: DEFAULT_STRATEGY_SPECS,
  baseline: 'inline',
  workload: { kind: 'tcp_lat' as WorkloadKind },
  tcpLat: {
    msgSize: 64,
    clientCpu: 0,
    serverCpu: 1,
    ringBytes: 4 * MiB,
    nic: DEFAULT_NIC as NicProfileName,
    instances: 1,
  },
  irq: { rate: 20_000, pattern: 'constant' as IrqPattern, burstSize: 32, cpus: 'all' as const },
  notify: 'if-idle' as NotifyPolicy,
  fastPool: { trigger: 1024, variant: '64' as FastMixVariant },
  lockSpins: 200,
  idle: 'auto' as IdlePolicy,
  kthreads: DEFAULT_KTHREADS as KthreadHostingName,
  hogs: DEFAULT_HOGS as HogHostingName,
  kernel: DEFAULT_KERNEL as KernelProfileName,
  watchdogMs: 2000,
  tracing: true,
  /** --host-stalls: exchanges that overlapped a host stall stay in the distribution (src/machine/host-stall.ts). */
  hostStalls: 'keep' as HostStallMode,
  /** --host-steal: the host's run delay over a stall is steal, not the running task's time; off by
   *  default (docs/twin.md, "Host stalls as steal": on a loaded host it stretches every slice). */
  hostSteal: false,
  /** --host-helpers: V8's and libuv's threads at nice 10 once a machine is up (src/machine/host-threads.ts
   *  HOST_HELPER_NICE; docs/twin.md, "V8's helpers": with them at nice 0, (c)'s p99 was 1.6-2.3 ms, at 19
   *  0.2-1.5 ms; at 19 V8's optimising compiler starved). */
  hostHelpers: 'nice' as HostHelperMode,
  sweep: null,
  control: false,
  /** --max-time: ten minutes of extra rounds per point, at most. */
  maxTimeMs: 600_000,
  wide: false,
  timeline: false,
  /** --timeline-window: the last 50 ms of each trial. */
  timelineWindowMs: 50,
  /** --tdf: no time dilation (src/harness/tdf.ts). */
  tdf: 1 as number | 'auto',
  /** --switch-cost: a switch lasts at least this host kernel's, measured at start-up (src/harness/switch-cost.ts). */
  switchCost: 'host' as number | 'host' | 'off',
});

/**
 * A tcp_lat workload for a machine: DEFAULTS.tcpLat with `over` applied, the NIC its profile's
 * defaults unless `over.nic` gives them (benchmarks and tests start here).
 */
export function tcpLatOptions(
  over: Partial<Omit<TcpLatOptions, 'kind' | 'nic'>> & { nic?: NicProfileName | NicOptions } = {},
): TcpLatOptions {
  const d = DEFAULTS.tcpLat;
  const nic = over.nic ?? d.nic;
  return {
    kind: 'tcp_lat',
    msgSize: over.msgSize ?? d.msgSize,
    clientCpu: over.clientCpu ?? d.clientCpu,
    serverCpu: over.serverCpu ?? d.serverCpu,
    ringBytes: over.ringBytes ?? d.ringBytes,
    nic: typeof nic === 'string' ? nicOptions(nic) : nic,
    instances: over.instances ?? d.instances,
  };
}

/** The seed of {@link machineDefaults}: a run draws a random one when it is resolved. */
export const MACHINE_DEFAULT_SEED = 1;

/**
 * MachineOptions with every default: the machine `deferlab run` boots for `cpus` CPUs when no
 * other setting is given, but with a fixed seed and one strategy, the baseline. Config
 * resolution takes its CPU-count-dependent defaults from it (src/config/schema.ts); the
 * conformance suite, the benchmarks and the tests start from it and override what they vary.
 *
 * It lives here, beside {@link DEFAULTS}, rather than in src/machine/options.ts, because its
 * numbers are the user's defaults (docs/cli.md): one table holds them, so a changed default
 * reaches a run, the conformance suite, the benchmarks and the tests alike. src/machine says
 * what an option means and has no defaults of its own.
 *
 * Beyond DEFAULTS: the topology is each CPU its own SMT group, one cache group and one NUMA node
 * of all CPUs; one unbound worker per CPU; background interrupts on every CPU; seed
 * {@link MACHINE_DEFAULT_SEED}; strategies: `inline`; payload: none (random.c's mix). The
 * workload is tcp_lat between CPUs 0 and 1: with fewer than 2 CPUs, give another one.
 */
export function machineDefaults(cpus: number = DEFAULTS.cpus): MachineOptions {
  const all = Array.from({ length: cpus }, (_, cpu) => cpu);
  return {
    cpus,
    hz: DEFAULTS.hz,
    notify: DEFAULTS.notify,
    topology: defaultTopology(cpus),
    unboundWorkers: cpus,
    lockSpins: DEFAULTS.lockSpins,
    idle: { ...DEFAULT_IDLE, policy: autoIdle(cpus) },
    kthreads: DEFAULTS.kthreads,
    hogs: DEFAULTS.hogs,
    kernel: DEFAULTS.kernel,
    fastPool: { ...DEFAULTS.fastPool },
    tracing: DEFAULTS.tracing,
    hostStalls: { mode: DEFAULTS.hostStalls, steal: DEFAULTS.hostSteal },
    kthreadCharge: DEFAULT_KTHREAD_CHARGE,
    watchdogMs: defaultWatchdogMs(cpus),
    seed: MACHINE_DEFAULT_SEED,
    irq: { rate: DEFAULTS.irq.rate, pattern: DEFAULTS.irq.pattern, burstSize: DEFAULTS.irq.burstSize, cpus: all },
    workload: tcpLatOptions(),
    strategies: [builtinRef(DEFAULTS.baseline)],
  };
}
/** With --until, a point runs at least this many rounds before its widths are judged. */
export const UNTIL_MIN_ROUNDS = 3;
