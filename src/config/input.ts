/**
 * The shape of one layer of configuration as a user writes it, and its validation with zod.
 *
 * The config file, a scenario's preset and the flags are all this shape: the same camelCase
 * field names, every field optional, and numbers may be strings with units ("1.5s", "4K",
 * "20k") so that the file can say what the flags say. `validateLayer` checks one layer on its
 * own: types, ranges, unknown keys. Rules between fields (the server CPU exists, the message
 * fits the ring) need the merged config and live in checks.ts.
 */
import { z } from 'zod';
import { DeferlabError } from '../errors.js';
import { MAX_SCALE, MIN_SCALE, parseIrqTraceMap } from '../irq/trace-file.js';
import { KTHREAD_CHARGES, type KthreadCharge } from '../kernel/sched/rq.js';
import { SOFTIRQ_DEFER_VALUES, type SoftirqDefer } from '../kernel/softirq.js';
import { HOST_HELPER_MODES, type HostHelperMode } from '../machine/host-threads.js';
import { NIC_PROFILES, type NicProfileName } from '../net/profiles.js';
import {
  FAST_MIX_VARIANTS,
  type FastMixVariant,
  HOG_HOSTING_NAMES,
  HOST_STALL_MODES,
  type HogHostingName,
  type HostStallMode,
  HZ_VALUES,
  type Hz,
  IDLE_POLICY_NAMES,
  type IdlePolicy,
  IRQ_PATTERNS,
  type IrqPattern,
  KERNEL_PROFILE_NAMES,
  type KernelProfileName,
  KTHREAD_HOSTING_NAMES,
  type KthreadHostingName,
  LIMITS,
  NOTIFY_POLICIES,
  type NotifyPolicy,
  WORKLOAD_KINDS,
  type WorkloadKind,
} from './defaults.js';
import { badValue, closest, fail, formatValue, ok, type Parsed, unknownKey } from './errors.js';
import { CONFIG_FLAGS } from './flags.js';
import { type Path, pathText, type Source, settingName, valueAt } from './origins.js';
import { parseSweep, type Sweep, type SweepParam, sweepFromList } from './sweep.js';
import { parseTopologyText } from './topology.js';
import {
  cpuSelection,
  durationMsIn,
  gbpsIn,
  integerIn,
  oneOfIntegers,
  parsePlainNumber,
  parseUint32,
  powerOfTwoSizeIn,
  rateIn,
  sizeIn,
} from './units.js';

type NumberInput = number | string;

/**
 * One layer of configuration before validation. Resolution validates every field whatever its
 * static type says, so flags can be passed in as the strings the user typed.
 */
