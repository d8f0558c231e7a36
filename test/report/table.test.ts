import { describe, expect, it } from 'vitest';
import { untilLine } from '../../src/report/run/comparison-notes.js';
import { foundLine } from '../../src/report/run/format-cells.js';
import { esc, renderHtml } from '../../src/report/run/html.js';
import { NET_LINES_LEGEND } from '../../src/report/run/net-lines.js';
import { MIN_PROSE_WIDTH, PROSE_WIDTH, proseWidthOf, wrapProse } from '../../src/report/run/prose.js';
import {
  fitColumns,
  MORE_COLUMNS_NOTE,
  type RenderOptions,
  renderTable as renderWrapped,
  summaryTable,
  TABLE_WIDTH,
  TRACING_OFF_NOTE,
  termSafe,
  verdictText,
} from '../../src/report/run/table.js';
import { withComparisons } from '../../src/report/statistics/stats.js';
import type { RunResults, StageName } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, type SyntheticOptions, syntheticResults } from '../fixtures/synthetic.js';

/** The table with each prose line whole: the tests here read lines; wrapping has its own tests (the last ones here). */
const renderTable = (r: RunResults, o: RenderOptions = {}) =>
  renderWrapped(r, { proseWidth: Number.POSITIVE_INFINITY, ...o });

/** The table's lines that start with `prefix` (`note:`, `warning:`, ...). */
const linesStarting = (r: RunResults, prefix: string) =>
  renderTable(r)
    .split('\n')
    .filter((l) => l.startsWith(prefix));

