/**
 * The flags that set config fields: one row per flag, naming the field it sets (a dotted path
 * in the config file's shape), its value placeholder, and the text `--help` and the docs show.
 *
 * The CLI builds its parser from this table; the resolver uses it to name a setting the way the
 * user gave it (`--msg-size` rather than `workload.msgSize`). A field with no row here can only
 * be set in a config file.
 */
import { DEFAULT_KERNEL, KERNEL_NAMES, KERNEL_PROFILES, type KernelProfile } from '../kernel/profiles.js';
import { DEFAULT_HOGS, DEFAULT_KTHREADS, HOG_HOSTINGS, KTHREAD_HOSTINGS } from '../machine/options.js';
import { DEFAULT_NIC, NIC_PROFILES } from '../net/profiles.js';
import { FAST_POOL_VARIANTS } from '../random/fastpool.js';
import { NOTIFY_POLICIES } from '../shm/doorbell.js';
import { DEFAULTS, HZ_VALUES, IDLE_POLICY_NAMES, LIMITS } from './defaults.js';
import { LAB_FLAGS } from './lab-flags.js';
import { PLACEMENT_FLAGS } from './placement-flags.js';
import { BUILTIN_STRATEGY_NAMES } from './strategy-spec.js';
import { VERDICT_FLAGS } from './verdict-flags.js';

export interface ConfigFlag {
  /** `--cpus` */
  readonly flag: string;
  /** The field it sets, as a dotted path: `workload.msgSize`. */
  readonly path: string;
  /** Placeholder for its value in help (`N`, `TIME`); absent for switches. */
  readonly value?: string;
  /** A typical value, for "needs a value, like --cpus 4". */
  readonly example?: string;
  /** The value a switch stores at `path` (`--no-tracing` stores false). */
  readonly sets?: boolean | null;
  /** May be given more than once; the values form a list. */
  readonly repeatable?: boolean;
  readonly help: string;
  /** Accepted values, as help shows them. */
  readonly accepts: string;
  readonly default: string;
}

const range = (r: { min: number; max: number }) => `${r.min}..${r.max}`;

/** `a, b and c`. */
const andList = (xs: readonly string[]) =>
  xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;

/**
 * A default that depends on `--kernel`, read from the profile table (kernel/profiles.ts), so the
 * help cannot drift from what the resolver does: `1000 for 5.15, 250 for 6.1, 6.9 and 6.18`.
 * Kernels oldest first, grouped by `value(profile)` in order of first appearance.
 */
export function perKernelText(value: (p: KernelProfile) => string): string {
  const groups = new Map<string, string[]>();
  for (const k of [...KERNEL_NAMES].reverse()) {
    const v = value(KERNEL_PROFILES[k]);
    groups.set(v, [...(groups.get(v) ?? []), k]);
  }
  return [...groups].map(([v, ks]) => `${v} for ${andList(ks)}`).join(', ');
}

/** `--hz` under each profile: its distribution's CONFIG_HZ where it has one, else the lab's (schema.ts). */
const hzOfProfile = (p: KernelProfile): number => p.hz ?? DEFAULTS.hz;