export interface PartialConfig {
  cpus?: NumberInput;
  /** `--nodes`: NUMA nodes (equal, contiguous shares of the CPUs). */
  nodes?: NumberInput;
  hz?: NumberInput;
  /** Milliseconds, or a duration string: `1500`, `1500ms`, `1.5s`. */
  trialMs?: NumberInput;
  warmupMs?: NumberInput;
  sliceMs?: NumberInput;
  trials?: NumberInput;
  /** Strategy specs (see strategy-spec.ts); replaces the whole default list. */
  strategies?: readonly string[];
  baseline?: string;
  workload?: {
    kind?: WorkloadKind;
    /** Bytes, or `4K`, `1M`, `4KiB`. tcp_lat only. */
    msgSize?: NumberInput;
    clientCpu?: NumberInput;
    serverCpu?: NumberInput;
    ringBytes?: NumberInput;
    /** NIC profile (src/net/profiles.ts) and its overrides. tcp_lat only. */
    nic?: NicProfileName;
    mtu?: NumberInput;
    /** Gb/s, or `10G`. */
    linkRate?: NumberInput;
    rxUsecs?: NumberInput;
    rxFrames?: NumberInput;
    instances?: NumberInput;
    /** `--app-cpus`: the CPUs the application's tasks may run on (taskset / numactl -N), `0-7`. */
    appCpus?: readonly number[] | string;
    /** `--nic-irq-cpus`: the CPUs the NIC's vectors interrupt, `0` or `0-3`. */
    nicIrqCpus?: readonly number[] | string;
  };
  irq?: {
    /** Per second per target CPU, or `20k`, `1M`. */
    rate?: NumberInput;
    pattern?: IrqPattern;
    burstSize?: NumberInput;
    /** `all`, a list, or a string like `0,1` / `0-3`. */
    cpus?: readonly number[] | string;
    /** `--irq-trace`: a perf script or CSV trace whose arrivals replace the generator's; null: none. */
    trace?: string | null;
    /** `--irq-trace-map`: host CPU to emulated CPU, `3:0,5:1`. */
    traceMap?: string;
    /** `--irq-trace-loop`: repeat the trace. */
    traceLoop?: boolean;
    /** `--irq-trace-scale`: time stretch factor, `2` (half the rate) or `0.5`. */
    traceScale?: NumberInput;
  };
  seed?: NumberInput;
  notify?: NotifyPolicy;
  /** Groups per level, or the flag's text form `smt=0-1/2-3,cache=0-3`. */
  topology?:
    | string
    | {
        smt?: readonly (readonly number[])[];
        cache?: readonly (readonly number[])[];
        numa?: readonly (readonly number[])[];
      };
  fastPool?: { trigger?: NumberInput; variant?: FastMixVariant | 64 | 32 };
  unboundWorkers?: NumberInput;
  lockSpins?: NumberInput;
  idle?: IdlePolicy;
  kthreads?: KthreadHostingName;
  /** Where hogs and spinners run: their own threads or their CPU's (src/machine/options.ts, HOG_HOSTINGS). */
  hogs?: HogHostingName;
  kernel?: KernelProfileName;
  /** The 5.15/6.1 ksoftirqd rule on or off whatever the kernel profile says (default: the profile's). */
  softirqDefer?: SoftirqDefer;
  watchdogMs?: NumberInput;
  tracing?: boolean;
  hostStalls?: HostStallMode;
  hostSteal?: boolean;
  /** Relative to the working directory; null writes nothing. */
  outDir?: string | null;
  /** qperf sweep text (`msg_size:4K:1M:*2`), or the list form; null for none. */
  sweep?: string | null | { param: SweepParam; values: readonly NumberInput[] };
  /** Add an A/A copy of the baseline. */
  control?: boolean;
  /** Target half-width of every Δ-mean interval, % of the baseline mean: `3`, `"3%"`; null: off. */
  until?: NumberInput | null;
  /** With `until`: the longest a point keeps adding rounds. */
  maxTimeMs?: NumberInput;
  /** Every column in the terminal table. */
  wide?: boolean;
  /** `--threshold PCT`: no change smaller than this % of the baseline is called. */
  threshold?: NumberInput;
  /** Write timeline.json (a Chrome trace of each trial's last `timelineWindowMs`). */
  timeline?: boolean;
  /** With `timeline`: the window kept of each trial, ms or a duration string. */
  timelineWindowMs?: NumberInput;
  /** Time dilation factor: a number from 1 to LIMITS.tdf.max, or "auto" (src/harness/tdf.ts). */
  tdf?: NumberInput | 'auto';
  /** Explain each exchange's latency by cause (the timeline rings read after every slice). */
  explain?: boolean;
  /** The context-switch floor: "host" (measured at start-up), "off", or ns (src/harness/switch-cost.ts). */
  switchCost?: NumberInput | 'host' | 'off';
  /** How kthreads are charged: `work` (their work items only, the default model) or `wall` (src/kernel/sched/rq.ts). */
  kthreadCharge?: KthreadCharge;
  /** What is done with the process's threads that are not the machine's: `nice` (19) or `leave` (src/machine/host-threads.ts). */
  hostHelpers?: HostHelperMode;
}

/**
 * A zod field that runs one of our parsers; its complaint becomes the issue's message and
 * its detail and fix ride along in `params`.
 */
function field<T>(parse: (input: unknown) => Parsed<T>) {
  return z.unknown().transform((input, ctx): T => {
    const result = parse(input);
    if (result.ok) return result.value;
    ctx.addIssue({ code: 'custom', message: result.problem.constraint, params: { ...result.problem } });
    return z.NEVER;
  });
}

const oneOf = (values: readonly string[]) => `must be one of ${values.join(', ')}`;