describe('terminal table', () => {
  const r = syntheticResults({ samples: 300, trials: 4, msgSizes: [64, 1024] });
  const text = renderTable(r, { wide: true });
  const lines = text.split('\n');

  it('lists every strategy of every point, with units in the header (--wide: every column)', () => {
    for (const p of r.points) for (const s of p.strategies) expect(text).toContain(s.label);
    expect(text).toContain('point 2/2: msg_size=1024');
    // An interrupted sweep of four that kept these two: each point's place among the four.
    const cut = structuredClone(r);
    cut.meta.options = { ...cut.meta.options, sweep: { param: 'msg_size', values: [64, 1024, 4096, 65536] } };
    expect(renderTable(cut, { wide: true })).toContain('point 2/4: msg_size=1024');
    const header = lines.find((l) => l.startsWith('strategy'))!;
    for (const h of [
      'one-way mean µs',
      'p50 µs',
      'p99.9 µs',
      'max µs',
      'Δ mean µs [Holm CI]',
      'hand-offs/s',
      'kthread sw/s',
      'wakeups/s',
      'ctx switches/s',
      'entropy bits/s',
      'Δ p50 µs [BH CI]',
      'Δ p99 µs [BH CI]',
      'Δ p99.9 µs [BH CI]',
    ]) {
      expect(header).toContain(h);
    }
    expect(text).not.toContain(MORE_COLUMNS_NOTE);
  });

  it('aligns columns: every row of a point is as wide as its rule', () => {
    const ruleAt = lines.findIndex((l) => l.startsWith('------'));
    const rule = lines[ruleAt];
    const mean = lines[ruleAt - 1].indexOf('one-way mean µs') + 'one-way mean µs'.length;
    for (let i = ruleAt + 1; i <= ruleAt + r.points[0].strategies.length; i++) {
      expect(lines[i].length).toBeLessThanOrEqual(rule.length);
      expect(lines[i][mean - 1]).toMatch(/\d/); // right-aligned under its header
    }
  });

  it('shows the one-way mean in µs with 2 decimals and the Δ with interval and verdict', () => {
    const s = r.points[0].strategies[1];
    for (const out of [text, renderTable(r)]) {
      const row = out.split('\n').find((l) => l.startsWith(s.label))!;
      expect(row).toContain((s.merged.one_way!.summary.mean / 1000).toFixed(2));
      expect(row).toMatch(/[+-]\d+\.\d\d \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]\s+(worse|better|~)/);
      expect(out.split('\n').find((l) => l.startsWith(r.baseline))).toContain('baseline');
      expect(out.replace(/\n\s+/g, ' ')).toMatch(/Δ mean: .*paired-t interval; Holm-adjusted over \d+ candidates?/);
    }
  });

  it('names the --threshold band as the run was given it, not a 0 made up when the baseline measured nothing', () => {
    const given = { ...r, meta: { ...r.meta, options: { ...r.meta.options, threshold: 3.5 } } };
    expect(renderTable(given)).toMatch(/wholly outside ±3\.5% of the baseline \(--threshold\)/);
    // Without it in the options (older results) and without a baseline to recover it from: "?".
    const none = structuredClone(r);
    for (const p of none.points) for (const s of p.strategies) for (const c of s.comparison ?? []) c.baseline = 0;
    expect(renderTable(none)).toMatch(/wholly outside ±\?% of the baseline/);
  });

  it('fits 120 columns by default: the latency, the Δ mean and its verdict always; rates as room allows', () => {
    const wide = syntheticResults({
      samples: 300,
      trials: 4,
      strategies: DEFAULT_STRATEGIES.map((s, i) => (i === 1 ? { ...s, label: 'timer(deferrable=true)' } : s)),
    });
    const out = renderTable(wide).split('\n');
    const ruleAt = out.findIndex((l) => l.startsWith('------'));
    for (const l of out.slice(ruleAt - 1, ruleAt + 1 + wide.points[0].strategies.length)) {
      expect(l.length).toBeLessThanOrEqual(TABLE_WIDTH);
    }
    const header = out[ruleAt - 1];
    for (const h of ['strategy', 'mean', 'p99', 'p99.9', 'Δ mean [Holm CI]']) expect(header).toContain(h);
    expect(header).not.toContain('max');
    expect(out[ruleAt - 2]).toBe('one-way latency in µs'); // the caption gives the unit
    expect(out).toContain(MORE_COLUMNS_NOTE);
    // The full table of the same run is wider.
    expect(
      Math.max(
        ...renderTable(wide, { wide: true })
          .split('\n')
          .map((l) => (l.startsWith('---') ? l.length : 0)),
      ),
    ).toBeGreaterThan(TABLE_WIDTH);
  });

  it('fitColumns keeps every "always" column, then adds the others by priority while they fit', () => {
    // widths: 10 each; always, p1, p2, wide, p3 → grid width 10·k + 2·(k − 1)
    const show = ['always', 1, 2, 'wide', 3] as const;
    expect(fitColumns([10, 10, 10, 10, 10], [...show], 34)).toEqual([true, true, true, false, false]);
    expect(fitColumns([10, 10, 10, 10, 10], [...show], 33)).toEqual([true, true, false, false, false]);
    expect(fitColumns([10, 30, 10, 10, 10], [...show], 34)).toEqual([true, false, true, false, true]); // p1 too wide: skipped
    expect(fitColumns([10, 10, 10, 10, 10], [...show], 5)).toEqual([true, false, false, false, false]);
  });

  it('says beside "~" how small a difference the comparison could have seen', () => {
    const row = renderTable(r)
      .split('\n')
      .find((l) => / ~ /.test(l));
    if (row) expect(row).toMatch(/~ could see ±\d+\.\d\d \(\d+(\.\d)?%\)/);
    const c = {
      stage: 'one_way' as const,
      metric: 'mean' as const,
      baseline: 10_000,
      value: 10_100,
      diff: 100,
      ciLow: -200,
      ciHigh: 400,
      ratio: 1.01,
      detectable: 580,
      verdict: 'within-noise' as const,
      method: '',
    };
    expect(verdictText(c)).toBe('~ could see ±0.58 (5.8%)');
    expect(verdictText({ ...c, detectable: 1500 })).toBe('~ could see ±1.50 (15%)');
    expect(verdictText({ ...c, insideFloor: true })).toBe('~ inside noise floor');
    expect(verdictText({ ...c, detectable: undefined })).toBe('~');
    expect(verdictText({ ...c, verdict: 'regression' })).toBe('worse');
  });

  it('lists under the default table the tail verdicts that are called (the wide table has them as columns)', () => {
    const tail = linesStarting(r, 'tail: ');
    for (const l of tail) expect(l).toMatch(/^tail: \S+ (p50|p90|p99|p99\.9) [+-]\d+\.\d\d \[.*\] (worse|better)/);
    // workqueue's tail is far above inline's in the synthetic model: always called.
    expect(tail.some((l) => l.startsWith('tail: workqueue '))).toBe(true);
    expect(text).not.toMatch(/^tail: /m);
  });

  it('falls back to handoff_to_start, and says so, when the workload has no one_way', () => {
    const noOneWay = DEFAULT_STRATEGIES.slice(1, 3).map((s) => {
      const { one_way: _drop, ...stages } = s.stages;
      return { ...s, stages };
    });
    const irqOnly = syntheticResults({ samples: 100, trials: 3, strategies: noOneWay });
    irqOnly.meta.options = { workload: { kind: 'irq_only' } };
    const t = summaryTable(irqOnly.points[0], irqOnly.baseline);
    expect(t.stage).toBe<StageName>('handoff_to_start');
    expect(renderTable(irqOnly, { wide: true })).toContain('handoff_to_start mean µs');
    const out = renderTable(irqOnly);
    expect(out).toContain('handoff_to_start latency in µs');
    expect(out).toContain('no one_way latency in this workload: showing handoff_to_start instead');
    expect(out).not.toMatch(/^warning:/m);
  });

  it("shows a driver payload's request_to_start before handoff_to_start (cpu-hog: its verdicts' stage)", () => {
    const driver = DEFAULT_STRATEGIES.slice(1, 3).map((s) => {
      const { one_way: _drop, ...stages } = s.stages;
      return { ...s, stages: { ...stages, request_to_start: stages.handoff_to_start } };
    });
    const r = syntheticResults({ samples: 100, trials: 3, strategies: driver });
    r.meta.options = { workload: { kind: 'irq_only' } };
    expect(summaryTable(r.points[0], r.baseline).stage).toBe<StageName>('request_to_start');
    expect(renderTable(r)).toContain('showing request_to_start instead');
  });

  it('says that no tcp_lat message completed, not that the workload has none, when tcp_lat measured no one_way', () => {
    const noOneWay = DEFAULT_STRATEGIES.slice(1, 3).map((s) => {
      const { one_way: _drop, ...stages } = s.stages;
      return { ...s, stages };
    });
    const r = syntheticResults({ samples: 100, trials: 2, strategies: noOneWay });
    r.meta.options = { cpus: 2, trialMs: 100, workload: { kind: 'tcp_lat', msgSize: 268435456 } };
    const out = renderTable(r);
    expect(out).toContain(
      '(no tcp_lat message completed in the measured window: one_way is empty; showing handoff_to_start instead; ' +
        'a longer --duration may let messages finish)',
    );
    expect(out).not.toContain('in this workload');
  });

  it('warns, under the table, naming the strategies that recorded no one_way sample while others did', () => {
    const strategies = DEFAULT_STRATEGIES.slice(0, 4).map((s, i) => {
      if (i === 0 || i === 2) return s;
      const { one_way: _drop, ...stages } = s.stages;
      return { ...s, stages };
    });
    const r = syntheticResults({ samples: 100, trials: 2, strategies });
    r.meta.options = { cpus: 64, trialMs: 50, workload: { kind: 'tcp_lat' } };
    r.meta.hostCores = 2;
    const lines = renderTable(r).split('\n');
    const warning = lines.filter((l) => l.startsWith('warning:'));
    expect(warning).toEqual([
      'warning: no application latency (one_way) sample from workqueue and timer: the 50 ms measured per trial ' +
        'may be too short for 64 emulated CPUs on 2 host cores; raise --duration',
    ]);
    // Under the table: after the last row, before the Δ note.
    const at = lines.indexOf(warning[0]);
    expect(lines[at - 1]).toMatch(/^timer\s/);
    expect(lines[at + 1]).toMatch(/^(found: |Δ mean: )/); // what was found, then the Δ note
    // The rows it names are the empty ones.
    expect(lines.find((l) => l.startsWith('workqueue'))).toMatch(/^workqueue\s+-\s+-/);
    // A complete run without empty rows has no warning.
    expect(renderTable(syntheticResults({ samples: 100, trials: 2 }))).not.toMatch(/^warning:/m);
  });

  it('notes, under the setup line, background interrupts the generator skipped late or dropped', () => {
    const r = syntheticResults({ samples: 100, trials: 2 });
    expect(renderTable(r)).not.toContain('generator fell behind');
    for (const s of r.points[0].strategies)
      for (const t of s.trials) Object.assign(t.counters, { irqs_raised: 900, irqs_skipped: 75, irqs_dropped: 25 });
    const n = r.points[0].strategies.length * 2;
    const noteOf = () =>
      renderTable(r, { proseWidth: 1000 })
        .split('\n')
        .filter((l) => l.includes('generator fell behind'));
    const note = renderTable(r, { proseWidth: 1000 })
      .split('\n')
      .filter((l) => l.includes('generator fell behind'));
    expect(note).toEqual([
      `note: the interrupt generator fell behind in the measured phases: of ${1000 * n} device interrupts due, ` +
        `${75 * n} were skipped late and ${25 * n} dropped (a full ring), 10.0%; the CPUs took fewer than the setup ` +
        'line says (fewer emulated CPUs, a higher --tdf or a quieter host lets it keep up)',
    ]);
    // Under 1% lost: no note (the counters still hold them).
    for (const s of r.points[0].strategies)
      for (const t of s.trials) Object.assign(t.counters, { irqs_raised: 9950, irqs_skipped: 49, irqs_dropped: 0 });
    expect(noteOf()).toEqual([]);
  });

  it('a baseline run alone says there is no Δ, instead of explaining intervals it does not have', () => {
    const r = syntheticResults({ samples: 100, trials: 2, strategies: DEFAULT_STRATEGIES.slice(0, 1) });
    const out = renderTable(r, { proseWidth: 1000 });
    expect(out).toContain(
      `Δ mean: none: the baseline "${r.baseline}" ran with no strategy to compare with it (give another --strategy).`,
    );
    expect(out).not.toContain('paired-t interval');
  });

  it('warns when trials ran and nothing at all was measured (no message and no hand-off: every cell "-")', () => {
    const strategies = DEFAULT_STRATEGIES.slice(0, 2).map((s) => ({ ...s, stages: {} }));
    const r = syntheticResults({ samples: 100, trials: 1, strategies });
    r.meta.options = { cpus: 64, trialMs: 100, workload: { kind: 'tcp_lat' } };
    r.meta.hostCores = 2;
    const warning = linesStarting(r, 'warning:');
    expect(warning).toEqual([
      'warning: nothing was measured: no strategy recorded a sample of any stage (no message, no hand-off) ' +
        'in the 100 ms measured per trial for 64 emulated CPUs on 2 host cores; raise --duration',
    ]);
  });

  it('notes a trial with far fewer messages than the median trial (the pooled mean and the Δ then disagree)', () => {
    const r = syntheticResults({ samples: 100, trials: 5 });
    const counts = [42943, 43010, 2485, 42100, 44000];
    for (const s of r.points[0].strategies)
      s.trials.forEach((t, i) => {
        t.counters.app_messages = s.label === 'workqueue' ? counts[i] : 40000 + i;
      });
    const notes = linesStarting(r, 'note:');
    expect(notes).toEqual([
      'note: workqueue trial 3 of 5 sent 2485 messages against a median of 42943 (a host stall?); ' +
        'Δ is averaged per trial, mean is pooled',
    ]);
    // Two short trials of one strategy: still one line.
    r.points[0].strategies[1].trials[4].counters.app_messages = 100;
    const two = linesStarting(r, 'note:');
    expect(two).toEqual([
      'note: workqueue trials 3 and 5 of 5 sent 2485 and 100 messages against a median of 42100 (a host stall?); ' +
        'Δ is averaged per trial, mean is pooled',
    ]);
    // Sliced comparisons pool by count as the mean column does: the note must not say otherwise.
    for (const s of r.points[0].strategies)
      for (const c of s.comparison ?? []) if (c.metric === 'mean') c.method = 'paired by slice cycle, ...';
    const sliced = linesStarting(r, 'note:');
    expect(sliced).toEqual([
      'note: workqueue trials 3 and 5 of 5 sent 2485 and 100 messages against a median of 42100 (a host stall?); ' +
        'its few samples weigh by their count in the mean and in Δ',
    ]);
  });

  it('notes slice cycles a sliced Δ left out because a side measured nothing in them', () => {
    const r = syntheticResults({ samples: 100, trials: 2 });
    const slices = (counts: number[]) => ({ count: counts, mean: counts.map((c) => (c > 0 ? 10_000 : Number.NaN)) });
    for (const s of r.points[0].strategies)
      s.trials.forEach((t, i) => {
        t.slices = { one_way: slices(s.label === 'workqueue' && i === 1 ? [50, 0, 50] : [50, 50, 50]) } as never;
      });
    const dropped = linesStarting(r, 'note: Δ pairs slices by cycle');
    expect(dropped).toHaveLength(1);
    // The baseline's empty cycle leaves it out of every candidate's Δ; the candidate's, of its own.
    const baseline = r.baseline;
    const others = r.points[0].strategies.filter((s) => s.label !== baseline).map((s) => s.label);
    if (baseline === 'workqueue') for (const l of others) expect(dropped[0]).toContain(`${l} 1 of 6`);
    else expect(dropped[0]).toMatch(/: workqueue 1 of 6 cycles left out$/);
    // Whole trials (no slices): nothing to say.
    for (const s of r.points[0].strategies) for (const t of s.trials) t.slices = undefined;
    expect(linesStarting(r, 'note: Δ pairs slices by cycle')).toEqual([]);
  });

  it('a run with nothing compared (a failed run) says so, not that its results predate the adjustment', () => {
    const r = syntheticResults({ samples: 50, trials: 2 });
    for (const s of r.points[0].strategies) delete s.comparison;
    const note = renderTable(r)
      .split('\n')
      .find((l) => l.startsWith('Δ mean:'))!;
    expect(note).toBe('Δ mean: none: no strategy has a measured trial to compare with the baseline "inline".');
  });

  it('the Δ note says that the pooled mean column and the per-trial Δ can disagree', () => {
    const note = renderTable(syntheticResults({ samples: 50, trials: 2 }))
      .split('\n')
      .find((l) => l.startsWith('Δ mean:'))!;
    expect(note).toContain(
      'averaged over interleaved trial pairs (the mean column pools all samples instead, so the two can disagree)',
    );
  });

  it('ends with the seed, to replay the run', () => {
    const r = syntheticResults({ samples: 50, trials: 2, seed: 123456 });
    const lines = renderTable(r).trimEnd().split('\n');
    expect(lines.at(-1)).toBe('seed 123456 (replay: --seed 123456)');
  });

  it('says when there is no interval (one trial)', () => {
    const one = syntheticResults({ samples: 100, trials: 1 });
    expect(renderTable(one)).toContain('[no CI: n<2]');
  });

  it('neutralises terminal control characters in labels and reports a failed run', () => {
    const evil = syntheticResults({
      samples: 50,
      trials: 2,
      strategies: [DEFAULT_STRATEGIES[0], { ...DEFAULT_STRATEGIES[1], label: 'x\u001b[2Jy' }],
      status: 'failed',
    });
    evil.error = { message: 'worker exited with code 1', thread: 'cpu1', cpu: 1 };
    const out = renderTable(evil);
    expect(out).not.toContain('\u001b');
    expect(out).toContain('x\\x1b[2Jy');
    expect(out.split('\n')[0]).toBe(
      'status: failed: worker exited with code 1 (thread cpu1, cpu 1); results below are partial',
    );
    expect(termSafe('a\rb\u009bc')).toBe('a\\x0db\\x9bc');
  });
});

