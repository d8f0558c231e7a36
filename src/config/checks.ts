/**
 * Rules between settings, checked on the merged layers. Each throws the first problem it finds,
 * naming every setting involved the way the user gave it (see origins.ts).
 *
 * Context: main thread, while resolving the config (strategy files are looked up on disk).
 */

import { realpathSync } from 'node:fs';
import { DeferlabError, StrategyOptionError } from '../errors.js';
import { NIC_PROFILE, type NicOptions, type NicProfileName, nicOptions } from '../net/profiles.js';
import { builtin, instantiateBuiltin } from '../strategies/registry.js';
import type { WorkloadKind } from './defaults.js';
import { badOption, badValue, closest, conflict } from './errors.js';
import { type ParsedPartial, WORKLOAD_FIELDS } from './input.js';
import type { Layer, Origins, Path } from './origins.js';
import { pathText, settingName, valueAt } from './origins.js';
import { type CommandRulesFor, DEFAULT_INSTEAD, fieldPath } from './rules.js';
import { parseStrategySpec, type StrategySpec, strategyLabel } from './strategy-spec.js';
import type { Sweep } from './sweep.js';
import { formatSize } from './units.js';

type Layers = readonly Layer<ParsedPartial>[];

const KIND: Path = ['workload', 'kind'];

/**
 * A workload field set for another kind of workload is a mistake, unless a lower layer set it
 * and a higher one then chose another workload (the flag `--workload irq_only` overrides a
 * file's tcp_lat settings).
 */
export function checkWorkloadFields(layers: Layers, origins: Origins<ParsedPartial>, kind: WorkloadKind): void {
  const kindLayer = origins.layerOf(KIND);
  const from = kindLayer ? layers.indexOf(kindLayer) : 0;
  for (const layer of layers.slice(from)) {
    for (const [key, value] of Object.entries(layer.data.workload ?? {})) {
      if (key === 'kind' || value === undefined) continue;
      if ((WORKLOAD_FIELDS[kind] as readonly string[]).includes(key)) continue;
      const owner = Object.entries(WORKLOAD_FIELDS).find(([, fields]) =>
        (fields as readonly string[]).includes(key),
      )?.[0];
      throw conflict(
        `${settingName(layer.source, ['workload', key])} applies only to the ${owner} workload, but the workload is ${origins.describe(KIND, kind)}`,
        `drop it, or choose the ${owner} workload`,
        layer.source.kind === 'flags',
      );
    }
  }
}

/** A CPU id must name one of the emulated CPUs. */
export function checkCpuId(
  origins: Origins<ParsedPartial>,
  path: Path,
  cpu: number,
  cpus: number,
  cpusText: string,
  fix?: string,
): void {
  if (cpu < cpus) return;
  throw badOption(
    origins.name(path),
    `must be a CPU id from 0 to ${cpus - 1} (${cpusText})`,
    origins.got(path, cpu),
    fix ?? `choose a CPU below ${cpus}, or raise the CPU count`,
    origins.defaultNote(path),
  );
}

export function checkIrqCpus(
  origins: Origins<ParsedPartial>,
  ids: readonly number[] | 'all',
  cpus: number,
  cpusText: string,
): void {
  if (ids === 'all') return;
  const high = ids.find((id) => id >= cpus);
  if (high === undefined) return;
  const path: Path = ['irq', 'cpus'];
  throw badOption(
    origins.name(path),
    `must list CPU ids from 0 to ${cpus - 1} (${cpusText})`,
    origins.got(path, ids),
    `drop CPU ${high}, raise the CPU count, or say all`,
    `CPU ${high} is too high`,
  );
}

