/**
 * The comparison model of `deferlab compare` (src/report/compare/compare.ts) and its renderings, on
 * synthetic results: matching by label and point, ratios to the first run, merging, and the
 * metadata that differs.
 */
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import {
  type CompareInput,
  compareJson,
  compareRuns,
  flattenMeta,
  metaDifferences,
} from '../../src/report/compare/compare.js';
import { renderCompareHtml } from '../../src/report/compare/compare-html.js';
import { renderCompareTable, TABLE_WIDTH } from '../../src/report/compare/compare-text.js';
import { validateResults } from '../../src/report/schema.js';
import type { RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const run = (name: string, r: RunResults): CompareInput => ({ name, path: `${name}/results.json`, results: r });
const small = (seed: number, extra: Parameters<typeof syntheticResults>[0] = {}) =>
  syntheticResults({ seed, samples: 300, trials: 2, strategies: DEFAULT_STRATEGIES.slice(0, 3), ...extra });

describe('compareRuns', () => {
  const a = small(1);
  const b = small(2);
  const model = compareRuns([run('a', a), run('b', b)]);

  it('has one row per strategy and stage measured, in the runs’ order, each with a value per run', () => {
    const expected = a.points[0].strategies.flatMap((s) => Object.keys(s.merged).map((stage) => `${s.label}/${stage}`));
    expect(model.rows.map((r) => `${r.label}/${r.stage}`).sort()).toEqual(expected.sort());
    for (const row of model.rows) expect(row.runs).toHaveLength(2);
  });

  it('gives each percentile of each run as a ratio to the first run', () => {
    const row = model.rows.find((r) => r.label === a.points[0].strategies[1].label && r.stage === 'one_way')!;
    const ref = a.points[0].strategies[1].merged.one_way!.summary;
    const other = b.points[0].strategies[1].merged.one_way!.summary;
    expect(row.runs[0]).toEqual(ref);
    expect(row.runs[1]).toEqual(other);
    expect(row.ratios[0]?.p99).toBe(1);
    expect(row.ratios[1]?.p99).toBeCloseTo(other.p99 / ref.p99, 12);
    expect(row.ratios[1]?.p99_9).toBeCloseTo(other.p99_9 / ref.p99_9, 12);
    expect(row.ratios[1]?.max).toBeCloseTo(other.max / ref.max, 12);
    expect(row.ratios[1]?.mean).toBeCloseTo(other.mean / ref.mean, 12);
    expect(row.merged).toBeUndefined();
  });

  it('matches strategies by label, not by position', () => {
    const reversed = small(2);
    reversed.points[0].strategies.reverse();
    const m = compareRuns([run('a', a), run('r', reversed)]);
    const label = a.points[0].strategies[0].label;
    const row = m.rows.find((r) => r.label === label && r.stage === 'one_way')!;
    expect(row.runs[1]).toEqual(reversed.points[0].strategies.find((s) => s.label === label)!.merged.one_way!.summary);
  });

  it('keeps a strategy only one run has, with null (no ratio) for the other', () => {
    const fewer = small(3);
    const dropped = fewer.points[0].strategies.pop()!;
    const m = compareRuns([run('fewer', fewer), run('a', a)]);
    const rows = m.rows.filter((r) => r.label === dropped.label);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.runs[0]).toBeNull();
      expect(r.runs[1]).not.toBeNull();
      expect(r.ratios).toEqual([null, null]);
    }
  });

  it('matches points by their parameters when the runs swept differently', () => {
    const s1 = small(4, { msgSizes: [64, 1024] });
    const s2 = small(5, { msgSizes: [1024, 4096] });
    const m = compareRuns([run('s1', s1), run('s2', s2)], { stages: ['one_way'] });
    expect([...new Set(m.rows.map((r) => r.point))]).toEqual(['msg_size=64', 'msg_size=1024', 'msg_size=4096']);
    const at1024 = m.rows.find((r) => r.point === 'msg_size=1024')!;
    expect(at1024.runs[0]).toEqual(s1.points[1].strategies[0].merged.one_way!.summary);
    expect(at1024.runs[1]).toEqual(s2.points[0].strategies[0].merged.one_way!.summary);
    expect(m.rows.find((r) => r.point === 'msg_size=64')!.runs[1]).toBeNull();
  });

  it('keeps only the stages asked for', () => {
    const m = compareRuns([run('a', a), run('b', b)], { stages: ['one_way', 'work'] });
    expect(new Set(m.rows.map((r) => r.stage))).toEqual(new Set(['one_way', 'work']));
  });
});