/** `64` or `32`, as a number (JSON) or a string (flag). */
const fastMixVariant = (input: unknown): Parsed<FastMixVariant> => {
  const text = typeof input === 'number' || typeof input === 'string' ? String(input) : '';
  const variant = FAST_MIX_VARIANTS.find((v) => v === text);
  return variant ? ok(variant) : fail(`must be ${FAST_MIX_VARIANTS.join(' or ')}`);
};

/** A directory path (not empty, not only spaces), or null: write nothing. */
const outDirInput = (input: unknown): Parsed<string | null> => {
  if (input === null) return ok(null);
  if (typeof input !== 'string') return fail('must be a directory path, or null for no output');
  if (input.trim() === '') {
    return fail('must not be empty', {
      fix: 'name a directory, or write no files with --no-output ("outDir": null in a config file)',
    });
  }
  return ok(input);
};

const sweepInput = (input: unknown): Parsed<Sweep | null> => {
  if (input === null) return ok(null);
  if (typeof input === 'string') return parseSweep(input);
  const shape = 'must be a sweep like "msg_size:4K:1024K:*2", an object {"param": ..., "values": [...]}, or null';
  if (typeof input !== 'object' || Array.isArray(input)) return fail(shape);
  const { param, values, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof param !== 'string' || !Array.isArray(values)) return fail(shape);
  return sweepFromList(param, values);
};

/** A percentage from LIMITS.untilPct.min to max: `3`, `"3"`, `"3%"`, `"0.5 %"`; null or `"off"`: off. */
const untilInput = (input: unknown): Parsed<number | null> => {
  if (input === null || (typeof input === 'string' && input.trim().toLowerCase() === 'off')) return ok(null);
  const { min, max } = LIMITS.untilPct;
  const text = typeof input === 'string' ? input.trim().replace(/\s*%$/, '') : input;
  const n = parsePlainNumber(text);
  return n !== undefined && n >= min && n <= max ? ok(n) : fail(`must be a percentage from ${min} to ${max}, or off`);
};

/** A percentage from LIMITS.thresholdPct.min to max: `2`, `"2"`, `"2%"`, `"0.5 %"`. */
const thresholdInput = (input: unknown): Parsed<number> => {
  const { min, max } = LIMITS.thresholdPct;
  const text = typeof input === 'string' ? input.trim().replace(/\s*%$/, '') : input;
  const n = parsePlainNumber(text);
  return n !== undefined && n >= min && n <= max ? ok(n) : fail(`must be a percentage from ${min} to ${max}`);
};

const cpuGroups = z
  .array(
    z
      .array(field(integerIn(LIMITS.cpuId.min, LIMITS.cpuId.max)), {
        error: 'must be a list of groups, each a list of CPU ids',
      })
      .min(1, {
        error: 'must not have an empty group',
      }),
    { error: 'must be a list of groups of CPU ids, like [[0, 1], [2, 3]]' },
  )
  .min(1, { error: 'must have at least one group' });

const TOPOLOGY_SHAPE = { smt: cpuGroups.optional(), cache: cpuGroups.optional(), numa: cpuGroups.optional() };

const topology = z.preprocess(
  (input, ctx) => {
    if (typeof input !== 'string') return input;
    const parsed = parseTopologyText(input);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.problem.constraint, params: { ...parsed.problem } });
    return input;
  },
  z.strictObject(TOPOLOGY_SHAPE, {
    error: 'must be an object like {"smt": [[0, 1]], "cache": [[0, 1]]} or text like smt=0-1',
  }),
);

