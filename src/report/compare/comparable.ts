/**
 * What makes runs given to `deferlab compare` not comparable as they stand: each difference that
 * changes what their numbers mean (not merely what they are, as `--hz` does), in one line.
 *
 * Every line is a warning, never a refusal: compare exists to set runs that differ side by side,
 * each run's figures are still its own true measurements, and a user comparing a tcp_lat run with
 * an irq_only one on purpose wants what they share. The lines say why a ratio does not compare
 * like with like, above the table, in the JSON (`incomparable`) and on the page. docs/cli.md
 * ("compare") lists them.
 */

import { bytesText } from '../run/setup-line.js';
import { pointTitle } from '../run/table.js';
import type { RunResults, StrategyResult } from '../types.js';

/** The rows' shape this module reads: per run, a value or null (compare.ts's `StageRow`). */
interface RowLike {
  runs: ReadonlyArray<unknown | null>;
}

const obj = (x: unknown): Record<string, unknown> =>
  x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {};

const optionsOf = (r: RunResults) => obj(r.meta.options);
const workloadOptionsOf = (r: RunResults) => obj(optionsOf(r).workload);

/** The workload in words: a scenario's own (`meta.workload`), else `options.workload`'s kind. */
function workloadOf(r: RunResults): string {
  if (typeof r.meta.workload === 'string') return r.meta.workload;
  const o = optionsOf(r);
  if (typeof o.workload === 'string') return o.workload;
  const kind = workloadOptionsOf(r).kind;
  return typeof kind === 'string' ? kind : '(not recorded)';
}

const isTcpLat = (r: RunResults) =>
  r.meta.workload === undefined && (optionsOf(r).workload === 'tcp_lat' || workloadOptionsOf(r).kind === 'tcp_lat');

/** Each NIC's profile (`ixgbe`); where the profiles agree, with the settings that differ (`ipoib-cm mtu 2044`). */
function nicTexts(nics: ReadonlyArray<Record<string, unknown>>): string[] {
  const profiles = nics.map((n) => (typeof n.profile === 'string' ? n.profile : '(not recorded)'));
  if (differ(profiles)) return profiles;
  const keys = [...new Set(nics.flatMap((n) => Object.keys(n)))].filter((k) =>
    nics.some((n) => JSON.stringify(n[k]) !== JSON.stringify(nics[0][k])),
  );
  return nics.map((n, i) => [profiles[i], ...keys.map((k) => `${k} ${JSON.stringify(n[k]) ?? '(absent)'}`)].join(' '));
}

/** `#1 tcp_lat, #2 irq_only` for the runs `at` (1-based numbers `idx`). */
function perRun(values: readonly string[], idx: readonly number[]): string {
  return values.map((v, i) => `#${idx[i]} ${v}`).join(', ');
}

/** Whether the runs' values of one setting are not all the same. */
function differ(values: readonly string[]): boolean {
  return values.some((v) => v !== values[0]);
}