/** The resolved config of a default tcp_lat run, as meta.options holds it (the parts the table reads). */
const OPTIONS = {
  cpus: 2,
  hz: 250,
  trialMs: 1000,
  warmupMs: 200,
  trials: 5,
  workload: { kind: 'tcp_lat', msgSize: 64, clientCpu: 0, serverCpu: 1, ringBytes: 4194304 },
  irq: { rate: 20000, pattern: 'poisson', burstSize: 32, cpus: [0, 1] },
  fastPool: { trigger: 1024, variant: '64' },
  tracing: true,
  sweep: null,
};

describe('the setup line', () => {
  const withOptions = (options: Record<string, unknown>, extra: SyntheticOptions = {}) => {
    // As many trials kept as the options ask for (fewer is a run that stopped early: setup-trials.test.ts).
    const trials = typeof options.trials === 'number' ? options.trials : 2;
    const r = syntheticResults({ samples: 50, trials, ...extra });
    r.meta.options = options;
    return r;
  };
  const lineOf = (r: RunResults) => renderTable(r).split('\n')[1];

  it('says what was measured, right under the status line', () => {
    expect(lineOf(withOptions(OPTIONS))).toBe(
      'tcp_lat 64 B between CPU 0 and CPU 1; 2 CPUs, HZ 250; background interrupts 20k/s per CPU (poisson) ' +
        'on CPUs 0,1; random.c trigger 1024; 5 trials of 1 s (+ 200 ms warm-up) per strategy, interleaved',
    );
  });

  it("names the NIC a tcp_lat run's packets crossed, with what differs from its profile", () => {
    const nic = { profile: 'ixgbe', mtu: 9000, linkGbps: 10, rxUsecs: 1, rxFrames: 0, netdevBudget: 300 };
    expect(lineOf(withOptions({ ...OPTIONS, workload: { ...OPTIONS.workload, nic } }))).toMatch(
      /^tcp_lat 64 B between CPU 0 and CPU 1 over ixgbe \(MTU 9000\), adaptive ITR; 2 CPUs, /,
    );
    const partial = { ...OPTIONS, workload: { ...OPTIONS.workload, nic: { profile: 'ipoib-ud' } } };
    expect(lineOf(withOptions(partial))).toMatch(/^tcp_lat 64 B between CPU 0 and CPU 1 over ipoib-ud; /);
  });

  it('irq_only, bursts, all CPUs, no warm-up, one strategy, one trial', () => {
    const r = withOptions(
      {
        ...OPTIONS,
        workload: { kind: 'irq_only' },
        irq: { rate: 1500, pattern: 'bursts', burstSize: 64, cpus: 'all' },
        warmupMs: 0,
        trials: 1,
        trialMs: 1500,
      },
      { strategies: [DEFAULT_STRATEGIES[0]] },
    );
    expect(lineOf(r)).toBe(
      'irq_only: background interrupts only, no application; 2 CPUs, HZ 250; background interrupts 1.5k/s per CPU ' +
        '(bursts of 64) on all CPUs; random.c trigger 1024; 1 trial of 1.5 s per strategy',
    );
  });

  it('a swept setting says "per point"', () => {
    const size = withOptions({ ...OPTIONS, sweep: { param: 'msg_size', values: [4096, 8192] } });
    expect(lineOf(size)).toMatch(/^tcp_lat msg_size per point between CPU 0 and CPU 1; /);
    const rate = withOptions({
      ...OPTIONS,
      irq: { ...OPTIONS.irq, rate: 0 },
      sweep: { param: 'irq_rate', values: [1] },
    });
    expect(lineOf(rate)).toContain('; background interrupts at irq_rate per point per CPU (poisson) on CPUs 0,1;');
    const trigger = withOptions({
      ...OPTIONS,
      workload: { ...OPTIONS.workload, msgSize: 4096 },
      sweep: { param: 'trigger', values: [16] },
    });
    expect(lineOf(trigger)).toMatch(/^tcp_lat 4 KiB .*; random\.c trigger per point; /);
  });

  it('no background interrupts, said as such', () => {
    expect(lineOf(withOptions({ ...OPTIONS, irq: { ...OPTIONS.irq, rate: 0 } }))).toContain(
      '; no background interrupts; ',
    );
  });

  it("a scenario's own workload (meta.workload) stands for the workload, the interrupts and the trigger", () => {
    const r = withOptions({ ...OPTIONS, workload: { kind: 'irq_only' } });
    r.meta.workload = 'a CPU hog on CPU 0 at nice -20 and a driver';
    expect(lineOf(r)).toBe(
      'a CPU hog on CPU 0 at nice -20 and a driver; 2 CPUs, HZ 250; 5 trials of 1 s (+ 200 ms warm-up) per strategy, interleaved',
    );
  });

  it('is left out when the options say nothing usable', () => {
    const r = withOptions({});
    expect(renderTable(r).split('\n').slice(0, 2)).toEqual(['status: completed', '']);
  });
});

