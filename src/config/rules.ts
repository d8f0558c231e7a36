/**
 * What a command that is not `run` takes from the user's settings (`scenario NAME`, `demo`).
 *
 * A scenario (or the demo) sets some settings itself (cpu-hog compares two fixed strategies)
 * and has no use for others (ipi-storm raises no device interrupts). Silently ignoring such a
 * setting would mislead, so giving one, as a flag or in the config file, is an error that says
 * why and what to do instead. Every other setting is honoured, with the usual precedence.
 *
 * Checked by `resolveConfig` on the user's layers only (the config file and the flags; a
 * scenario's own preset may set anything), before the rules between settings.
 */
import type { Path } from './origins.js';
import type { SweepParam } from './sweep.js';

/** A setting the command does not take from the user. */
export interface FixedSetting {
  /**
   * `sets`: the command chooses it itself ("scenario cpu-hog sets --strategy itself");
   * `unused`: the command has no use for it ("scenario ipi-storm takes no --irq-rate").
   */
  readonly kind: 'sets' | 'unused';
  /** Why, said in parentheses: `it compares workqueue:wq=system with unbound:scope=system`. */
  readonly why: string;
  /** What to do instead, after "drop X, or": defaults to the rules' `instead`. */
  readonly instead?: string;
  /** A value the user may give anyway, because it is what the command does (`null` for outDir). */
  readonly allows?: unknown;
}

export interface CommandRules {
  /** The settings the command does not take, by field path (`strategies`, `workload.msgSize`). */
  readonly fixed?: Readonly<Record<string, FixedSetting>>;
  /** What to do instead of giving a fixed setting, after "drop X, or". */
  readonly instead?: string;
  /** The fewest CPUs the command's machine makes sense on, and why (after "whose"/"which"). */
  readonly minCpus?: { readonly count: number; readonly why: string };
  /** The fewest CPUs NUMA node 0 must hold (seed-machine: its 8 qperf pairs run there), and why. */
  readonly minNodeCpus?: { readonly count: number; readonly why: string };
  /**
   * The user's --sweep replaces one part's sweep only (random-regression's main comparison), so the
   * swept setting given beside it still sets the other parts: not refused as replaced.
   */
  readonly sweepIsPartial?: boolean;
  /** Whether the command replays a recorded irq trace (`--irq-trace`): `run` only; others set their own interrupts. */
  readonly takesIrqTrace?: boolean;
  /** The only sweep parameters the command honours, and why. */
  readonly sweeps?: { readonly params: readonly SweepParam[]; readonly why: string };
}

/** The command as messages name it (`scenario cpu-hog`, `demo`), with its rules. */
export interface CommandRulesFor {
  readonly command: string;
  readonly rules: CommandRules;
}

export const DEFAULT_INSTEAD = "use 'deferlab run' for your own comparison";

/** `workload.msgSize` → `['workload', 'msgSize']`. */
export function fieldPath(field: string): Path {
  return field.split('.');
}

const NO_TCP_LAT = 'it runs no tcp_lat, only background interrupts';

/**
 * The tcp_lat workload's settings (the messages, the endpoints' CPUs and placement, the network
 * path and its NIC), refused as `unused` by a command whose workload is not tcp_lat, with `why`.
 */
export function noTcpLat(why: string): Record<string, FixedSetting> {
  const rule: FixedSetting = { kind: 'unused', why };
  const fields = [
    'msgSize',
    'clientCpu',
    'serverCpu',
    'ringBytes',
    'instances',
    'appCpus',
    'nic',
    'mtu',
    'linkRate',
    'rxUsecs',
    'rxFrames',
    'nicIrqCpus',
  ];
  return Object.fromEntries(fields.map((f) => [`workload.${f}`, rule]));
}

/**
 * `--hogs` (where CPU hogs run), refused as `unused` by a command that runs none: only `scenario
 * cpu-hog` puts hogs on a CPU (its workload's tasks); tcp_lat and background interrupts have none.
 */
export function noHogs(): Record<string, FixedSetting> {
  return {
    hogs: {
      kind: 'unused',
      why: "it runs no CPU hog; hogs are scenario cpu-hog's",
      instead: "use 'deferlab scenario cpu-hog --hogs ...' to place CPU hogs",
    },
  };
}

/**
 * `deferlab run`: the comparison takes every setting but those no workload of its uses (RUN_RULES
 * is checked on the user's layers like a scenario's rules).
 */
export const RUN_RULES: CommandRules = {
  fixed: { ...noHogs() },
  takesIrqTrace: true,
};

/**
 * `deferlab demo` boots the machine with the inline strategy and background interrupts only,
 * runs it for --duration, and prints its counters (cli/demo.ts). It takes the machine's
 * settings; the comparison's settings, which it would ignore, are rejected.
 */
export const DEMO_RULES: CommandRules = {
  instead: "use 'deferlab run' to compare strategies",
  fixed: {
    strategies: { kind: 'sets', why: 'it runs the inline strategy only' },
    baseline: { kind: 'unused', why: 'it compares nothing' },
    'workload.kind': { kind: 'sets', why: 'it runs background interrupts only, no application' },
    ...noTcpLat(NO_TCP_LAT),
    trials: { kind: 'unused', why: 'it runs once, for --duration' },
    warmupMs: { kind: 'unused', why: 'it counts from boot, with no warm-up' },
    sliceMs: { kind: 'unused', why: 'it runs once, for --duration' },
    sweep: { kind: 'unused', why: 'it runs once, at one setting', allows: null },
    outDir: { kind: 'unused', why: 'it writes no files, it prints its counters', allows: null },
    control: { kind: 'unused', why: 'it compares nothing', allows: false },
    until: { kind: 'unused', why: 'it runs once, for --duration', allows: null },
    maxTimeMs: { kind: 'unused', why: 'it runs once, for --duration' },
    wide: { kind: 'unused', why: 'it prints counters, not the summary table', allows: false },
    timeline: { kind: 'unused', why: 'it writes no files, it prints its counters', allows: false },
    timelineWindowMs: { kind: 'unused', why: 'it writes no timeline' },
    explain: { kind: 'unused', why: "it compares nothing; use 'deferlab run --explain'", allows: false },
    threshold: { kind: 'unused', why: 'it compares nothing' },
    ...noHogs(),
  },
};
