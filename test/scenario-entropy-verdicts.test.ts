/**
 * The entropy scenario's verdicts from given trial data (no machine): a point whose trials are
 * due too few mixes per CPU is inconclusive whatever the counts say; its help names the kernels
 * and strategies it runs; and a trial's time to 256 bits counts only what the trial itself
 * credited (src/harness/round.ts, on a fake machine).
 */
import { describe, expect, it } from 'vitest';
import { helpText } from '../src/cli/help.js';
import { type RoundContext, runRound } from '../src/harness/round.js';
import { Phase } from '../src/hw/layout.js';
import { KERNEL_NAMES, kernelProfile } from '../src/kernel/profiles.js';
import type { Machine } from '../src/machine/machine.js';
import type { RunResults, StrategyResult } from '../src/report/types.js';
import {
  ENTROPY_STRATEGIES,
  entropyKernels,
  judgeEntropy,
  MIN_MIXES_DUE_PER_CPU_TRIAL,
  mixesDuePerCpuTrial,
  tooFewMixesDue,
} from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';

const MS = 1e6;

/** A strategy's result over `trials` trials of `trialMs`: `mixes` credited in all, `bits` per second. */
function strat(label: string, mixes: number, bits: number, trials = 4, trialMs = 300): StrategyResult {
  return {
    label,
    trials: Array.from({ length: trials }, (_, i) => ({ index: i, durationNs: trialMs * MS, counters: {} })),
    counters: { mixes, mixes_remote: 0, time_to_256_bits_ns: Number.NaN },
    rates: { mixes: mixes / ((trials * trialMs) / 1000), entropy_bits: bits },
  } as unknown as StrategyResult;
}

/** A run of one point at `rate` interrupts/s per CPU: inline and the candidates, no control. */
function run(rate: number, strategies: StrategyResult[]): RunResults {
  return {
    baseline: 'inline',
    points: [{ params: { irq_rate: rate }, strategies }],
  } as unknown as RunResults;
}

describe('entropy: mixes due per CPU per trial', () => {
  it('the trigger or the one-second timer, whichever comes first', () => {
    // The probe: 600 interrupts per CPU against a trigger of 1024.
    expect(mixesDuePerCpuTrial(2000, 300 * MS, 1024)).toBeCloseTo(0.5859, 4);
    expect(mixesDuePerCpuTrial(20000, 300 * MS, 1024)).toBeCloseTo(5.859, 3);
    // 200/s never reaches 1024 in a second: the timer mixes once a second.
    expect(mixesDuePerCpuTrial(200, 1000 * MS, 1024)).toBe(1);
    // Never more often than the interrupts come.
    expect(mixesDuePerCpuTrial(0.5, 4000 * MS, 1024)).toBe(2);
    expect(MIN_MIXES_DUE_PER_CPU_TRIAL).toBe(2);
    expect(tooFewMixesDue(2000, 300 * MS, 1024)).toBe(true);
    expect(tooFewMixesDue(2000, 1100 * MS, 1024)).toBe(false);
    expect(tooFewMixesDue(20000, 300 * MS, 1024)).toBe(false);
  });
});

describe('entropy verdicts from given counts', () => {
  it("the probe's case: 0 mixes against inline's 8 at 600 interrupts a trial is inconclusive, and says how to decide", () => {
    const r = run(2000, [strat('inline', 8, 91), strat('bh_workqueue', 0, 0), strat('tasklet', 2, 25)]);
    const { verdicts } = judgeEntropy(r, ' (kernel 6.9)', 1024);
    const bh = verdicts.find((v) => v.expectation.startsWith('bh_workqueue'));
    // The binomial test alone calls it (p 0.004): the phase of the pool's count, not the strategy.
    expect(bh?.outcome).toBe('inconclusive');
    expect(bh?.detail).toContain('too few interrupts to tell: 600 per CPU');
    expect(bh?.detail).toMatch(/for a verdict, --duration \d+ms or more, or --sweep irq_rate:\S+ or higher$/);
    expect(verdicts.every((v) => v.outcome === 'inconclusive')).toBe(true);
  });

  it('a rate at which inline credited nothing gets a verdict saying so, beside the other rates', () => {
    const r = {
      baseline: 'inline',
      points: [
        { params: { irq_rate: 2000 }, strategies: [strat('inline', 0, 0), strat('tasklet', 1, 12)] },
        { params: { irq_rate: 20000 }, strategies: [strat('inline', 80, 910), strat('tasklet', 78, 900)] },
      ],
    } as unknown as RunResults;
    const { verdicts } = judgeEntropy(r, ' (kernel 6.9)', 1024);
    const at2k = verdicts.find((v) => v.expectation.startsWith('a strategy at 2000/s'));
    expect(at2k?.outcome).toBe('inconclusive');
    expect(at2k?.detail).toMatch(
      /^inline credited no entropy at this rate in its trials, .*too few interrupts to tell/,
    );
    // The run's own verdict stands beside it, on the rate that could be judged.
    expect(verdicts[0]).toMatchObject({ outcome: 'not reproduced' });
    expect(verdicts[0].detail).toContain('judged at the 1 of 2 rates');
  });

  it('the duration and the rate it suggests are each enough for a verdict', () => {
    const { verdicts } = judgeEntropy(run(2000, [strat('inline', 8, 91), strat('timer', 0, 0)]), '', 1024);
    const m = /--duration (\d+)ms or more, or --sweep irq_rate:(\d+) or higher/.exec(verdicts[0].detail);
    expect(m).not.toBeNull();
    expect(tooFewMixesDue(2000, Number(m![1]) * MS, 1024)).toBe(false);
    expect(tooFewMixesDue(Number(m![2]), 300 * MS, 1024)).toBe(false);
    expect(tooFewMixesDue(2000, (Number(m![1]) - 2) * MS, 1024)).toBe(true);
  });

  it('enough interrupts a trial: the same counts are called', () => {
    const r = run(20000, [strat('inline', 48, 639), strat('timer(deferrable=true)', 0, 0)]);
    const { verdicts } = judgeEntropy(r, '', 1024);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0].outcome).toBe('reproduced');
    expect(verdicts[0].detail).not.toContain('too few interrupts');
  });

  it('the shorter side decides: a candidate whose trials were cut short is not judged on them', () => {
    const r = run(20000, [strat('inline', 48, 639), strat('timer', 0, 0, 4, 50)]);
    expect(judgeEntropy(r, '', 1024).verdicts[0].outcome).toBe('inconclusive');
  });

  it('no shortfall at a rate too low to tell is not "not reproduced"', () => {
    const low = judgeEntropy(run(2000, [strat('inline', 8, 91), strat('workqueue', 8, 89)]), '', 1024);
    expect(low.verdicts).toHaveLength(1);
    expect(low.verdicts[0].outcome).toBe('inconclusive');
    expect(low.verdicts[0].detail).toContain('too few interrupts to tell');
    const high = judgeEntropy(run(20000, [strat('inline', 48, 639), strat('workqueue', 47, 630)]), '', 1024);
    expect(high.verdicts[0].outcome).toBe('not reproduced');
  });

  it('the table prints n/a for a time to 256 bits that was not reached, one row per strategy', () => {
    const { table } = judgeEntropy(run(20000, [strat('inline', 48, 639), strat('timer', 0, 0)]), '', 1024);
    const rows = table.split('\n').filter((l) => /^\s+20000 /.test(l));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/\bn\/a\b/);
  });
});