const WORKLOAD_SHAPE = {
  kind: z.enum(WORKLOAD_KINDS, { error: oneOf(WORKLOAD_KINDS) }).optional(),
  msgSize: field(sizeIn(LIMITS.msgSize.min, LIMITS.msgSize.max)).optional(),
  clientCpu: field(integerIn(LIMITS.cpuId.min, LIMITS.cpuId.max)).optional(),
  serverCpu: field(integerIn(LIMITS.cpuId.min, LIMITS.cpuId.max)).optional(),
  ringBytes: field(powerOfTwoSizeIn(LIMITS.ringBytes.min, LIMITS.ringBytes.max)).optional(),
  nic: z.enum(NIC_PROFILES, { error: oneOf(NIC_PROFILES) }).optional(),
  mtu: field(integerIn(LIMITS.mtu.min, LIMITS.mtu.max)).optional(),
  linkRate: field(gbpsIn(LIMITS.linkRate.min, LIMITS.linkRate.max)).optional(),
  rxUsecs: field(integerIn(LIMITS.rxUsecs.min, LIMITS.rxUsecs.max)).optional(),
  rxFrames: field(integerIn(LIMITS.rxFrames.min, LIMITS.rxFrames.max)).optional(),
  instances: field(integerIn(LIMITS.instances.min, LIMITS.instances.max)).optional(),
  appCpus: field(cpuSelection(LIMITS.cpuId.max)).optional(),
  nicIrqCpus: field(cpuSelection(LIMITS.cpuId.max)).optional(),
};

/** The fields each workload kind takes besides `kind`. Adding a kind: add its fields here too. */
export const WORKLOAD_FIELDS: Readonly<Record<WorkloadKind, readonly (keyof typeof WORKLOAD_SHAPE)[]>> = {
  tcp_lat: [
    'msgSize',
    'clientCpu',
    'serverCpu',
    'ringBytes',
    'nic',
    'mtu',
    'linkRate',
    'rxUsecs',
    'rxFrames',
    'instances',
    'appCpus',
    'nicIrqCpus',
  ],
  irq_only: [],
};

/** A trace file's path (not empty), or null: no trace. */
const traceFileInput = (input: unknown): Parsed<string | null> => {
  if (input === null) return ok(null);
  if (typeof input !== 'string' || input.trim() === '')
    return fail('must name a trace file (perf script output of irq:irq_handler_entry, or CSV time_ns,cpu,irq)', {
      fix: 'like examples/irq-trace.perf.txt',
    });
  return ok(input);
};

/** `HOST:CPU` pairs, `3:0,5:1`; the CPUs are checked against the machine's once it is known. */
const traceMapInput = (input: unknown): Parsed<string> => {
  if (typeof input !== 'string') return fail('must be HOST:CPU pairs separated by commas, like "3:0,5:1"');
  const parsed = parseIrqTraceMap(input);
  return parsed.ok ? ok(input.trim()) : fail(parsed.problem);
};

/** A time dilation factor from LIMITS.tdf.min to max (fractions allowed), or `auto`. */
const tdfInput = (input: unknown): Parsed<number | 'auto'> => {
  if (typeof input === 'string' && input.trim().toLowerCase() === 'auto') return ok('auto');
  const { min, max } = LIMITS.tdf;
  const n = parsePlainNumber(input);
  return n !== undefined && n >= min && n <= max
    ? ok(n)
    : fail(`must be a number from ${min} to ${max}, or auto`, {
        fix: "e.g. --tdf 4, or --tdf auto to set it from the lab's measured operation costs",
      });
};

/** A context-switch floor: `host`, `off`, or ns from LIMITS.switchCost.min to max. */
const switchCostInput = (input: unknown): Parsed<number | 'host' | 'off'> => {
  if (typeof input === 'string') {
    const word = input.trim().toLowerCase();
    if (word === 'host' || word === 'off') return ok(word);
  }
  const { min, max } = LIMITS.switchCost;
  const n = parsePlainNumber(input);
  return n !== undefined && n >= min && n <= max
    ? ok(n)
    : fail(`must be host, off, or a number of ns from ${min} to ${max}`, {
        fix: "e.g. --switch-cost host (this host's kernel, measured at start-up), --switch-cost off, or --switch-cost 2500",
      });
};

/** A time stretch factor from MIN_SCALE to MAX_SCALE (trace-file.ts). */
const traceScaleInput = (input: unknown): Parsed<number> => {
  const n = parsePlainNumber(input);
  return n !== undefined && n >= MIN_SCALE && n <= MAX_SCALE
    ? ok(n)
    : fail(`must be a number from ${MIN_SCALE} to ${MAX_SCALE} (2 replays at half the rate, 0.5 at twice)`);
};