describe('tracing off (--no-tracing)', () => {
  const untraced = () => {
    const none = DEFAULT_STRATEGIES.slice(0, 3).map((s) => ({ ...s, stages: {} }));
    const r = syntheticResults({ samples: 10, trials: 2, strategies: none });
    r.meta.options = { ...OPTIONS, tracing: false };
    return r;
  };

  it('says under the table why every latency is "-", and warns of nothing', () => {
    const lines = renderTable(untraced()).split('\n');
    const at = lines.indexOf(TRACING_OFF_NOTE);
    expect(TRACING_OFF_NOTE).toBe(
      '(tracing off (--no-tracing): no latencies were recorded; the counters are complete)',
    );
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toMatch(/^tasklet\s+-\s+-/);
    expect(lines.filter((l) => l.startsWith('warning:') || l.startsWith('(no '))).toEqual([]);
  });

  it('only when tracing was off', () => {
    const r = untraced();
    r.meta.options = OPTIONS;
    expect(renderTable(r)).not.toContain('tracing off');
  });
});

describe('hand-offs lost (refused while nothing was pending)', () => {
  const lost = (counts: Array<number | undefined>) => {
    const r = syntheticResults({
      samples: 20,
      trials: 2,
      strategies: [
        DEFAULT_STRATEGIES[0],
        {
          ...DEFAULT_STRATEGIES[1],
          label: 'mine.ts(batch=8)',
          name: 'Mine',
          kind: 'file',
          file: '/home/me/my strategies/mine.ts',
        },
        { ...DEFAULT_STRATEGIES[3], label: 'timer(deferrable=true)' },
      ],
    });
    const strategies = r.points[0].strategies;
    strategies[1].options = { batch: 8 };
    strategies[2].options = { deferrable: true };
    counts.forEach((n, i) => {
      if (n !== undefined) strategies[i].counters.handoffs_lost = n;
    });
    return renderTable(r)
      .split('\n')
      .filter((l) => l.includes('nothing was pending'));
  };

  it('warns, per strategy with a lost hand-off, naming the check to run', () => {
    expect(lost([0, 12, 1])).toEqual([
      'warning: mine.ts(batch=8) refused 12 hand-offs while nothing was pending: those jobs were lost ' +
        `(its CPU stops giving entropy); run 'deferlab check-strategy "/home/me/my strategies/mine.ts:batch=8"'`,
      'warning: timer(deferrable=true) refused 1 hand-off while nothing was pending: that job was lost ' +
        "(its CPU stops giving entropy); run 'deferlab check-strategy timer:deferrable=true'",
    ]);
  });

  it('warns of a strategy that made no hand-off because its mixes ran on another CPU', () => {
    const r = syntheticResults({ samples: 20, trials: 2 });
    const [a, b] = r.points[0].strategies;
    a.counters.handoffs = 400;
    b.counters.handoffs = 0;
    b.counters.mixes_remote = 2;
    const warned = renderTable(r)
      .split('\n')
      .filter((l) => l.includes('made no hand-off'));
    expect(warned).toEqual([
      `warning: ${b.label} made no hand-off in its measured windows: its 2 mixes ran on another CPU, which random.c refuses, leaving that CPU's fast pool in flight (MIX_INFLIGHT), so it deferred nothing and its latency is not a deferral's; run 'deferlab check-strategy ${b.name}'`,
    ]);
    // Hand-offs made, or none remote, or nobody handed off at all: nothing to say.
    for (const [h, rm, others] of [
      [3, 2, 400],
      [0, 0, 400],
      [0, 2, 0],
    ]) {
      for (const s of r.points[0].strategies) s.counters.handoffs = others;
      Object.assign(b.counters, { handoffs: h, mixes_remote: rm });
      expect(
        renderTable(r)
          .split('\n')
          .filter((l) => l.includes('made no hand-off')),
        `hand-offs ${h}, remote ${rm}, the others' ${others}`,
      ).toEqual([]);
    }
  });

  it('says nothing when none was lost, or when the results predate the counter', () => {
    expect(lost([0, 0, 0])).toEqual([]);
    expect(lost([undefined, undefined, undefined])).toEqual([]);
    expect(lost([undefined, Number.NaN, undefined])).toEqual([]);
  });
});