export function checkTcpLat(
  origins: Origins<ParsedPartial>,
  w: { msgSize: number; clientCpu: number; serverCpu: number; ringBytes: number },
  cpus: number,
  cpusText: string,
): void {
  const client: Path = ['workload', 'clientCpu'];
  const server: Path = ['workload', 'serverCpu'];
  const needTwo = cpus < 2 ? 'tcp_lat needs 2 CPUs: raise the CPU count to 2, or use the irq_only workload' : undefined;
  checkCpuId(origins, client, w.clientCpu, cpus, cpusText, needTwo);
  checkCpuId(origins, server, w.serverCpu, cpus, cpusText, needTwo);
  if (w.clientCpu === w.serverCpu) {
    throw conflict(
      `${origins.name(client)} and ${origins.name(server)} must be different CPUs (both are ${w.clientCpu})`,
      `put the server on another CPU, e.g. ${origins.name(server)} ${w.clientCpu === 0 ? 1 : 0}`,
      !origins.isDefault(client) || !origins.isDefault(server),
    );
  }
  const msg: Path = ['workload', 'msgSize'];
  const ring: Path = ['workload', 'ringBytes'];
  if (w.msgSize > w.ringBytes) {
    throw badOption(
      origins.name(msg),
      `must be at most the ring size (${origins.describe(ring, formatSize(w.ringBytes))})`,
      origins.got(msg, w.msgSize),
      `raise the ring size to ${formatSize(nextPowerOfTwo(w.msgSize))} or more, or send smaller messages`,
      origins.defaultNote(msg),
    );
  }
}

/**
 * The NIC a tcp_lat run uses: its profile with the user's overrides, checked against what the
 * driver accepts (src/net/profiles.ts).
 */
export function resolveNic(
  origins: Origins<ParsedPartial>,
  w: { nic: NicProfileName; mtu?: number; linkRate?: number; rxUsecs?: number; rxFrames?: number },
): NicOptions {
  const p = NIC_PROFILE[w.nic];
  const o = nicOptions(w.nic, { mtu: w.mtu, linkGbps: w.linkRate, rxUsecs: w.rxUsecs, rxFrames: w.rxFrames });
  const mtu: Path = ['workload', 'mtu'];
  const usecs: Path = ['workload', 'rxUsecs'];
  const frames: Path = ['workload', 'rxFrames'];
  if (o.mtu > p.maxMtu)
    throw badOption(
      origins.name(mtu),
      `must be at most ${p.maxMtu}, the largest MTU ${p.name} takes`,
      o.mtu,
      p.maxMtuAdvice,
    );
  if (p.moderation === 'itr' && o.rxFrames > 0)
    throw conflict(
      `${origins.name(frames)} is not something ${p.name} has: ${p.name} moderates by interval only (rx-usecs)`,
      `drop ${origins.name(frames)}, or use ${origins.name(usecs)} (0 off, 1 adaptive, 2..${p.maxRxUsecs?.value ?? o.rxUsecs} µs)`,
      true,
    );
  if (p.maxRxUsecs && o.rxUsecs > p.maxRxUsecs.value)
    throw badOption(
      origins.name(usecs),
      `must be at most ${p.maxRxUsecs.value} µs on ${p.name} (${p.maxRxUsecs.source})`,
      o.rxUsecs,
    );
  if (p.moderation === 'cq' && o.rxFrames > 1 && o.rxUsecs === 0)
    throw conflict(
      `${origins.name(frames)} ${o.rxFrames} with ${origins.name(usecs)} 0 would hold a message's last packets until more arrive, and in a ping-pong none do`,
      `give a period too, e.g. ${origins.name(usecs)} 16`,
      true,
    );
  return o;
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Parse the strategy specs of the layer that set them (or the defaults) and check that their
 * labels are unique.
 */
export function resolveStrategies(
  origins: Origins<ParsedPartial>,
  specs: readonly string[],
  cwd: string,
): StrategySpec[] {
  const layer = origins.layerOf(['strategies']);
  const resolved: StrategySpec[] = [];
  for (const [i, text] of specs.entries()) {
    const parsed = parseStrategySpec(text, cwd);
    const name = layer
      ? settingName(layer.source, layer.source.kind === 'flags' ? ['strategies'] : ['strategies', i])
      : '--strategy';
    if (!parsed.ok) throw badValue(name, parsed.problem, text);
    checkBuiltinOptions(name, text, parsed.value);
    const twin = resolved.find((s) => s.label === parsed.value.label);
    if (twin) {
      const sameThing = twin.kind === 'builtin' || twin.file === parsed.value.file;
      if (sameThing) {
        throw badOption(
          name,
          'must not name the same strategy twice',
          text,
          'remove one, or give them different options',
          `${parsed.value.label} is already in the list`,
        );
      }
      throw conflict(
        `${name}: strategy labels must be unique, but ${parsed.value.label} names both ${twin.file} and ${parsed.value.file}`,
        'rename one of the files',
        layer?.source.kind === 'flags',
      );
    }
    resolved.push(parsed.value);
  }
  return resolved;
}

/**
 * A built-in's options, checked where the spec was given: unknown keys by the built-in's table
 * of keys, values by constructing it (the built-ins' constructors only read their options).
 * A strategy file's options are checked when the file is loaded, before the run.
 */
export function checkBuiltinOptions(name: string, text: string, spec: StrategySpec): void {
  if (spec.kind !== 'builtin') return;
  const entry = builtin(spec.name);
  if (!entry) return;
  const known = entry.optionKeys;
  const unknown = Object.keys(spec.options).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    if (known.length === 0) {
      throw badOption(
        name,
        `must give ${spec.name} no options`,
        text,
        `write just ${spec.name}`,
        `${spec.name} takes none`,
      );
    }
    const near = closest(unknown, known);
    throw badOption(
      name,
      `must give ${spec.name} only its own options: ${known.join(', ')}`,
      text,
      near ? `did you mean ${near}?` : undefined,
      `${spec.name} has no option ${unknown}`,
    );
  }
  try {
    instantiateBuiltin(spec.name, { ...spec.options });
  } catch (e) {
    if (!(e instanceof StrategyOptionError)) throw e;
    // "strategy timer: option deferrable must be true or false (got "yes")" → after the spec.
    const reason = e.message.replace(/^strategy [^:]+: /, '');
    throw new DeferlabError('E_BAD_OPTION', `${name} ${text}: ${reason}`, 2, name.startsWith('-'));
  }
}