const IRQ_SHAPE = {
  rate: field(rateIn(LIMITS.irqRate.min, LIMITS.irqRate.max, 'interrupts per second per CPU')).optional(),
  pattern: z.enum(IRQ_PATTERNS, { error: oneOf(IRQ_PATTERNS) }).optional(),
  burstSize: field(integerIn(LIMITS.burstSize.min, LIMITS.burstSize.max)).optional(),
  cpus: field(cpuSelection(LIMITS.cpuId.max)).optional(),
  trace: field(traceFileInput).optional(),
  traceMap: field(traceMapInput).optional(),
  traceLoop: z.boolean({ error: 'must be true or false' }).optional(),
  traceScale: field(traceScaleInput).optional(),
};

const FAST_POOL_SHAPE = {
  trigger: field(integerIn(LIMITS.trigger.min, LIMITS.trigger.max)).optional(),
  variant: field(fastMixVariant).optional(),
};

const objectError = (example: string) => ({ error: `must be an object like ${example}` });

const CONFIG_SHAPE = {
  cpus: field(integerIn(LIMITS.cpus.min, LIMITS.cpus.max)).optional(),
  nodes: field(integerIn(LIMITS.nodes.min, LIMITS.nodes.max)).optional(),
  hz: field(oneOfIntegers<Hz>(HZ_VALUES, 'the HZ values kernels use')).optional(),
  trialMs: field(durationMsIn(LIMITS.trialMs.min, LIMITS.trialMs.max)).optional(),
  warmupMs: field(durationMsIn(LIMITS.warmupMs.min, LIMITS.warmupMs.max)).optional(),
  sliceMs: field(durationMsIn(LIMITS.sliceMs.min, LIMITS.sliceMs.max)).optional(),
  trials: field(integerIn(LIMITS.trials.min, LIMITS.trials.max)).optional(),
  strategies: z
    .array(z.string({ error: 'must be a strategy spec, like "timer:deferrable=true" or "./my-strategy.ts"' }), {
      error: 'must be a list of strategy specs, like ["inline", "./my-strategy.ts"]',
    })
    .min(1, { error: 'must name at least one strategy' })
    .optional(),
  baseline: z
    .string({ error: 'must be a strategy label, like "inline"' })
    .min(1, { error: 'must not be empty' })
    .optional(),
  workload: z.strictObject(WORKLOAD_SHAPE, objectError('{"kind": "tcp_lat", "msgSize": "4K"}')).optional(),
  irq: z.strictObject(IRQ_SHAPE, objectError('{"rate": "20k", "pattern": "poisson"}')).optional(),
  seed: field(parseUint32).optional(),
  notify: z.enum(NOTIFY_POLICIES, { error: oneOf(NOTIFY_POLICIES) }).optional(),
  topology: topology.optional(),
  fastPool: z.strictObject(FAST_POOL_SHAPE, objectError('{"trigger": 1024, "variant": "64"}')).optional(),
  unboundWorkers: field(integerIn(LIMITS.unboundWorkers.min, LIMITS.unboundWorkers.max)).optional(),
  lockSpins: field(integerIn(LIMITS.lockSpins.min, LIMITS.lockSpins.max)).optional(),
  idle: z.enum(IDLE_POLICY_NAMES, { error: oneOf(IDLE_POLICY_NAMES) }).optional(),
  kthreads: z.enum(KTHREAD_HOSTING_NAMES, { error: oneOf(KTHREAD_HOSTING_NAMES) }).optional(),
  hogs: z.enum(HOG_HOSTING_NAMES, { error: oneOf(HOG_HOSTING_NAMES) }).optional(),
  kernel: z.enum(KERNEL_PROFILE_NAMES, { error: oneOf(KERNEL_PROFILE_NAMES) }).optional(),
  watchdogMs: field(durationMsIn(LIMITS.watchdogMs.min, LIMITS.watchdogMs.max)).optional(),
  tracing: z.boolean({ error: 'must be true or false' }).optional(),
  hostStalls: z.enum(HOST_STALL_MODES, { error: oneOf(HOST_STALL_MODES) }).optional(),
  hostSteal: z.boolean({ error: 'must be true or false' }).optional(),
  outDir: field(outDirInput).optional(),
  sweep: field(sweepInput).optional(),
  control: z.boolean({ error: 'must be true or false' }).optional(),
  until: field(untilInput).optional(),
  maxTimeMs: field(durationMsIn(LIMITS.maxTimeMs.min, LIMITS.maxTimeMs.max)).optional(),
  wide: z.boolean({ error: 'must be true or false' }).optional(),
  threshold: field(thresholdInput).optional(),
  timeline: z.boolean({ error: 'must be true or false' }).optional(),
  timelineWindowMs: field(durationMsIn(LIMITS.timelineWindowMs.min, LIMITS.timelineWindowMs.max)).optional(),
  tdf: field(tdfInput).optional(),
  switchCost: field(switchCostInput).optional(),
  softirqDefer: z.enum(SOFTIRQ_DEFER_VALUES, { error: oneOf(SOFTIRQ_DEFER_VALUES) }).optional(),
  explain: z.boolean({ error: 'must be true or false' }).optional(),
  kthreadCharge: z.enum(KTHREAD_CHARGES, { error: oneOf(KTHREAD_CHARGES) }).optional(),
  hostHelpers: z.enum(HOST_HELPER_MODES, { error: oneOf(HOST_HELPER_MODES) }).optional(),
};