/** `a, b only in #1; c only in #2, #3`: items not in every run, grouped by the runs that have them. */
function onlyIn(perRunItems: ReadonlyArray<ReadonlySet<string>>): string | undefined {
  const all = [...new Set(perRunItems.flatMap((s) => [...s]))];
  const groups = new Map<string, string[]>();
  for (const item of all) {
    const has = perRunItems.flatMap((s, i) => (s.has(item) ? [`#${i + 1}`] : []));
    if (has.length === perRunItems.length) continue;
    const key = has.join(', ');
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  if (groups.size === 0) return undefined;
  return [...groups.entries()].map(([runs, items]) => `${items.join(', ')} only in ${runs}`).join('; ');
}

/** A strategy as its label stands for it: its name and options (a file's path differs between machines). */
function strategyText(s: StrategyResult): string {
  const opts = Object.entries(s.options ?? {}).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `${s.kind === 'file' ? `class ${s.name}` : s.name}${opts.length ? `(${opts.join(',')})` : ''}`;
}

/**
 * The lines, each one difference, each complete (`warning: ...`), in a fixed order: workload,
 * kernel profile, switch floor, NIC, message size, host-stall handling, points, strategies, a label naming
 * different strategies, and nothing compared at all. The time dilation factor's line is
 * compare.ts's `tdfWarningOf`, which the caller adds. Context: main thread; pure.
 */
export function incomparableLines(runs: readonly RunResults[], rows: readonly RowLike[]): string[] {
  const out: string[] = [];
  const all = runs.map((_, i) => i + 1);

  // The same run given twice (one directory by two paths, or a results.json beside its directory).
  const byStart = new Map<string, number[]>();
  runs.forEach((r, i) => {
    const key = `${r.meta.startedAt} ${r.meta.seed}`;
    byStart.set(key, [...(byStart.get(key) ?? []), i + 1]);
  });
  for (const same of byStart.values()) {
    if (same.length < 2) continue;
    out.push(
      `warning: ${same.map((n) => `#${n}`).join(', ')} are the same run (started ${runs[same[0] - 1].meta.startedAt}, ` +
        `seed ${runs[same[0] - 1].meta.seed}): their ratios are ×1.00 by construction, and --merge counts its samples ${same.length} times`,
    );
  }

  const workloads = runs.map(workloadOf);
  if (differ(workloads)) {
    out.push(
      `warning: these runs ran different workloads (${perRun(workloads, all)}): a stage only one of them records reads '-' in the others, ` +
        'and the stages they share ran beside different work, so their ratios compare two experiments, not two measurements of one',
    );
  }

  const kernels = runs.map((r) => {
    const k = optionsOf(r).kernel;
    return typeof k === 'string' ? k : '(not recorded)';
  });
  if (differ(kernels)) {
    out.push(
      `warning: these runs emulated different kernel profiles (${perRun(kernels, all)}): another scheduler and other softirq rules ` +
        '(--kernel), so one stage name measures a different kernel in each',
    );
  }

  // --switch-cost: a floor under every context switch (a model) changes every stage a switch is in.
  // Runs that each measured their host's kernel share the model (the figure moves ±20% between runs).
  const floors = runs.map((r) => {
    const s = r.meta.switchCost;
    if (!s || s.ns <= 0) return 'none';
    return s.mode === 'host' ? "the host kernel's, measured" : `${(s.ns / 1000).toFixed(2)} µs given`;
  });
  if (differ(floors)) {
    out.push(
      `warning: these runs charged context switches differently (${perRun(floors, all)}): --switch-cost's floor (a model, ` +
        "this host's kernel switch measured at each run's start) is in ctx_switch, one_way and every wait a switch is in",
    );
  }

  // The NIC and the message size mean something only where tcp_lat ran; a run without is the workload's line.
  const tcp = all.filter((i) => isTcpLat(runs[i - 1]));
  if (tcp.length > 1) {
    const nics = nicTexts(tcp.map((i) => obj(workloadOptionsOf(runs[i - 1]).nic)));
    if (differ(nics)) {
      out.push(
        `warning: these runs' tcp_lat used different NICs (${perRun(nics, tcp)}): another MTU, link rate, interrupt moderation ` +
          'or NAPI path (--nic), so one_way and the interrupt stages cross a different network',
      );
    }
    // A run that swept msg_size has one per point, and its points line up by it (the points' line).
    const fixed = tcp.filter((i) => runs[i - 1].sweep?.param !== 'msg_size');
    const sizes = fixed.map((i) => {
      const n = workloadOptionsOf(runs[i - 1]).msgSize;
      return typeof n === 'number' ? bytesText(n) : '(not recorded)';
    });
    if (fixed.length > 1 && differ(sizes)) {
      out.push(
        `warning: these runs' tcp_lat messages differ in size (${perRun(sizes, fixed)}): one_way includes each message's copy, ` +
          'packets and wire time (--msg-size)',
      );
    }
  }

  const stalls = runs.map((r) => {
    const h = optionsOf(r).hostStalls;
    return typeof h === 'string' ? h : 'keep'; // results from before the option kept every sample
  });
  if (differ(stalls)) {
    out.push(
      `warning: these runs treated samples that overlapped a host stall differently (${perRun(stalls, all)}; --host-stalls): ` +
        'their one_way and request_to_start hold different samples',
    );
  }

  const points = onlyIn(runs.map((r) => new Set(r.points.map((p) => pointTitle(p) || '(no sweep)'))));
  if (points) {
    out.push(
      `warning: these runs measured different points (${points}): a point's rows read '-' in the runs without it`,
    );
  }

  const labels = onlyIn(runs.map((r) => new Set(r.points.flatMap((p) => p.strategies.map((s) => s.label)))));
  if (labels) {
    out.push(
      `warning: these runs compared different strategies (${labels}): a strategy's rows read '-' in the runs without it`,
    );
  }

  // One label for two different strategies (a user's file of another class, other options).
  const seen = new Map<string, Array<[run: number, text: string]>>();
  runs.forEach((r, i) => {
    for (const p of r.points)
      for (const s of p.strategies) {
        const list = seen.get(s.label) ?? [];
        if (!list.some(([run]) => run === i + 1)) list.push([i + 1, strategyText(s)]);
        seen.set(s.label, list);
      }
  });
  for (const [label, list] of seen) {
    const texts = list.map(([, t]) => t);
    if (list.length > 1 && differ(texts)) {
      out.push(
        `warning: the label ${JSON.stringify(label)} names different strategies (${perRun(
          texts,
          list.map(([run]) => run),
        )}): its rows compare two strategies`,
      );
    }
  }

  if (!rows.some((row) => row.runs.filter((v) => v !== null).length > 1)) {
    out.push(
      'warning: nothing to compare: no strategy and stage has samples in two of these runs at one point; ' +
        "each row below is one run's alone",
    );
  }
  return out;
}