describe('with an A/A control (--control)', () => {
  const withControl = () => {
    const strategies = [...DEFAULT_STRATEGIES.slice(0, 3), { ...DEFAULT_STRATEGIES[0], label: 'inline (control)' }];
    const r = syntheticResults({ samples: 500, trials: 5, strategies });
    r.control = 'inline (control)';
    return withComparisons(r);
  };

  it('marks the control row as the noise floor and reports its Δ on the mean and the tail', () => {
    const lines = renderTable(withControl()).split('\n');
    expect(lines.find((l) => l.startsWith('inline (control)'))).toMatch(/\]\s+noise floor/);
    const floor = lines.filter((l) => l.startsWith('noise floor'));
    expect(floor).toHaveLength(1);
    expect(floor[0]).toMatch(
      /^noise floor \(A\/A: inline \(control\) − inline, µs\): mean [+-]\S+ \[.*\], p50 .*, p99 .*, p99\.9 .*$/,
    );
    expect(lines.find((l) => l.startsWith('Δ mean:'))).toContain('outside the A/A noise floor');
    expect(lines.some((l) => l.startsWith('tail: inline (control)'))).toBe(false); // the floor is no verdict
  });

  it('warns when the control itself differs from its baseline', () => {
    const r = withControl();
    const control = r.points[0].strategies.find((s) => s.label === 'inline (control)')!;
    for (const c of control.comparison!) if (c.metric === 'p99') c.verdict = 'regression';
    const warning = linesStarting(r, 'warning: the A/A control');
    expect(warning).toEqual([
      "warning: the A/A control differs from its baseline on p99: this run's noise exceeds its intervals " +
        '(host load, drift); no verdict inside the floor is called, but consider more trials (--until)',
    ]);
  });
});

