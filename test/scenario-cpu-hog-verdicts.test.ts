/**
 * cpu-hog's bound verdict judged against the A/A control with an interval (the bound side's share
 * of requests not served within 1 ms over the unbound worker's, rounds paired on each boot, boots
 * joined), the FIFO variant's trials of at least one RT period, and the setup line's trial count
 * agreeing with the boots note. Pure functions fed synthetic trials: no machine, no timing.
 */
import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../src/config/schema.js';
import { setupLine } from '../src/report/run/setup-line.js';
import type { RunResults } from '../src/report/types.js';
import { bootsNote, ms as msText, tableView } from '../src/scenarios/common.js';
import {
  boundVerdict,
  type DelayShares,
  delayEffect,
  delayed,
  delayShare,
  type Requests,
  type TrialRequests,
  variantConfig,
} from '../src/scenarios/cpu-hog.js';

const ms = 1e6;

/** One trial of one strategy: round `index` on `boot`, `timed` of `interrupts` served, `slow` of them over 1 ms. */
const trial = (index: number, boot: number, interrupts: number, timed: number, slow: number): TrialRequests => ({
  index,
  boot,
  interrupts,
  timed,
  slow,
  untimed: 0,
});

/** Two boots of two rounds each, 60 requests a trial, all served; `slow[i]` over 1 ms in round i. */
const served = (slow: readonly number[]) => slow.map((s, i) => trial(i, i < 2 ? 0 : 1, 60, 60, s));

/** The pooled summary a verdict prints beside its effect (waits, counts). */
const summary = (interrupts: number, timed: number, slow: number, max: number): Requests => ({
  interrupts,
  timed,
  slow,
  untimed: 0,
  started: timed,
  p50: 50_000,
  p99: max / 2,
  max,
});

function judge(bound: TrialRequests[], control: TrialRequests[] | undefined, unbound: TrialRequests[]) {
  const shares: DelayShares = {
    bound: delayShare(bound),
    ...(control ? { control: delayShare(control) } : {}),
    unbound: delayShare(unbound),
  };
  const b = bound.reduce((a, t) => ({ i: a.i + t.interrupts, n: a.n + t.timed, s: a.s + t.slow }), {
    i: 0,
    n: 0,
    s: 0,
  });
  return boundVerdict(
    'cpu-hog-nice-20',
    summary(b.i, b.n, b.s, 3 * ms),
    delayEffect(control ?? bound, unbound),
    shares,
    'try --trials 10',
  );
}

describe('the delay share of a trial', () => {
  it('counts requests still waiting at the window end as delayed: a starved trial is all delayed, not missing', () => {
    expect(delayed(trial(0, 0, 60, 0, 0))).toEqual({ n: 60, share: 1 });
    // 40 served (10 of them slow), 20 still waiting: 30 of 60 not served within 1 ms.
    expect(delayed(trial(0, 0, 60, 40, 10))).toEqual({ n: 60, share: 0.5 });
    // A backlog from the warm-up served in the window: more timed than requested, none waiting.
    expect(delayed(trial(0, 0, 60, 110, 100))).toEqual({ n: 110, share: 100 / 110 });
    expect(delayed(trial(0, 0, 0, 0, 0)).share).toBeNaN();
  });
});

