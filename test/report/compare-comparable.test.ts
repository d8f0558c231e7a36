/**
 * `deferlab compare` of runs that are not comparable as they stand (a new user's probe): one
 * warning line per difference that changes what the numbers mean, the table still printed; and
 * the metadata table's rows, whole and rounded for reading.
 */
import { describe, expect, it } from 'vitest';
import { type CompareInput, compareRuns } from '../../src/report/compare/compare.js';
import { renderCompareHtml } from '../../src/report/compare/compare-html.js';
import { renderCompareTable, shownMetaValues, TABLE_WIDTH, wrapCell } from '../../src/report/compare/compare-text.js';
import type { RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, type SyntheticStrategy, syntheticResults } from '../fixtures/synthetic.js';

const run = (name: string, r: RunResults): CompareInput => ({ name, path: `${name}/results.json`, results: r });

const TCP_LAT = {
  kind: 'tcp_lat',
  msgSize: 64,
  nic: { profile: 'ipoib-cm', mtu: 65520, linkGbps: 32, rxUsecs: 0 },
};

/** A run with a resolved config like a real one's; `options` replaces fields of it. */
function runOf(seed: number, options: Record<string, unknown> = {}, strategies = DEFAULT_STRATEGIES.slice(0, 2)) {
  const r = syntheticResults({ seed, samples: 200, trials: 2, strategies });
  r.meta.options = { cpus: 2, hz: 250, kernel: '6.9', hostStalls: 'keep', workload: TCP_LAT, ...options };
  return r;
}

const warnings = (a: RunResults, b: RunResults) => compareRuns([run('a', a), run('b', b)]).incomparable;

