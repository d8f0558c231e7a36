/**
 * A sliced run on real threads (src/harness/round.ts): every trial is the sum of its slices, each
 * slice cycle has its own order, the Δ mean pairs slices, and an interrupt keeps the complete
 * cycles of the round under way.
 *
 * On a busy host (load 10-15 on two cores) a 50 ms slice sometimes recorded no one-way sample at
 * all (the machine's threads got no core for it): the slices are 200 ms here, and a slice that
 * recorded nothing is checked to say so (count 0, mean NaN) rather than assumed away.
 */

import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/schema.js';
import { runExperiment } from '../../src/harness/run.js';
import { decodeBins } from '../../src/report/statistics/slice-hist.js';
import type { RunResults } from '../../src/report/types.js';
import { NO_CALIBRATION } from '../fixtures/calibration.js';

const LABELS = ['inline', 'tasklet'];

const config = (strategies: string[] = LABELS) =>
  resolveConfig({
    flags: {
      strategies,
      trials: 2,
      trialMs: 800,
      warmupMs: 80,
      sliceMs: 200,
      seed: 7,
      outDir: null,
      until: null,
    },
    cwd: process.cwd(),
  });

const oneWaySlices = (r: RunResults, label: string) =>
  r.points[0].strategies.find((s) => s.label === label)!.trials.map((t) => t.slices?.one_way?.mean ?? []);
const oneWayCounts = (r: RunResults, label: string) =>
  r.points[0].strategies.find((s) => s.label === label)!.trials.map((t) => t.slices?.one_way?.count ?? []);