describe('--merge', () => {
  const a = small(1);
  const b = small(2);

  it('adds the histograms: counts sum, percentiles lie between the runs’', () => {
    const m = compareRuns([run('a', a), run('b', b)], { merge: true });
    for (const row of m.rows) {
      const [x, y] = row.runs;
      expect(row.merged?.count).toBe((x?.count ?? 0) + (y?.count ?? 0));
      if (!x || !y) continue;
      for (const k of ['p50', 'p90', 'p99'] as const) {
        // Pooled percentiles cannot leave the range of the runs' own (up to HdrHistogram's 0.1%).
        expect(row.merged![k]).toBeGreaterThanOrEqual(Math.min(x[k], y[k]) * 0.999);
        expect(row.merged![k]).toBeLessThanOrEqual(Math.max(x[k], y[k]) * 1.001);
      }
      expect(row.merged!.max).toBeGreaterThanOrEqual(Math.max(x.max, y.max) * 0.999);
    }
  });

  it('of a run with itself doubles the counts and keeps the percentiles', () => {
    const m = compareRuns([run('a', a), run('again', a)], { merge: true });
    for (const row of m.rows) {
      const one = row.runs[0]!;
      expect(row.merged!.count).toBe(2 * one.count);
      // Equal within HdrHistogram's 3 significant digits (a decoded histogram's max is rounded).
      for (const k of ['p50', 'p90', 'p99', 'p99_9', 'max'] as const)
        expect(Math.abs(row.merged![k] - one[k])).toBeLessThanOrEqual(one[k] * 1e-3);
      expect(row.merged!.mean).toBeCloseTo(one.mean, 6);
    }
  });

  it('names the file, strategy and stage of a damaged histogram', () => {
    const damaged = small(6);
    const s = damaged.points[0].strategies[1];
    s.merged.work!.histogram = 'not base64 at all';
    expect(() => compareRuns([run('a', a), run('bad', damaged)], { merge: true })).toThrow(
      new RegExp(
        `^bad/results\\.json is not a valid deferlab results file: the histogram of strategy "${s.label}", stage work`,
      ),
    );
    // Without --merge, only the summaries are compared: nothing is decoded.
    expect(() => compareRuns([run('a', a), run('bad', damaged)])).not.toThrow();
  });
});