export const partialConfigSchema = z.strictObject(CONFIG_SHAPE);

/** One layer after validation: typed values, units converted; fields still optional. */
export type ParsedPartial = z.output<typeof partialConfigSchema>;

/** The keys an object at `path` may have, for "unknown key" messages. */
const ALLOWED_KEYS: Readonly<Record<string, readonly string[]>> = {
  '': Object.keys(CONFIG_SHAPE),
  workload: Object.keys(WORKLOAD_SHAPE),
  irq: Object.keys(IRQ_SHAPE),
  fastPool: Object.keys(FAST_POOL_SHAPE),
  topology: Object.keys(TOPOLOGY_SHAPE),
};

function whereText(source: Source): string {
  switch (source.kind) {
    case 'file':
      return source.name;
    case 'preset':
      return `scenario ${source.name}'s settings`;
    default:
      return 'the settings';
  }
}

/**
 * A config key written as its flag's name (`"duration"`, `"strategy"`, `"out"`, `"msgSize"` or
 * `"nic"` at the top level): the key that flag sets, where it goes (`trialMs`, `strategies`,
 * `outDir`, `workload.msgSize`), as a suggestion; undefined when no flag is named so.
 */
function keyOfFlag(key: string, path: Path): string | undefined {
  const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const f = CONFIG_FLAGS.find((x) => x.flag === `--${key}` || x.flag === `--${kebab}`);
  if (!f) return undefined;
  const here = path.map(String).join('.');
  if (f.path === (here ? `${here}.${key}` : key)) return undefined;
  const keys = f.path.split('.');
  const json = `${keys.map((k) => `{"${k}": `).join('')}...${'}'.repeat(keys.length)}`;
  const where = keys.length > 1 ? ` (${json})` : here ? ' (at the top level)' : '';
  return `${f.path}${where}, the key ${f.flag} sets`;
}

/** Turn zod's first issue into our one-line error. */
function toError(issue: z.core.$ZodIssue, source: Source, raw: unknown): DeferlabError {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol') as Path;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    const allowed = ALLOWED_KEYS[pathText(path)] ?? [];
    return unknownKey(settingName(source, [...path, key]), allowed, closest(key, allowed) ?? keyOfFlag(key, path));
  }
  if (path.length === 0) {
    return new DeferlabError(
      'E_BAD_OPTION',
      `${whereText(source)} must hold a JSON object of settings, like {"cpus": 4} (got ${formatValue(raw)})`,
      2,
    );
  }
  const params = (issue.code === 'custom' ? issue.params : undefined) as { detail?: string; fix?: string } | undefined;
  return badValue(settingName(source, path), { constraint: issue.message, ...params }, valueAt(raw, path));
}

/**
 * Validate one layer on its own. Context: main thread. Returns the parsed layer; throws a
 * DeferlabError (exit status 2) naming the first problem the way `source` names settings.
 */
export function validateLayer(source: Source, raw: unknown): ParsedPartial {
  const result = partialConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  throw toError(result.error.issues[0], source, raw);
}