describe('cpu-hog: bound kworker delayed by milliseconds, judged against the A/A control', () => {
  it("the probe's nice -20 run: bound 1.2%, control 0.9%, unbound 19.9% is not reproduced (the old rule said so on one slow request)", () => {
    const v = judge(served([1, 1, 0, 1]), served([1, 0, 1, 0]), served([11, 13, 12, 12]));
    expect(v.outcome).not.toBe('reproduced');
    // The unbound worker's requests were decisively the slower: the opposite of the seed's contrast.
    expect(v.outcome).toBe('contradicted');
    expect(v.detail).toMatch(/^bound side over unbound -19\.2 pp \[-\d+\.\d pp, -\d+\.\d pp\] \(95% CI; /);
    expect(v.detail).toContain('bound 1.3%, A/A control 0.8%, unbound 20.0%');
    expect(v.detail).toContain('the interval excludes 0 on the other side');
  });

  it('inside the noise: a difference the rounds scatter around is inconclusive, and says so', () => {
    const v = judge(served([20, 6, 25, 8]), served([30, 5, 28, 6]), served([20, 18, 8, 25]));
    expect(v.outcome).toBe('inconclusive');
    expect(v.detail).toMatch(/the interval reaches 0: inside the noise \(try --trials 10\)/);
  });

  it('beyond the noise: most bound requests delayed, few unbound ones: reproduced, with its interval', () => {
    const v = judge(served([55, 50, 57, 52]), served([54, 52, 56, 50]), served([3, 2, 4, 1]));
    expect(v.outcome).toBe('reproduced');
    expect(v.detail).toMatch(
      /^bound side over unbound \+84\.2 pp \[\+\d+\.\d pp, \+\d+\.\d pp\] \(95% CI; \(bound − unbound\) − \(bound − A\/A control\)/,
    );
    expect(v.detail).toContain('the interval excludes 0: beyond the noise');
  });

  it('a starved bound kworker (and copy) against a prompt unbound worker: reproduced through the interval', () => {
    const starved = [0, 1, 2, 3].map((i) => trial(i, i < 2 ? 0 : 1, 60, 0, 0));
    const v = judge(starved, starved, served([2, 1, 3, 2]));
    expect(v.outcome).toBe('reproduced');
  });

  it('without a control the bound kworker itself is the reference, and the line says so', () => {
    const v = judge(served([55, 50, 57, 52]), undefined, served([3, 2, 4, 1]));
    expect(v.outcome).toBe('reproduced');
    expect(v.detail).toContain('bound − unbound (no A/A control: --no-control)');
    expect(v.detail).not.toContain('A/A control 0');
  });

  it('one round a boot gives no interval: inconclusive, however slow the bound requests', () => {
    const one = (s: number, boot: number) => trial(0, boot, 60, 60, s);
    const v = judge([one(60, 0)], [one(60, 0)], [one(0, 0)]);
    expect(v.outcome).toBe('inconclusive');
    expect(v.detail).toMatch(/no interval for the bound side's excess/);
  });
});

describe('cpu-hog-fifo: trials of at least one RT period', () => {
  const config = { trialMs: 300 } as ResolvedConfig;
  it('raises a FIFO trial shorter than the 1 s RT period to it, and leaves the rest alone', () => {
    expect(variantConfig(config, 'fifo').trialMs).toBe(1000);
    expect(variantConfig(config, 'normal').trialMs).toBe(300);
    expect(variantConfig({ trialMs: 2000 } as ResolvedConfig, 'fifo').trialMs).toBe(2000);
  });
});

describe('the setup line and the boots note agree', () => {
  it('--trials 2 on 2 boots: 4 trials per strategy in both', () => {
    const trials = [0, 1, 2, 3].map((index) => ({ index, boot: index < 2 ? 0 : 1, stages: {}, counters: {} }));
    const run = {
      meta: { options: { trials: 2, trialMs: 300, warmupMs: 300 } },
      points: [
        {
          params: {},
          strategies: [
            { label: 'a', trials },
            { label: 'b', trials },
          ],
        },
      ],
    } as unknown as RunResults;
    expect(setupLine(tableView(run, 2))).toBe('4 trials of 300 ms (+ 300 ms warm-up) per strategy, interleaved');
    expect(bootsNote(run)).toMatch(
      /^each point ran on 2 machine boots: 4 trials per strategy at the first point \(2 \+ 2\), 2 on each boot, all counted in the setup line;/,
    );
    // The written results keep the user's --trials; one boot changes nothing.
    expect((run.meta.options as { trials: number }).trials).toBe(2);
    expect(tableView(run, 1)).toBe(run);
    // --trials 5 on 2 boots runs 3 a boot: 6 in all.
    const five = { ...run, meta: { options: { trials: 5, trialMs: 300 } } } as unknown as RunResults;
    expect(setupLine(tableView(five, 2))).toMatch(/^6 trials of 300 ms per strategy/);
  });
});

describe('the scenarios’ ms figures', () => {
  it('never round a wait under 1 ms up to 1.00 ms (the share over 1 ms beside it counts it under)', () => {
    expect(msText(998_900)).toBe('0.998 ms');
    expect(msText(994_000)).toBe('0.99 ms');
    expect(msText(1_000_000)).toBe('1.00 ms');
    expect(msText(1_004_000)).toBe('1.00 ms');
    expect(msText(Number.NaN)).toBe('n/a');
  });
});