describe('metadata', () => {
  it('flattens nested fields and lists of objects into dotted paths', () => {
    const flat = flattenMeta({
      options: { hz: 250, strategies: [{ label: 'x', ref: 'x' }], irq: { cpus: [0, 1] }, l: [{ a: 1 }, { a: 2 }] },
      cal: {},
    });
    expect(Object.fromEntries(flat)).toEqual({
      'options.hz': '250',
      'options.strategies[x].label': 'x',
      'options.strategies[x].ref': 'x',
      'options.irq.cpus': '[0,1]',
      'options.l[0].a': '1',
      'options.l[1].a': '2',
      cal: '{}',
    });
  });

  it('lines up strategy lists by label, not by position', () => {
    const strategies = (labels: string[]) => ({ options: { strategies: labels.map((label) => ({ label, hz: 1 })) } });
    const a = flattenMeta(strategies(['inline', 'workqueue']));
    const b = flattenMeta(strategies(['inline', 'tasklet', 'workqueue']));
    expect(b.get('options.strategies[workqueue].hz')).toBe(a.get('options.strategies[workqueue].hz'));
    expect(a.has('options.strategies[tasklet].label')).toBe(false);
  });

  it('lists only what differs, and no field that differs by nature (time, seed, command, outDir)', () => {
    const a = small(1);
    const b = small(2);
    b.meta.startedAt = '2030-01-01T00:00:00.000Z';
    b.meta.command = ['deferlab', 'run', '--hz', '1000'];
    expect(metaDifferences([a, a])).toEqual([]);
    (b.meta.options as Record<string, unknown>).hz = 1000;
    b.meta.cpuModel = 'other CPU';
    const diff = metaDifferences([a, b]);
    expect(diff.map((d) => d.field).sort()).toEqual(['cpuModel', 'options.hz']);
    expect(diff.find((d) => d.field === 'options.hz')!.values).toEqual([null, '1000']);
    // --json's readers get the value as results.json holds it: a number, not its text.
    expect(diff.find((d) => d.field === 'options.hz')!.exact).toEqual([null, 1000]);
    expect(diff.find((d) => d.field === 'cpuModel')!.exact[1]).toBe('other CPU');
  });

  it('shows fields other versions add (a kernel profile, a calibration block), absent as null', () => {
    const a = small(1);
    const b = small(1);
    Object.assign(b.meta, { kernel: { profile: 'PREEMPT_RT' }, calibration: { ctxSwitchNs: 1800 } });
    const diff = metaDifferences([a, b]);
    expect(diff).toEqual([
      { field: 'kernel.profile', values: [null, 'PREEMPT_RT'], exact: [null, 'PREEMPT_RT'] },
      { field: 'calibration.ctxSwitchNs', values: [null, '1800'], exact: [null, 1800] },
    ]);
  });

  it('compares the status, the baseline and the sweep too', () => {
    const a = small(1);
    const b = small(1, { status: 'interrupted' });
    expect(metaDifferences([a, b])).toEqual([
      { field: 'status', values: ['completed', 'interrupted'], exact: ['completed', 'interrupted'] },
    ]);
  });
});