describe('with --until', () => {
  const r = syntheticResults({ samples: 50, trials: 3 });
  const line = (until: RunResults['points'][number]['until']) => {
    r.points[0].until = until;
    return untilLine(r.points[0]);
  };

  it('says whether the target was reached, why it stopped, and the widest interval', () => {
    const base = { pct: 3, maxTimeMs: 600_000, rounds: 12, widthPct: { tasklet: 2.1, timer: 2.84 } };
    expect(line({ ...base, reached: true, stop: 'reached' })).toBe(
      'until ±3%: reached after 12 rounds; widest Δ-mean interval ±2.8% (timer)',
    );
    expect(line({ ...base, reached: false, stop: 'time', widthPct: { tasklet: 4.12, timer: Number.NaN } })).toBe(
      'until ±3%: not reached: --max-time (600 s) ran out after 12 rounds; widest Δ-mean interval none (timer)',
    );
    expect(renderTable(r)).toContain('until ±3%: not reached');
    expect(line(undefined)).toBeUndefined();
  });
});

/** `r` with a tcp_lat NIC's counters on every strategy, so the net table and its legend print. */
function withNic(r: RunResults, label = (l: string) => l): RunResults {
  for (const p of r.points)
    for (const s of p.strategies) {
      if (s.label !== r.baseline) s.label = label(s.label);
      Object.assign(s.counters, {
        app_messages: 1000,
        nic_tx_packets: 2000,
        nic_irqs: 4000,
        napi_polls: 4000,
        napi_full_weight: 0,
        net_time_squeeze: 0,
        net_rx_reraises: 0,
        tcp_acks_sent: 0,
        handoffs_app_busy: 1900,
        handoffs_app_idle: 1900,
        deferred_us_app_waiting: 200_000,
      });
      Object.assign(s.rates, { interrupts: 65_000, handoffs: 59.7 });
    }
  return r;
}

/** The words of `lines`, as one list (wrapping must keep every one, in order). */
const wordsOf = (lines: readonly string[]) => lines.join(' ').split(/\s+/).filter(Boolean);

/** The paragraph that starts with `start` in `lines`: that line and its indented continuations. */
function paragraph(lines: readonly string[], start: string): string[] {
  const at = lines.findIndex((l) => l.startsWith(start));
  expect(at).toBeGreaterThanOrEqual(0);
  let end = at + 1;
  while (end < lines.length && /^ {2}\S/.test(lines[end])) end++;
  return lines.slice(at, end);
}