describe('a sliced run', () => {
  it('measures each trial as 4 slices of 200 ms, one balanced order per slice cycle, and pairs the Δ mean by slice', async () => {
    const r = await runExperiment(config(), { calibration: NO_CALIBRATION });
    expect(r.status).toBe('completed');
    const point = r.points[0];
    expect(point.schedule?.slices).toBe(4);
    expect(point.schedule?.rounds).toHaveLength(8);
    for (const cycle of point.schedule!.rounds) expect([...cycle].sort()).toEqual(LABELS);
    for (const s of point.strategies) {
      expect(s.trials.map((t) => t.index)).toEqual([0, 1]);
      for (const t of s.trials) {
        const slices = t.slices?.one_way;
        expect(slices?.mean).toHaveLength(4);
        expect(slices?.count).toHaveLength(4);
        // A slice's mean is that of its samples; one that recorded none says NaN.
        for (const [k, n] of slices!.count.entries()) {
          if (n > 0) expect(slices!.mean[k], `slice ${k}`).toBeGreaterThan(0);
          else expect(slices!.mean[k], `slice ${k}, no sample`).toBeNaN();
        }
        // The trial is its slices: their counts add up to its count, their pooled mean is its mean.
        const sum = t.stages.one_way!;
        expect(slices!.count.reduce((a, b) => a + b, 0)).toBe(sum.count);
        // (A slice that recorded nothing adds nothing: its mean is NaN, its count 0.)
        const pooled = slices!.mean.reduce((a, m, k) => a + (slices!.count[k] > 0 ? m * slices!.count[k] : 0), 0);
        if (sum.count > 0) expect(pooled / sum.count / sum.mean).toBeCloseTo(1, 6);
        // Each slice's binned histogram (the tails') holds exactly its samples.
        expect(slices?.hist).toHaveLength(4);
        for (const [k, h] of slices!.hist!.entries()) {
          const counts = decodeBins(h)!.counts;
          expect(
            counts.reduce((x, y) => x + y, 0),
            `slice ${k}`,
          ).toBe(slices!.count[k]);
        }
      }
      // The strategy's counters are its trials' (each the sum of its slices).
      const handoffs = s.trials.reduce((a, t) => a + t.counters.handoffs, 0);
      expect(s.counters.handoffs).toBe(handoffs);
    }
    const tasklet = point.strategies.find((s) => s.label === 'tasklet')!;
    const mean = tasklet.comparison!.find((c) => c.stage === 'one_way' && c.metric === 'mean')!;
    // A pair per slice cycle (2 trials × 4): slice k of trial r against slice k of trial r, where both recorded.
    const recorded = (label: string) => oneWayCounts(r, label).flat();
    const [a, b] = [recorded('inline'), recorded('tasklet')];
    const pairs = a.filter((n, i) => n > 0 && b[i] > 0).length;
    expect(pairs, 'slice pairs that both recorded').toBeGreaterThan(0);
    expect(mean.method).toMatch(new RegExp(`slice cycle.*n=${pairs} pairs`));
    const p99 = tasklet.comparison!.find((c) => c.stage === 'one_way' && c.metric === 'p99')!;
    // The tails take the 8 slice cycles as units (Woodruff's se on the merged histograms).
    expect(p99.method).toMatch(/Woodruff's linearisation over 8 slice cycles/);
    // At most N − 1 = 7 degrees of freedom, fewer as the cycles' kurtosis asks (tails.ts, kurtosisDf).
    expect(p99.df).toBeGreaterThanOrEqual(1);
    expect(p99.df).toBeLessThanOrEqual(7);
  }, 60_000);

  it('keeps the complete cycles of the round under way when interrupted, as shorter trials', async () => {
    const ac = new AbortController();
    const r = await runExperiment(config(), {
      calibration: NO_CALIBRATION,
      signal: ac.signal,
      // Cycle 3 of round 2 starting: cycles 1 and 2 of that round are complete.
      progress: (line) => {
        if (/^trial 2\/2: .* \(slice 3\/4\)/.test(line)) ac.abort();
      },
    });
    expect(r.status).toBe('interrupted');
    // A kept slice that recorded nothing (a loaded host gave the machine no core for 200 ms: seen
    // once with the suite and two busy loops on 2 cores) reads like a dropped one (count 0, mean
    // NaN), so what is checked is what no load can produce: the dropped cycles hold nothing,
    // and the kept ones, on each side, something.
    const kept: boolean[][] = [];
    for (const label of LABELS) {
      const [first, second] = oneWaySlices(r, label);
      expect(first, `${label}: round 1`).toHaveLength(4);
      expect(second, `${label}: round 2`).toHaveLength(4);
      expect(second.slice(2).map(Number.isFinite), `${label}: round 2's cycles 3 and 4 dropped`).toEqual([
        false,
        false,
      ]);
      expect(first.filter(Number.isFinite).length, `${label}: round 1 kept`).toBeGreaterThanOrEqual(3);
      expect(second.slice(0, 2).some(Number.isFinite), `${label}: round 2's first two cycles kept`).toBe(true);
      kept.push([...first, ...second.slice(0, 2)].map(Number.isFinite));
    }
    // The Δ mean pairs the kept cycles where both sides recorded.
    const pairs = kept[0].filter((k, i) => k && kept[1][i]).length;
    const tasklet = r.points[0].strategies.find((s) => s.label === 'tasklet')!;
    const mean = tasklet.comparison!.find((c) => c.stage === 'one_way' && c.metric === 'mean')!;
    expect(mean.method).toMatch(new RegExp(`n=${pairs} pairs`));
  }, 60_000);

  it("carries each strategy's fast pool counts over its slices: one that strands its CPUs' hand-offs does not strand the next one's", async () => {
    // irq_work:target=next mixes on the other CPU, which leaves MIX_INFLIGHT set on the CPU that
    // handed off (random.c): that CPU hands off no more until its count is reset, at a trial's start.
    const r = await runExperiment(config(['inline', 'irq_work:target=next']), { calibration: NO_CALIBRATION });
    expect(r.status).toBe('completed');
    const [inline, stranding] = r.points[0].strategies;
    const sum = (s: typeof inline, k: string) => s.trials.reduce((a, t) => a + t.counters[k], 0);
    // inline hands off once per 1024 interrupts per CPU, in every slice, and mixes on its own CPU.
    expect(sum(inline, 'handoffs')).toBeGreaterThan((0.7 * sum(inline, 'interrupts')) / 1024);
    expect(sum(inline, 'mixes_remote')).toBe(0);
    // The stranding strategy: at most once per CPU per trial, and every mix it ran was remote.
    // (Not mixes_remote = handoffs: a slice's counters are read when it ends, before the drain, so
    // a hand-off late in a slice counts there and its remote mix, run in the drain, nowhere; on a
    // busy host that happened: mixes_remote 2, handoffs 3.)
    expect(sum(stranding, 'handoffs')).toBeLessThanOrEqual(2 * stranding.trials.length);
    expect(sum(stranding, 'mixes')).toBeGreaterThan(0);
    expect(sum(stranding, 'mixes_remote')).toBe(sum(stranding, 'mixes'));
  }, 60_000);
});