describe('compare of runs that differ in what their numbers mean', () => {
  it('says nothing when they differ only in settings that change the numbers, not their meaning', () => {
    expect(warnings(runOf(1), runOf(2, { hz: 1000 }))).toEqual([]);
  });

  it('names the same run given twice (one directory by two paths)', () => {
    const r = runOf(1);
    expect(warnings(r, r)).toEqual([
      `warning: #1, #2 are the same run (started ${r.meta.startedAt}, seed ${r.meta.seed}): their ratios are ×1.00 by construction, and --merge counts its samples 2 times`,
    ]);
  });

  it('names different workloads in one line, and still compares the stages they share', () => {
    const irqOnly = runOf(2, { workload: { kind: 'irq_only' } });
    const m = compareRuns([run('a', runOf(1)), run('b', irqOnly)]);
    expect(m.incomparable).toHaveLength(1);
    expect(m.incomparable[0]).toMatch(/^warning: these runs ran different workloads \(#1 tcp_lat, #2 irq_only\)/);
    // What they share is still there, with its ratio.
    expect(m.rows.find((r) => r.label === 'inline' && r.stage === 'hardirq')?.ratios[1]?.p50).toBeGreaterThan(0);
    const text = renderCompareTable(m);
    expect(text.replace(/\s+/g, ' ')).toContain(
      'warning: these runs ran different workloads (#1 tcp_lat, #2 irq_only)',
    );
    expect(text.indexOf('different workloads')).toBeLessThan(text.indexOf('inline: µs'));
  });

  it('names a scenario’s own workload (meta.workload) rather than the machine’s', () => {
    const hog = runOf(2, { workload: { kind: 'irq_only' } });
    hog.meta.workload = 'a CPU hog on CPU 0';
    expect(warnings(runOf(1, { workload: { kind: 'irq_only' } }), hog)[0]).toContain(
      '(#1 irq_only, #2 a CPU hog on CPU 0)',
    );
  });

  it('names a different kernel profile, NIC, message size and host-stall handling, one line each', () => {
    const other = runOf(2, {
      kernel: '5.15',
      hostStalls: 'drop',
      workload: { ...TCP_LAT, msgSize: 4096, nic: { profile: 'ixgbe', mtu: 1500, linkGbps: 10, rxUsecs: 1 } },
    });
    const w = warnings(runOf(1), other);
    expect(w).toHaveLength(4);
    expect(w[0]).toMatch(/different kernel profiles \(#1 6\.9, #2 5\.15\)/);
    expect(w[1]).toMatch(/different NICs \(#1 ipoib-cm, #2 ixgbe\)/);
    expect(w[2]).toMatch(/messages differ in size \(#1 64 B, #2 4 KiB\)/);
    expect(w[3]).toMatch(/host stall differently \(#1 keep, #2 drop;/);
  });

  it('names a different switch model, but not two runs that each measured their host kernel', () => {
    const withFloor = (n: number, switchCost: NonNullable<ReturnType<typeof runOf>['meta']['switchCost']>) => {
      const r = runOf(n);
      r.meta.switchCost = switchCost;
      return r;
    };
    const host = (n: number, ns: number) => withFloor(n, { ns, mode: 'host', how: 'measured' });
    expect(warnings(host(1, 2200), host(2, 1740))).toEqual([]);
    const off = withFloor(2, { ns: 0, mode: 'off', how: 'off' });
    expect(warnings(host(1, 2200), off)).toEqual([
      expect.stringMatching(/charged context switches differently \(#1 the host kernel's, measured, #2 none\)/),
    ]);
    expect(warnings(runOf(1), withFloor(2, { ns: 2500, mode: 'given', how: 'given' }))[0]).toMatch(
      /\(#1 none, #2 2\.50 µs given\)/,
    );
  });

  it('names the NIC settings that differ when the profile is the same', () => {
    const w = warnings(runOf(1), runOf(2, { workload: { ...TCP_LAT, nic: { ...TCP_LAT.nic, mtu: 2044 } } }));
    expect(w).toEqual([expect.stringContaining('(#1 ipoib-cm mtu 65520, #2 ipoib-cm mtu 2044)')]);
  });

  it('leaves the message size to the points when a run swept it', () => {
    const swept = syntheticResults({ seed: 2, samples: 200, trials: 2, msgSizes: [64, 4096] });
    swept.meta.options = { ...(runOf(2).meta.options as object), workload: { ...TCP_LAT, msgSize: 999 } };
    swept.sweep = { param: 'msg_size', values: [64, 4096] };
    const w = warnings(runOf(1), swept);
    expect(w.join('\n')).not.toMatch(/differ in size/);
    expect(w.join('\n')).toMatch(/different points \(\(no sweep\) only in #1; msg_size=64, msg_size=4096 only in #2\)/);
  });

  it('keeps the TDF warning as one of the lines, printed once', () => {
    const dilated = runOf(2);
    dilated.meta.tdf = { tdf: 4, mode: 'given', how: 'given (--tdf 4)' };
    const m = compareRuns([run('a', runOf(1)), run('b', dilated)]);
    expect(m.incomparable).toEqual([m.tdfWarning]);
    expect(renderCompareTable(m).match(/time dilation factors/g)).toHaveLength(1);
  });

  it('of disjoint strategies: names them, says nothing is compared, and still prints each run’s rows', () => {
    const [inline, workqueue, tasklet] = DEFAULT_STRATEGIES;
    const a = runOf(1, {}, [inline, workqueue]);
    const b = runOf(2, {}, [tasklet]);
    const m = compareRuns([run('a', a), run('b', b)]);
    expect(m.incomparable).toEqual([
      expect.stringMatching(/different strategies \(inline, workqueue only in #1; tasklet only in #2\)/),
      expect.stringMatching(/^warning: nothing to compare: no strategy and stage has samples in two of these runs/),
    ]);
    const text = renderCompareTable(m);
    expect(text).toMatch(/^one_way\s+#1 a\s+[\d.]+/m);
    expect(text).toContain('tasklet: µs');
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(TABLE_WIDTH);
    const html = renderCompareHtml(m, [run('a', a), run('b', b)]);
    expect(html).toContain('nothing to compare');
  });

  it('names a label that stands for different strategies in the runs', () => {
    const mine = (name: string): SyntheticStrategy => ({
      ...DEFAULT_STRATEGIES[1],
      label: 'mine.ts',
      name,
      kind: 'file',
    });
    const w = warnings(
      runOf(1, {}, [DEFAULT_STRATEGIES[0], mine('Mine')]),
      runOf(2, {}, [DEFAULT_STRATEGIES[0], mine('Other')]),
    );
    expect(w).toEqual([
      expect.stringContaining('the label "mine.ts" names different strategies (#1 class Mine, #2 class Other)'),
    ]);
  });
});

describe("compare's metadata table", () => {
  /** The metadata table's lines of a rendering. */
  const metaLines = (text: string) => text.slice(text.indexOf('metadata that differs')).split('\n');

  it('shows every field whole, so rows of strategies with long labels read apart', () => {
    const specs = ['workqueue(wq=system)', 'workqueue(wq=system,highpri=false)'];
    const a = runOf(1);
    const b = runOf(2, {
      strategies: specs.map((label) => ({ label, name: 'workqueue', kind: 'builtin', options: { wq: 'system' } })),
    });
    const text = renderCompareTable(compareRuns([run('a', a), run('b', b)]));
    const lines = metaLines(text);
    expect(lines.join('\n')).not.toContain('…');
    for (const spec of specs)
      for (const k of ['label', 'name', 'kind', 'options.wq'])
        expect(lines.some((l) => l.startsWith(`options.strategies[${spec}].${k} `))).toBe(true);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(TABLE_WIDTH);
  });

  it('wraps a field too long for its column over lines instead of cutting it', () => {
    const runs = [1, 2, 3, 4].map((seed) => {
      const r = runOf(seed);
      Object.assign(r.meta, { cpuModel: `a long host CPU model name, number ${seed} of four, at 2.20GHz` });
      return r;
    });
    const long = 'options.strategies[unbound(scope=system,strict=true)].options.strict';
    (runs[3].meta.options as Record<string, unknown>).strategies = [
      { label: 'unbound(scope=system,strict=true)', options: { strict: true } },
    ];
    const text = renderCompareTable(compareRuns(runs.map((r, i) => run(`r${i}`, r))));
    const lines = metaLines(text);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(TABLE_WIDTH);
    // The field column's width is its rule's; the field's lines, joined, give it whole.
    const fieldW = lines[lines.findIndex((l) => l.startsWith('field')) + 1].indexOf(' ');
    const fields: string[] = [];
    for (const l of lines) {
      if (l.startsWith('options.strategies')) fields.push(l.slice(0, fieldW).trim());
      else if (l.startsWith('  ') && fields.length) fields[fields.length - 1] += l.slice(0, fieldW).trim();
    }
    expect(fields).toEqual([long.replace('options.strict', 'label'), long]);
    expect(lines.join('\n')).not.toContain('…');
  });

  it('rounds decimals for reading, keeps integers, and never makes two values read alike', () => {
    expect(shownMetaValues(['402.51217599999995', '365.38725700000003'])).toEqual(['402.5', '365.4']);
    expect(shownMetaValues(['4194304', '65536'])).toEqual(['4194304', '65536']);
    expect(shownMetaValues(['[2.6,5.15,3.91]', '[2.95,5.18,3.9312345]'])).toEqual([
      '[2.6, 5.15, 3.91]',
      '[2.95, 5.18, 3.931]',
    ]);
    expect(shownMetaValues(['1.000012', '1.000018', null])).toEqual(['1.00001', '1.00002', null]);
    expect(shownMetaValues(['6.9', 'irq_only', '0.1.0'])).toEqual(['6.9', 'irq_only', '0.1.0']);
    const a = runOf(1);
    const b = runOf(2);
    Object.assign(a.meta, { calibration: { durationMs: 402.51217599999995 } });
    Object.assign(b.meta, { calibration: { durationMs: 365.38725700000003 } });
    const m = compareRuns([run('a', a), run('b', b)]);
    expect(renderCompareTable(m)).toMatch(/^calibration\.durationMs\s+402\.5\s+365\.4$/m);
    expect(renderCompareHtml(m, [run('a', a), run('b', b)])).toContain('>402.5<');
    // The model (and --json) keeps them exact.
    expect(m.metaDifferences.find((d) => d.field === 'calibration.durationMs')?.values[0]).toBe('402.51217599999995');
  });

  it('wrapCell breaks at a separator and loses no character', () => {
    const s = 'options.strategies[workqueue(wq=system)].options.wq';
    const lines = wrapCell(s, 20, '  ');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(20);
    expect(lines.map((l) => l.trim()).join('')).toBe(s);
    expect(wrapCell('short', 20)).toEqual(['short']);
  });
});