describe('prose under the table wraps', () => {
  it('wrapProse keeps lines within the width and every word in order, continuations indented', () => {
    for (const width of [40, 57, 100]) {
      const lines = wrapProse(NET_LINES_LEGEND, width);
      expect(lines.length).toBeGreaterThan(NET_LINES_LEGEND.length / width);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
      for (const l of lines.slice(1)) expect(l).toMatch(/^ {2}\S/);
      expect(wordsOf(lines)).toEqual(NET_LINES_LEGEND.split(' '));
    }
    expect(wrapProse('fits as it is', 13)).toEqual(['fits as it is']);
    // A word longer than the line stands alone rather than being cut.
    const path = `/${'d'.repeat(60)}/results.json`;
    expect(wrapProse(`results: ${path} (4 files)`, 40)).toEqual(['results:', `  ${path}`, '  (4 files)']);
  });

  it('report.html holds what the terminal prints under its table: the found: line, the net table, the tail notes', () => {
    const r = withNic(syntheticResults({ seed: 4, samples: 400, trials: 6 }));
    const text = renderTable(r);
    const html = renderHtml(r);
    const found = text.split('\n').find((l) => l.startsWith('found: '));
    expect(found, 'the terminal has a found: line').toBeDefined();
    expect(html).toMatch(/<p class="found">found: [^<]*in the tails: /);
    expect(html).toContain('<pre class="net">');
    expect(html).toContain(esc(NET_LINES_LEGEND.split(':')[0]));
    expect(html).toContain('tail Δ (p50, p90, p99, p99.9)');
    expect(html).toContain('every tail interval: the table above, results.json');
  });

  it('renderTable wraps the net legend, the Δ note and the setup line to the width given', () => {
    const r = withNic(syntheticResults({ samples: 50, trials: 2 }));
    for (const width of [50, 80]) {
      const lines = renderWrapped(r, { proseWidth: width }).trimEnd().split('\n');
      const legend = paragraph(lines, 'per exchange (');
      expect(legend.length).toBeGreaterThan(2);
      for (const l of legend) expect(l.length).toBeLessThanOrEqual(width);
      expect(wordsOf(legend)).toEqual(NET_LINES_LEGEND.split(' '));
      const delta = paragraph(lines, 'Δ mean:');
      expect(delta.length).toBeGreaterThan(2);
      for (const l of delta) expect(l.length).toBeLessThanOrEqual(width);
      expect(wordsOf(delta).join(' ')).toBe(wordsOf([summaryTable(r.points[0], r.baseline).deltaNote]).join(' '));
    }
  });

  it(`wraps at ${PROSE_WIDTH} columns by default, while the grids keep to ${TABLE_WIDTH}`, () => {
    const r = withNic(syntheticResults({ samples: 50, trials: 2 }));
    const lines = renderWrapped(r).trimEnd().split('\n');
    const grid = (l: string) => /^(strategy|per exchange|-+ |inline|workqueue|tasklet|timer|irq_work) /.test(l);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(grid(l) ? TABLE_WIDTH : PROSE_WIDTH);
    expect(lines.some((l) => !grid(l) && l.length > PROSE_WIDTH - 20)).toBe(true); // it did wrap near the width
  });

  it('the net table leaves out hand-offs/s (and its legend entry) to fit, and --wide keeps it', () => {
    const r = withNic(syntheticResults({ samples: 50, trials: 2 }), (l) => `${l}(wq=system,b=1)`);
    const narrow = renderWrapped(r).split('\n');
    const header = narrow.find((l) => l.startsWith('per exchange  '))!;
    expect(header.length).toBeLessThanOrEqual(TABLE_WIDTH);
    expect(header).not.toContain('hand-offs/s');
    expect(wordsOf(paragraph(narrow, 'per exchange ('))).not.toContain('hand-offs/s;');
    expect(narrow).toContain(MORE_COLUMNS_NOTE);
    const wide = renderWrapped(r, { wide: true }).split('\n');
    expect(wide.find((l) => l.startsWith('per exchange  '))).toContain('hand-offs/s');
    expect(wordsOf(paragraph(wide, 'per exchange ('))).toEqual(NET_LINES_LEGEND.split(' '));
  });

  it("proseWidthOf: the terminal's columns (at least the minimum), or the default when not a terminal", () => {
    expect(proseWidthOf({ isTTY: true, columns: 132 })).toBe(132);
    expect(proseWidthOf({ isTTY: true, columns: 12 })).toBe(MIN_PROSE_WIDTH);
    expect(proseWidthOf({ isTTY: false, columns: 132 })).toBe(PROSE_WIDTH);
    expect(proseWidthOf({ isTTY: true })).toBe(PROSE_WIDTH);
    expect(proseWidthOf({})).toBe(PROSE_WIDTH);
  });
});

describe('a kernel without WQ_BH', () => {
  const withKernel = (kernel: string | undefined) => {
    const r = syntheticResults({ seed: 11, samples: 50, trials: 2 });
    return { ...r, meta: { ...r.meta, options: { ...r.meta.options, ...(kernel ? { kernel } : {}) } } };
  };
  const bhLines = (r: RunResults) =>
    renderTable(r)
      .split('\n')
      .filter((l) => l.includes('bh_workqueue is not compared'));
  it('says under the table why bh_workqueue is not beside the tasklet (the default list leaves it out)', () => {
    for (const k of ['5.15', '6.1'])
      expect(bhLines(withKernel(k))).toEqual([
        `bh_workqueue is not compared: WQ_BH workqueues exist from Linux 6.9 on, and this run's kernel is ${k} (--kernel 6.9 or later to compare it)`,
      ]);
  });
  it('says nothing on 6.9 and later, or with no kernel recorded', () => {
    for (const k of ['6.9', '6.18', undefined]) expect(bhLines(withKernel(k))).toEqual([]);
  });
});

describe('a busy host', () => {
  const withFree = (free: number | undefined, cpus = 2) => {
    const r = syntheticResults({ seed: 11, samples: 50, trials: 2 });
    return {
      ...r,
      meta: {
        ...r.meta,
        hostCores: 2,
        ...(free === undefined ? {} : { hostFreeCores: free }),
        options: { ...r.meta.options, cpus },
      },
    };
  };
  const busy = (r: RunResults) => linesStarting(r, 'note: the host was busy');
  it('says so under the host line when other processes left fewer cores free than the machine wants', () => {
    expect(busy(withFree(0.3))).toEqual([
      "note: the host was busy as the run began: other processes left 0.3 of its 2 cores free, where this machine's CPU threads want 2; they shared the cores, which lengthens the latencies and widens every interval here (a quieter host narrows them)",
    ]);
    expect(busy(withFree(1.0))).toHaveLength(1);
    // One CPU wants one core: one core free is enough.
    expect(busy(withFree(1.0, 1))).toEqual([]);
  });
  it('says nothing on a free host, or where the run did not sample it (--idle given)', () => {
    expect(busy(withFree(2.0))).toEqual([]);
    expect(busy(withFree(1.9))).toEqual([]);
    expect(busy(withFree(undefined))).toEqual([]);
  });
});