describe('entropy --help: the kernels and strategies it runs', () => {
  const help = helpText('scenario', SCENARIOS, 'entropy').replace(/\s+/g, ' ');

  it('names the kernel --kernel replaces and the one it runs beside it, as runEntropy runs them', () => {
    expect(help).toContain(
      'a sub-run on kernel 5.15 (--kernel replaces it), then one on 6.1 (not twice when --kernel names it)',
    );
    expect(entropyKernels('5.15')).toEqual(['5.15', '6.1']);
    expect(entropyKernels('6.9')).toEqual(['6.9', '6.1']);
    expect(entropyKernels('6.1')).toEqual(['6.1']);
  });

  it("states each kernel's strategy count: bh_workqueue only where WQ_BH exists", () => {
    const stated = /strategies against inline per kernel: (.*)$/.exec(help)?.[1] ?? '';
    for (const k of KERNEL_NAMES) {
      const n = ENTROPY_STRATEGIES.filter((s) => s !== 'bh_workqueue' || kernelProfile(k).wqBh).length;
      expect(stated, `--kernel ${k}`).toMatch(
        new RegExp(`(^|, )${n}( \\([^)]*\\))? for ([\\d.]+(, | and ))*${k.replace('.', '\\.')}\\b`),
      );
    }
  });
});

describe('time to 256 bits (src/harness/round.ts)', () => {
  /**
   * One whole trial on a fake machine whose input pool reaches 256 bits `when`: in the measured
   * window, in the drain after it (the deferred work still pending runs there), or never.
   */
  async function readyNs(when: 'window' | 'drain' | 'never'): Promise<number> {
    let now = 0;
    let phase = Phase.Pause;
    let readyAt = -1;
    const m = {
      setActiveStrategy() {},
      resetEntropy() {
        readyAt = -1;
      },
      setFastPoolCounts() {},
      fastPoolCounts: () => [0, 0],
      nowNs: () => now,
      setPhase(p: Phase) {
        phase = p;
      },
      countersWithHost: () => ({ entropy_bits: 0 }),
      counters: () => ({ entropy_bits: 0 }),
      inputPoolReadyAtNs: () => readyAt,
    } as unknown as Machine;
    const result = { label: 'timer(deferrable=true)', trials: [] } as unknown as StrategyResult;
    const ctx: RoundContext = {
      m,
      accs: [{ result, merged: {} }],
      trialMs: 300,
      warmupMs: 200,
      slices: 1,
      trigger: 1024,
      warmupTrigger: 64,
      firstWarmupMs: 0,
      warmupPassMs: 0,
      async guard(ms) {
        now += ms * MS;
        if (when === 'window' && phase === Phase.Measure) readyAt = now - 10 * MS;
      },
      async endSlice() {
        now += 5 * MS; // the drain
        if (when === 'drain') readyAt = now;
        return {};
      },
      say() {},
      setActive() {},
    };
    await runRound(ctx, 1, [[0]], 0, () => '');
    return result.trials[0].counters.time_to_256_bits_ns;
  }

  it('counts a readiness reached in the measured window (from the warm-up start), not one reached in the drain after it', async () => {
    expect(await readyNs('window')).toBe(490 * MS);
    // The probe's deferrable timer: mixes queued in the warm-up ran in the drain (505 ms).
    expect(await readyNs('drain')).toBeNaN();
    expect(await readyNs('never')).toBeNaN();
  });
});