export const CONFIG_FLAGS: readonly ConfigFlag[] = Object.freeze([
  {
    flag: '--cpus',
    path: 'cpus',
    value: 'N',
    example: '4',
    help: 'emulated CPUs, one worker thread each',
    accepts: range(LIMITS.cpus),
    default: '2 (or the CPUs --topology describes)',
  },
  {
    flag: '--hz',
    path: 'hz',
    value: 'HZ',
    example: '1000',
    help: 'kernel tick rate: jiffies per second',
    accepts: HZ_VALUES.join(', '),
    default: `the --kernel profile's: ${perKernelText((p) => String(hzOfProfile(p)))}`,
  },
  {
    flag: '--duration',
    path: 'trialMs',
    value: 'TIME',
    example: '1.5s',
    help: 'length of one measured trial',
    accepts: '50ms..600s, as 1500, 1500ms or 1.5s',
    default: '1s',
  },
  {
    flag: '--warmup',
    path: 'warmupMs',
    value: 'TIME',
    example: '500ms',
    help: 'unmeasured run before each trial',
    accepts: '0..60s',
    default: '300ms',
  },
  {
    flag: '--slice',
    path: 'sliceMs',
    value: 'TIME',
    example: '200ms',
    help: 'measure each trial in slices of about this long, slice 1 of every strategy, then slice 2, ...; 0: whole trials',
    accepts: '0..600s, as 100, 100ms or 0.1s',
    default: '100ms',
  },
  {
    flag: '--trials',
    path: 'trials',
    value: 'N',
    example: '10',
    help: 'trials per strategy, interleaved A B C A B C ...',
    accepts: range(LIMITS.trials),
    default: '5',
  },
  ...VERDICT_FLAGS, // --control, --no-control, --until, --threshold, --max-time (verdict-flags.ts)
  {
    flag: '--wide',
    path: 'wide',
    sets: true,
    help: 'print every column of the summary table (the default table fits 120 columns; JSON, CSV and HTML always have everything)',
    accepts: '',
    default: 'the 120-column table',
  },
  {
    flag: '--strategy',
    path: 'strategies',
    value: 'SPEC',
    example: 'timer:deferrable=true',
    repeatable: true,
    help: 'a strategy to compare (repeat for more): NAME[:key=value,...] or FILE[:key=value,...]',
    accepts: `${BUILTIN_STRATEGY_NAMES.join(', ')}, or a .ts/.js/.mjs/.mts file`,
    default: 'every built-in',
  },
  {
    flag: '--baseline',
    path: 'baseline',
    value: 'LABEL',
    example: 'workqueue',
    help: 'the strategy the others are compared against',
    accepts: 'the label (or spec) of one of the strategies',
    default: 'inline, or the first --strategy when inline is not among them',
  },
  {
    flag: '--workload',
    path: 'workload.kind',
    value: 'KIND',
    example: 'irq_only',
    help: 'what runs on the CPUs: qperf tcp_lat ping-pong, or background interrupts only',
    accepts: 'tcp_lat, irq_only',
    default: 'tcp_lat',
  },
  {
    flag: '--msg-size',
    path: 'workload.msgSize',
    value: 'SIZE',
    example: '4K',
    help: 'tcp_lat message size in bytes',
    accepts: '1..ring size, as 64, 4K, 1M, 4KiB',
    default: '64',
  },
  {
    flag: '--client-cpu',
    path: 'workload.clientCpu',
    value: 'CPU',
    example: '0',
    help: "tcp_lat client task's CPU",
    accepts: 'below --cpus, not the server CPU',
    default: '0',
  },
  {
    flag: '--server-cpu',
    path: 'workload.serverCpu',
    value: 'CPU',
    example: '1',
    help: "tcp_lat server task's CPU",
    accepts: 'below --cpus, not the client CPU',
    default: '1',
  },
  {
    flag: '--ring-size',
    path: 'workload.ringBytes',
    value: 'SIZE',
    example: '16M',
    help: 'tcp_lat ring buffer per direction',
    accepts: 'a power of two, 4K..256M',
    default: '4M',
  },
  {
    flag: '--nic',
    path: 'workload.nic',
    value: 'PROFILE',
    example: 'ixgbe',
    help: "tcp_lat's network: the NIC profile both ends use (MTU, link rate, NAPI weight, moderation)",
    accepts: `${NIC_PROFILES.join(', ')} (see docs/cli.md, "Network path")`,
    default: DEFAULT_NIC,
  },
  {
    flag: '--mtu',
    path: 'workload.mtu',
    value: 'BYTES',
    example: '9000',
    help: "IP MTU, overriding the NIC profile's",
    accepts: `${range(LIMITS.mtu)}, at most the profile's maximum`,
    default: "the profile's (65520, 2044, 1500)",
  },
  {
    flag: '--link-rate',
    path: 'workload.linkRate',
    value: 'GBPS',
    example: '25',
    help: "link data rate in Gb/s (the wire model's serialisation time), overriding the profile's",
    accepts: `${range(LIMITS.linkRate)}, like 10, 32 or 40G`,
    default: "the profile's (32, 32, 10)",
  },
  {
    flag: '--rx-usecs',
    path: 'workload.rxUsecs',
    value: 'US',
    example: '16',
    help: 'interrupt moderation: mlx4 CQ period (ipoib-*), or ixgbe ITR (0 off, 1 adaptive, >1 fixed µs)',
    accepts: `${range(LIMITS.rxUsecs)} (ixgbe: 0, 1 or 2..1022)`,
    default: "the profile's (0, 0, 1)",
  },
  {
    flag: '--rx-frames',
    path: 'workload.rxFrames',
    value: 'N',
    example: '64',
    help: 'interrupt moderation: completions per interrupt (mlx4 CQ count; ipoib-* only, with --rx-usecs > 0)',
    accepts: range(LIMITS.rxFrames),
    default: '0 (no count moderation)',
  },
  {
    flag: '--instances',
    path: 'workload.instances',
    value: 'N',
    example: '8',
    help: 'tcp_lat client/server pairs, pair i on CPUs client+i and server+i (mod --cpus), or spread over --app-cpus',
    accepts: range(LIMITS.instances),
    default: '1',
  },
  ...PLACEMENT_FLAGS, // --app-cpus, --nic-irq-cpus, --nodes (placement-flags.ts)
  {
    flag: '--irq-rate',
    path: 'irq.rate',
    value: 'RATE',
    example: '50k',
    help: 'background interrupts per second, per target CPU',
    accepts: '0..2000000, as 20000, 20k, 1M',
    default: '20k',
  },
  {
    flag: '--irq-pattern',
    path: 'irq.pattern',
    value: 'PATTERN',
    example: 'poisson',
    help: 'how interrupts arrive',
    accepts: 'constant, poisson, bursts',
    default: 'constant',
  },
  {
    flag: '--irq-burst',
    path: 'irq.burstSize',
    value: 'N',
    example: '64',
    help: 'interrupts per burst (pattern bursts)',
    accepts: range(LIMITS.burstSize),
    default: '32',
  },
  {
    flag: '--irq-cpus',
    path: 'irq.cpus',
    value: 'CPUS',
    example: '0,1',
    help: 'CPUs that receive background interrupts',
    accepts: 'all, or ids below --cpus like 0,1 or 0-3',
    default: 'all',
  },
  {
    flag: '--irq-trace',
    path: 'irq.trace',
    value: 'FILE',
    example: 'examples/irq-trace.perf.txt',
    help: "replay recorded device interrupts instead of generating them: 'perf script' output of irq:irq_handler_entry, or CSV time_ns,cpu,irq; offset 0 is each trial's start",
    accepts: 'a file path, relative to the working directory',
    default: 'none (the generator: --irq-rate)',
  },
  {
    flag: '--irq-trace-map',
    path: 'irq.traceMap',
    value: 'MAP',
    example: '3:0,5:1',
    help: "which host CPU's arrivals go to which emulated CPU (unmapped host CPUs are dropped)",
    accepts: 'HOST:CPU pairs like 3:0,5:1, CPUs below --cpus',
    default: 'host CPUs in order of their first arrival',
  },
  {
    flag: '--irq-trace-loop',
    path: 'irq.traceLoop',
    sets: true,
    help: 'repeat the trace for as long as a trial runs (else arrivals stop when it ends)',
    accepts: '',
    default: 'play once',
  },
  {
    flag: '--irq-trace-scale',
    path: 'irq.traceScale',
    value: 'X',
    example: '2',
    help: 'stretch the trace in time: 2 replays it at half the rate, 0.5 at twice',
    accepts: '0.001..1000',
    default: '1',
  },
  {
    flag: '--seed',
    path: 'seed',
    value: 'N',
    example: '42',
    help: 'seed of every random choice (printed with the results, to replay a run)',
    accepts: '0..4294967295, decimal or 0x hex',
    default: 'random',
  },
  {
    flag: '--notify',
    path: 'notify',
    value: 'POLICY',
    example: 'always',
    help: "when a producer rings a sleeper's doorbell",
    accepts: NOTIFY_POLICIES.join(', '),
    default: 'if-idle',
  },
  {
    flag: '--topology',
    path: 'topology',
    value: 'SPEC',
    example: 'smt=0-1/2-3',
    help: 'SMT / cache / NUMA groups, for unbound affinity scopes',
    accepts: 'smt=0-1/2-3,cache=0-3,numa=0-3 (any of the levels)',
    default: 'each CPU its own core; one cache; one node',
  },
  {
    flag: '--trigger',
    path: 'fastPool.trigger',
    value: 'N',
    example: '64',
    help: "interrupts a CPU's fast pool takes before it is mixed in (random.c: 1024)",
    accepts: range(LIMITS.trigger),
    default: '1024',
  },
  {
    flag: '--fastmix',
    path: 'fastPool.variant',
    value: 'BITS',
    example: '32',
    help: 'fast_mix variant: 64 (SipHash) or 32 (hsiphash)',
    accepts: FAST_POOL_VARIANTS.join(', '),
    default: '64',
  },
  {
    flag: '--unbound-workers',
    path: 'unboundWorkers',
    value: 'N',
    example: '4',
    help: 'kworker/u threads serving unbound workqueues',
    accepts: range(LIMITS.unboundWorkers),
    default: 'the CPU count',
  },
  {
    flag: '--lock-spins',
    path: 'lockSpins',
    value: 'N',
    example: '1000',
    help: 'spins on a held lock before sleeping on it',
    accepts: range(LIMITS.lockSpins),
    default: '200',
  },
  {
    flag: '--idle',
    path: 'idle',
    value: 'POLICY',
    example: 'halt',
    help: 'how an idle CPU waits: haltpoll polls through short idle periods and sleeps through long ones (the cpuidle-haltpoll governor), poll never sleeps (idle=poll), halt always sleeps (every wake-up a host futex wake); auto: poll when the host has a core free for every emulated CPU (measured just before the run), else halt',
    accepts: IDLE_POLICY_NAMES.join(', '),
    default: 'auto',
  },
  {
    flag: '--kthreads',
    path: 'kthreads',
    value: 'HOSTING',
    example: 'cpu',
    help: "where kworker/n, ksoftirqd/n and the unbound kworker/uN:i run: thread (threads of their own: every switch into one is a host futex wake) or cpu (on CPU n's thread, unbound worker i on CPU i mod N's: a same-thread switch)",
    accepts: KTHREAD_HOSTINGS.join(', '),
    default: DEFAULT_KTHREADS,
  },
  {
    flag: '--hogs',
    path: 'hogs',
    value: 'HOSTING',
    example: 'cpu',
    help: "where a scenario's CPU hogs run: thread (threads of their own, as stress --cpu is a process: taking the CPU from one is a host futex wake) or cpu (on their CPU's thread: a same-thread switch)",
    accepts: HOG_HOSTINGS.join(', '),
    default: DEFAULT_HOGS,
  },
  {
    flag: '--kernel',
    path: 'kernel',
    value: 'VERSION',
    example: '5.15',
    help: "the kernel profile: 5.15 (seed 000's: CFS, ksoftirqd_running() defers softirqs), 6.1 (the same rules), 6.9 (EEVDF, WQ_BH), 6.18 (EEVDF with delayed dequeue and slice protection: bench:twin's host); 'deferlab list' describes them",
    accepts: KERNEL_NAMES.join(', '),
    default: DEFAULT_KERNEL,
  },
  {
    flag: '--softirq-defer',
    path: 'softirqDefer',
    value: 'on|off',
    example: 'off',
    help: "the ksoftirqd rule of kernels before 6.5 (irq exit leaves pending softirqs to a runnable ksoftirqd: 4cd13c21b207) on or off whatever --kernel says, for an ablation of Tejun Heo's theory",
    accepts: 'on, off',
    default: `the --kernel profile's: ${perKernelText((p) => (p.softirq.ksoftirqdDefers ? 'on' : 'off'))}`,
  },
  {
    flag: '--watchdog',
    path: 'watchdogMs',
    value: 'TIME',
    example: '5s',
    help: 'a CPU that makes no progress for this long fails the run',
    accepts: '100ms..60s',
    default: '1 s per CPU, from 2s to 60s (16 s for 16 CPUs)',
  },
  {
    flag: '--no-tracing',
    path: 'tracing',
    sets: false,
    help: 'record counters only, no per-event trace points',
    accepts: '',
    default: 'tracing on',
  },
  {
    flag: '--timeline',
    path: 'timeline',
    sets: true,
    help: 'write timeline.json into the results directory: a Chrome trace (Perfetto, chrome://tracing) of the last part of each trial, one track per CPU (hard IRQs, softirqs, the task on the CPU, hand-off → work arrows) and one for the interrupt generator; timeline.html, written beside it, draws it offline',
    accepts: '',
    default: 'no timeline',
  },
  {
    flag: '--timeline-window',
    path: 'timelineWindowMs',
    value: 'TIME',
    example: '10ms',
    help: "with --timeline: how much of the end of each trial's measured phase the timeline keeps (and the drain after it)",
    accepts: '1ms..1000ms, as 20, 20ms or 0.02s',
    default: '50ms',
  },
  {
    flag: '--out',
    path: 'outDir',
    value: 'DIR',
    example: 'results/today',
    help: "directory for results.json and the report: a new or empty one, or an earlier run's (scenario: an earlier scenario's), which it replaces; a directory holding anything else is refused",
    accepts: 'a path, relative to the working directory',
    default: 'deferlab-results/YYYYMMDD-HHMMSS',
  },
  {
    flag: '--no-output',
    path: 'outDir',
    sets: null,
    help: 'write no files; print the summary only',
    accepts: '',
    default: '',
  },
  {
    flag: '--sweep',
    path: 'sweep',
    value: 'SPEC',
    example: 'msg_size:4K:1024K:*2',
    help: 'repeat the comparison at each point (qperf -oo syntax; also -oo, --oo)',
    accepts: 'msg_size|irq_rate|trigger:MIN:MAX:*N|+N, or NAME:V1,V2,...',
    default: 'no sweep',
  },
  ...LAB_FLAGS, // --host-stalls, --host-steal, --tdf, --explain (lab-flags.ts)
] satisfies ConfigFlag[]);

/** Paths with no single flag, named by the flag that sets them plus the part. */
const SPECIAL_NAMES: Readonly<Record<string, string>> = {
  'topology.smt': '--topology smt',
  'topology.cache': '--topology cache',
  'topology.numa': '--topology numa',
  outDir: '--out',
};

/** The flag that sets a field (`workload.msgSize` → `--msg-size`), if there is one. */
export function flagForPath(path: string): string | undefined {
  return SPECIAL_NAMES[path] ?? CONFIG_FLAGS.find((f) => f.path === path)?.flag;
}