/** The real path of a file, or the path itself when it cannot be resolved (for comparing two files). */
function realFile(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The strategy among `strategies` that a spec names: same built-in or same file (relative or
 * absolute, through symbolic links), and same options. Undefined when it names none, or is not
 * a spec at all.
 */
function listedBySpec(text: string, strategies: readonly StrategySpec[], cwd: string): StrategySpec | undefined {
  const parsed = parseStrategySpec(text, cwd);
  if (!parsed.ok) return undefined;
  const wanted = parsed.value;
  if (wanted.kind === 'builtin') return strategies.find((s) => s.kind === 'builtin' && s.label === wanted.label);
  const file = realFile(wanted.file ?? '');
  return strategies.find(
    (s) =>
      s.kind === 'file' &&
      s.file !== undefined &&
      realFile(s.file) === file &&
      strategyLabel('', s.options) === strategyLabel('', wanted.options),
  );
}

/**
 * The baseline's label. The label itself, or a spec that names a listed strategy
 * (`timer:deferrable=true`, `./s/mine.ts:b=2`, an absolute path; files resolved against `cwd`,
 * as --strategy's are), is accepted. Left at its default, the baseline is inline when inline is
 * listed, else the first strategy.
 *
 * `specTexts` are the strategies as they were written, in the same order as `strategies`.
 */
export function resolveBaseline(
  origins: Origins<ParsedPartial>,
  baseline: string,
  strategies: readonly StrategySpec[],
  cwd: string,
  specTexts: readonly string[] = [],
): string {
  const labels = strategies.map((s) => s.label);
  if (labels.includes(baseline)) return baseline;
  if (origins.isDefault(['baseline'])) return labels[0];
  const given = baseline.trim();
  const written = specTexts.findIndex((t) => t.trim() === given);
  if (written >= 0 && written < strategies.length) return strategies[written].label;
  const listed = listedBySpec(given, strategies, cwd);
  if (listed) return listed.label;
  const path: Path = ['baseline'];
  // A file strategy's label is its file name: `my-wq` for `./my-wq.ts` is one extension short.
  const meant = labels.find((l) => l.replace(/\.(m?[jt]s)$/, '') === given);
  throw badOption(
    origins.name(path),
    `must be the label or spec of one of the strategies: ${labels.join(', ')}`,
    origins.got(path, baseline),
    meant ? `did you mean ${meant}?` : `choose one of those, or add the strategy ${baseline}`,
    origins.defaultNote(path),
  );
}

/** The setting each sweep parameter sets at its points. */
const SWEPT_SETTING: Readonly<Record<Sweep['param'], Path>> = {
  msg_size: ['workload', 'msgSize'],
  irq_rate: ['irq', 'rate'],
  trigger: ['fastPool', 'trigger'],
};

/** Layers by precedence: a setting in a higher layer overrides one in a lower. */
const LAYER_RANK: Readonly<Record<string, number>> = { default: 0, preset: 1, file: 2, flags: 3 };

/**
 * The sweep's own checks. The swept setting given too, at the sweep's layer or above (the flags'
 * `--msg-size 4K` beside `--sweep msg_size:...`), would be replaced at every point: refused, unless
 * `sweepIsPartial` (a scenario that sweeps one part and runs the setting in the others). Below
 * the sweep's layer (the file's msgSize, the flags' sweep) it is overridden, as layers are.
 */
export function checkSweep(
  origins: Origins<ParsedPartial>,
  sweep: Sweep,
  workload: { kind: WorkloadKind; ringBytes?: number },
  sweepIsPartial = false,
): void {
  const path: Path = ['sweep'];
  // The swept setting given too (by the user): the sweep would replace it at every point.
  const swept = SWEPT_SETTING[sweep.param];
  const sweptLayer = origins.layerOf(swept);
  const sweepLayerRank = LAYER_RANK[origins.layerOf(path)?.source.kind ?? 'default'];
  if (
    !sweepIsPartial &&
    sweptLayer &&
    sweptLayer.source.kind !== 'preset' &&
    LAYER_RANK[sweptLayer.source.kind] >= sweepLayerRank
  ) {
    const values = `${sweep.param}:${sweep.values.join(',')}`;
    const sweepLayer = origins.layerOf(path);
    const sweepText =
      sweepLayer?.source.kind === 'preset'
        ? `scenario ${sweepLayer.source.name}'s sweep ${values}`
        : origins.describe(path, values);
    throw conflict(
      `${origins.describe(swept, '')} has no effect beside ${sweepText}, which sets ${sweep.param} at every point`,
      `drop ${origins.name(swept)}, or sweep that value alone: --sweep ${sweep.param}:${String(origins.got(swept, ''))}`,
      sweptLayer.source.kind === 'flags',
    );
  }
  if (sweep.param !== 'msg_size') return;
  if (workload.kind !== 'tcp_lat') {
    throw conflict(
      `${origins.name(path)} over msg_size needs the tcp_lat workload, but the workload is ${origins.describe(KIND, workload.kind)}`,
      'sweep irq_rate or trigger instead, or choose the tcp_lat workload',
      !origins.isDefault(path),
    );
  }
  const ring = workload.ringBytes ?? 0;
  const tooBig = sweep.values.find((v) => v > ring);
  if (tooBig === undefined) return;
  throw badOption(
    origins.name(path),
    `must keep msg_size at most the ring size (${origins.describe(['workload', 'ringBytes'], formatSize(ring))})`,
    origins.got(path, sweep),
    `raise the ring size to ${formatSize(nextPowerOfTwo(Math.max(...sweep.values)))} or lower the sweep's max`,
    `${formatSize(tooBig)} is larger`,
  );
}

/**
 * The settings a scenario (or the demo) does not take: given in the config file or as a flag,
 * each is an error that says why (see rules.ts). The flags are checked first.
 */
export function checkCommandSettings(layers: Layers, { command, rules }: CommandRulesFor): void {
  const user = layers.filter((l) => l.source.kind === 'flags' || l.source.kind === 'file').reverse();
  for (const layer of user) {
    const isFlag = layer.source.kind === 'flags';
    for (const [field, fixed] of Object.entries(rules.fixed ?? {})) {
      const path = fieldPath(field);
      const value = valueAt(layer.data, path);
      if (value === undefined) continue;
      if ('allows' in fixed && Object.is(value, fixed.allows)) continue;
      const shown = isFlag ? settingName(layer.source, path) : pathText(path);
      const head = fixed.kind === 'sets' ? `${command} sets ${shown} itself` : `${command} takes no ${shown}`;
      throw conflict(
        `${head} (${fixed.why})`,
        `drop ${settingName(layer.source, path)}, or ${fixed.instead ?? rules.instead ?? DEFAULT_INSTEAD}`,
        isFlag,
      );
    }
    const sweep = valueAt(layer.data, ['sweep']) as Sweep | null | undefined;
    if (rules.sweeps && sweep && !rules.sweeps.params.includes(sweep.param)) {
      const params = rules.sweeps.params;
      throw badOption(
        settingName(layer.source, ['sweep']),
        `must sweep ${params.join(' or ')} for ${command}, ${rules.sweeps.why}`,
        valueAt(layer.raw, ['sweep']),
        `sweep ${params.join(' or ')}, like --sweep ${params[0]}:V1,V2,..., or ${rules.instead ?? DEFAULT_INSTEAD}`,
      );
    }
  }
}

/**
 * A scenario's NUMA node 0 needs this many CPUs (seed-machine: its 8 qperf pairs run on node 0);
 * `node0`: node 0's CPU count as resolved, `cpus` the machine's.
 */
export function checkMinNodeCpus(
  origins: Origins<ParsedPartial>,
  { command, rules }: CommandRulesFor,
  node0: number,
  cpus: number,
  nodes: number,
): void {
  const min = rules.minNodeCpus;
  if (!min || node0 >= min.count) return;
  // Blame what the user gave that made node 0 small: a topology they described; the CPU count
  // when it is too small whatever the nodes (or there is one node); else the node count.
  const byUser = (p: Path) => ['flags', 'file'].includes(origins.layerOf(p)?.source.kind ?? '');
  const path: Path = byUser(['topology'])
    ? ['topology', 'numa']
    : byUser(['nodes']) && nodes > 1 && cpus >= min.count
      ? ['nodes']
      : ['cpus'];
  const resolved = path[0] === 'nodes' ? nodes : path[0] === 'cpus' ? cpus : undefined;
  throw badOption(
    origins.name(path),
    `must leave NUMA node 0 at least ${min.count} CPUs for ${command}, ${min.why}`,
    origins.got(path, resolved) ?? origins.got(['topology'], resolved),
    `give node 0 ${min.count} CPUs or more, e.g. --cpus ${2 * min.count} --nodes 2`,
    `node 0 has ${node0} of ${cpus} CPUs`,
  );
}

/** A scenario's machine needs this many CPUs (cpu-hog: one for the hog, one for the rest). */
export function checkMinCpus(
  origins: Origins<ParsedPartial>,
  { command, rules }: CommandRulesFor,
  cpus: number,
  fromTopology: boolean,
): void {
  const min = rules.minCpus;
  if (!min || cpus >= min.count) return;
  const path: Path = ['cpus'];
  throw badOption(
    origins.name(path),
    `must be at least ${min.count} for ${command}, ${min.why}`,
    fromTopology ? cpus : origins.got(path, cpus),
    `raise the CPU count to ${min.count} or more`,
    fromTopology ? 'as the topology describes' : origins.defaultNote(path),
  );
}