describe('renderings', () => {
  const a = small(1);
  const b = small(2);
  (b.meta.options as Record<string, unknown>).hz = 1000;
  Object.assign(b.meta, { kernel: { profile: 'generic' } });
  const m = compareRuns([run('results/laptop-20250101-120000', a), run('b', b)], { merge: true });
  const text = renderCompareTable(m);

  it('fits in 120 columns', () => {
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(TABLE_WIDTH);
  });

  it('puts a stage name wider than its column on a line of its own, keeping the columns aligned', () => {
    const wm = { ...m, rows: [{ ...m.rows[0], stage: 'net_rx_ksoftirqd_wait' as const }] };
    const lines = renderCompareTable(wm).split('\n');
    const at = lines.indexOf('net_rx_ksoftirqd_wait');
    expect(at).toBeGreaterThan(0);
    const runColumn = lines.find((l) => l.startsWith('stage '))!.indexOf('run');
    expect(lines[at + 1].indexOf('#1 ')).toBe(runColumn);
    expect(lines[at + 2].indexOf('#2 ')).toBe(runColumn);
  });

  it('shows every row’s runs with ratios, the merged row and what differs', () => {
    const label = a.points[0].strategies[1].label;
    expect(text).toContain(`${label}: µs; ×N = ratio to run #1`);
    expect(text).toMatch(/^one_way\s+#1 …/m); // a long name keeps its end
    expect(text).toMatch(/^\s+#2 b\s+[\d.]+ ×\d+\.\d\d/m);
    expect(text).toMatch(/^\s+merged \(2\)\s+[\d.]+/m);
    expect(text).toMatch(/^options\.hz\s+(\(absent\)|250)\s+1000/m);
    expect(text).toMatch(/^kernel\.profile\s+\(absent\)\s+generic/m);
  });

  it('says what each run measured, and names the points when the runs swept', () => {
    const plain = small(8);
    plain.meta.options = { cpus: 2, hz: 250, workload: { kind: 'irq_only' } };
    const swept = small(9, { msgSizes: [64] });
    const t = renderCompareTable(compareRuns([run('plain', plain), run('swept', swept)], { stages: ['work'] }));
    expect(t).toContain('      irq_only: background interrupts only, no application; 2 CPUs, HZ 250');
    expect(t).toMatch(/^point \(no sweep\)$/m);
    expect(t).toMatch(/^point msg_size=64$/m);
    // One run per point here: the other's row reads '-'.
    expect(t).toMatch(/^work\s+#1 plain\s+[\d.]+\s+[\d.]+/m);
    expect(t).toMatch(/^\s+#2 swept\s+-\s+-/m);
  });

  it("wraps each run's setup line and the metadata title to the prose width given, keeping every word", () => {
    const width = 60;
    const full = small(3);
    full.meta.options = {
      cpus: 2,
      hz: 250,
      kernel: '6.9',
      idle: 'halt',
      kthreads: 'cpu',
      workload: { kind: 'tcp_lat', msgSize: 64, clientCpu: 0, serverCpu: 1 },
      irq: { rate: 20_000, pattern: 'constant', cpus: 'all' },
      fastPool: { trigger: 1024 },
      trials: 2,
      trialMs: 300,
      warmupMs: 100,
    };
    const wm = compareRuns([run('full', full), run('b', b)]);
    const lines = renderCompareTable(wm, { proseWidth: width }).split('\n');
    const runs = lines.slice(1, lines.indexOf('')); // 'runs:', then each run and its setup line
    const setup = runs.filter((l) => l.startsWith('      '));
    expect(setup.length).toBeGreaterThan(2);
    for (const l of setup) expect(l.length).toBeLessThanOrEqual(width);
    const words = (t: string) => t.split(/\s+/).filter(Boolean);
    const first = runs.slice(
      1,
      runs.findIndex((l) => l.startsWith('  #2')),
    );
    expect(words(first.join(' '))).toEqual(words(wm.runs[0].setup!));
    const title = lines.findIndex((l) => l.startsWith('metadata that differs'));
    expect(lines[title].length).toBeLessThanOrEqual(width);
    expect(lines[title + 1]).toMatch(/^ {2}\S/);
  });

  it('writes JSON that reads back as the model', () => {
    expect(JSON.parse(compareJson(m))).toEqual(JSON.parse(JSON.stringify(m)));
  });

  it('overlays the runs (and the merged histogram) in one plot per strategy and stage', () => {
    const html = renderCompareHtml(m, [run('results/laptop-20250101-120000', a), run('b', b)]);
    const svgs = html.match(/<svg [^>]*data-stage=/g) ?? [];
    expect(svgs).toHaveLength(m.rows.length);
    const firstSvg = html.slice(html.indexOf('<svg '), html.indexOf('</svg>'));
    expect(firstSvg.match(/<path class="series"/g)).toHaveLength(3);
    expect(firstSvg).toContain('data-label="merged"');
    expect(html).toContain('Content-Security-Policy');
    expect(html).toContain('<code>kernel.profile</code>');
  });

  it('escapes labels in the page and control characters in the table', () => {
    const evil = small(7);
    evil.points[0].strategies[0].label = '<img src=x>\x1b[2J';
    const evil2 = structuredClone(evil);
    const inputs = [run('e1', evil), run('e2', evil2)];
    const em = compareRuns(inputs);
    expect(renderCompareHtml(em, inputs)).not.toContain('<img');
    expect(renderCompareTable(em)).not.toContain('\x1b');
  });

  it('decodes the histograms the plots draw from the same results', () => {
    const h = decodeFromCompressedBase64(a.points[0].strategies[0].merged.one_way!.histogram, 64, false);
    expect(h.totalCount).toBe(a.points[0].strategies[0].merged.one_way!.summary.count);
  });
});

describe('reading results with metadata fields this version does not declare', () => {
  it('keeps them (fields a later version may add), so compare can show them', () => {
    const r = small(1);
    Object.assign(r.meta, { kernel: { profile: 'PREEMPT_RT' }, hostFutures: { ctxSwitchNs: 1800 } });
    const v = validateResults(JSON.parse(JSON.stringify(r)));
    expect(v.ok && (v.results.meta as unknown as Record<string, unknown>).kernel).toEqual({ profile: 'PREEMPT_RT' });
    expect(v.ok && (v.results.meta as unknown as Record<string, unknown>).hostFutures).toEqual({ ctxSwitchNs: 1800 });
  });
});