describe('the found: line under the table', () => {
  const foundOf = (r: RunResults) =>
    renderTable(r)
      .split('\n')
      .find((l) => l.startsWith('found: '));
  it('names the strategies worse or better than the baseline with Δ mean, and counts the rest within noise', () => {
    const r = syntheticResults({ seed: 4, samples: 400, trials: 6 });
    const line = foundOf(r);
    expect(line).toBeDefined();
    const rows = summaryTable(r.points[0], r.baseline).rows;
    for (const row of rows) {
      if (row.marker === 'worse')
        expect(line).toMatch(new RegExp(`worse than ${r.baseline}: [^;]*${row.label} \\(\\+`));
      if (row.marker === 'better')
        expect(line).toMatch(new RegExp(`better than ${r.baseline}: [^;]*${row.label} \\(-`));
      if (row.marker === '~') expect(line).toContain(row.label);
    }
  });
  it('says so in words when nothing differed, with what the run could have seen', () => {
    const r = syntheticResults({ seed: 4, samples: 400, trials: 6 });
    const rows = summaryTable(r.points[0], r.baseline).rows.map((row) => ({
      ...row,
      marker: row.isBaseline ? row.marker : ('~' as const),
    }));
    const line = foundLine(r.baseline, rows);
    expect(line).toMatch(
      new RegExp(
        `^found: no strategy differed from ${r.baseline} beyond the noise \\(each could have seen a difference of [\\d.]+%(–[\\d.]+%)? of the mean\\)`,
      ),
    );
  });
  it('hints how to narrow a run that could not see 20%', () => {
    const c = (detectable: number) => ({ baseline: 10_000, detectable, diff: 100 }) as never;
    const line = foundLine('inline', [
      { label: 'inline', marker: 'baseline' },
      { label: 'tasklet', marker: '~', comparison: c(3_500) },
      { label: 'timer', marker: '~', comparison: c(2_600) },
    ]);
    expect(line).toBe(
      'found: no strategy differed from inline beyond the noise (each could have seen a difference of 26%–35% of the mean); a difference under 35% could not be seen here: more --trials, a longer --duration or a quieter host narrow it',
    );
  });
  it("writes a better strategy's share with the table's minus, and never rounds it to all of the mean", () => {
    const c = (diff: number) => ({ baseline: 10_000, diff, ciLow: diff - 10, ciHigh: diff + 10 }) as never;
    const line = foundLine('inline', [
      { label: 'inline', marker: 'baseline' },
      { label: 'a', marker: 'better', comparison: c(-9_960) },
      { label: 'b', marker: 'better', comparison: c(-1_200) },
    ]);
    expect(line).toBe('found: better than inline: a (-9.96 µs, -99.6%), b (-1.20 µs, -12%)');
  });
  it("points at every tail interval where they are: --wide's own table, or --wide", () => {
    const r = syntheticResults({ seed: 4, samples: 400, trials: 6 });
    const flat = (wide: boolean) => renderTable(r, { wide }).replace(/\s+/g, ' ');
    expect(flat(true)).toContain('every tail interval: the table above, results.json');
    expect(flat(false)).toContain('every tail interval: --wide, results.json');
  });
  it('says why every Δ is empty where the baseline recorded nothing on the stage', () => {
    const r = syntheticResults({ seed: 4, samples: 400, trials: 6 });
    const base = r.points[0].strategies.find((x) => x.label === r.baseline)!;
    base.merged.one_way!.summary.count = 0;
    expect(renderTable(r).replace(/\s+/g, ' ')).toContain(
      `Δ mean: none: the baseline "${r.baseline}" recorded no one_way in this point's measured windows, so no strategy could be compared with it on one_way`,
    );
  });
  it('says nothing where nothing was compared', () => {
    expect(foundLine('inline', [{ label: 'inline', marker: 'baseline' }])).toBeUndefined();
  });
  it('names the tail differences called, which the Δ mean alone does not show', () => {
    const r = syntheticResults({ seed: 4, samples: 400, trials: 6 });
    const s = r.points[0].strategies.find((x) => x.label !== r.baseline)!;
    const tail = s.comparison?.find((c) => c.metric === 'p99_9' && c.stage === 'one_way');
    expect(tail, 'the synthetic run compares p99.9').toBeDefined();
    Object.assign(tail!, { verdict: 'improvement', diff: -100, ciLow: -150, ciHigh: -50 });
    expect(foundOf(r)).toMatch(
      new RegExp(`; in the tails: ([^;]*, )?${s.label.replace(/[()]/g, '\\$&')} p99\\.9 better`),
    );
  });
  it('calls a strategy the same as the baseline where its whole interval lies inside the --threshold band', () => {
    // An A/A copy measured closely: [−1.5%, +1.2%] inside ±2%; another only within noise.
    const c = (ciLow: number, ciHigh: number) =>
      ({ baseline: 10_000, threshold: 200, ciLow, ciHigh, detectable: 400, diff: (ciLow + ciHigh) / 2 }) as never;
    const line = foundLine('workqueue', [
      { label: 'workqueue', marker: 'baseline' },
      { label: 'wqcopy.js', marker: '~', comparison: c(-150, 120) },
      { label: 'tasklet', marker: '~', comparison: c(-350, 300) },
    ]);
    expect(line).toBe(
      'found: the same as workqueue in the mean within ±2.0%: wqcopy.js (its interval lies wholly inside the --threshold band); within noise: tasklet (each could have seen a difference of 4.0% of the mean)',
    );
    // No band (--threshold 0), or an interval reaching past it: never "the same".
    const noBand = { baseline: 10_000, threshold: 0, ciLow: -1, ciHigh: 1, detectable: 400, diff: 0 } as never;
    for (const comparison of [noBand, c(-150, 250)])
      expect(
        foundLine('workqueue', [
          { label: 'workqueue', marker: 'baseline' },
          { label: 'wqcopy.js', marker: '~', comparison },
        ]),
      ).toMatch(/^found: no strategy differed from workqueue beyond the noise/);
  });
});
