/**
 * Issue 15, item 6: the scenarios' verdicts point the same way at HZ 100, 250 and 1000 and on
 * 2, 3 and 4 CPUs. Each combination runs cpu-hog (and entropy at three of them) at a tiny size
 * and checks each verdict's direction from the numbers it read, never a timing.
 *
 * A reduced design, to keep the suite's wall time small on a 2-core host (each combination boots
 * two or three machines): a Latin square, HZ 100 on 3 CPUs, HZ 250 on 2 and HZ 1000 on 4 — every
 * HZ and every CPU count once, not every pair. cpu-hog's nice -20 variant runs at each (EEVDF's
 * slices end at ticks: HZ matters to it); entropy at the two extremes (HZ 100 on 3 CPUs, HZ 1000
 * on 4). cpu-hog's SCHED_FIFO variant is not here: RT throttling is per second, not per
 * tick, so in a 100 ms window its bound kworker is simply starved, whatever HZ.
 *
 * A defect of the emulation showed at this size in about one cpu-hog sub-run in eight: the
 * unbound worker stranded on the hog's CPU (placeUnbound compared nr_running, not weighted load:
 * fixed, see docs/scenarios.md). Should it happen again, the combination runs again with another
 * seed (at most twice more); stranded three times in a row fails.
 *
 *   - cpu-hog reads every request's wait until its work ran (request_to_start, pending requests
 *     too). The hog holds CPU 0 for milliseconds at every HZ, so the bound kworker's verdict is
 *     `reproduced`; the unbound worker runs on another CPU: most of its runs are remote (a count).
 *     How long the unbound worker's requests wait is not asserted: that is a timing, and on a
 *     busy host its wake-up is a halted CPU thread's, woken by the host in milliseconds (seen: 74%
 *     of its requests over 1 ms on 4 CPUs sharing 2 loaded cores, where the bound kworker, woken
 *     on the running CPU 0 thread, had 40%); the scenario's verdict prints it. The rate is
 *     1000/s here (200/s by default) so that 100 ms trials time enough requests; idle CPUs halt,
 *     as the scenario's preset says (see cpu-hog.ts).
 *   - entropy reads counters: timer:deferrable=true never wakes an idle CPU (NOHZ), and
 *     irq_work:target=next mixes on the wrong CPU, which random.c refuses: both fall short of
 *     inline at every HZ and CPU count (at trigger 64, so that a 100 ms trial mixes often enough
 *     for the verdict's test of counts).
 *   - ipi-storm is not here: at this size (one 100 ms trial per policy) its IPIs per item pointed
 *     either way on a loaded host (1.9x and 7.2x *more* with if-idle at a load of 16: the
 *     consumer's thread descheduled, not the policy), and its verdicts are intervals over trials,
 *     which decide nothing with one trial. scenarios.test.ts runs it end to end.
 * Control and --until are off: they decide how sure a verdict is, not which way it points.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/schema.js';
import { readResults } from '../src/report/run/write.js';
import { strategy } from '../src/scenarios/common.js';
import { type Requests, requests, runCpuHog } from '../src/scenarios/cpu-hog.js';
import { runEntropy } from '../src/scenarios/entropy.js';
import { SCENARIOS } from '../src/scenarios/index.js';
import { fakeIo } from './fixtures/cli-io.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-directions-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** HZ × CPUs as a Latin square: every HZ once and every CPU count once (three machines, not nine). */
const COMBINATIONS = [
  { hz: 100, cpus: 3 },
  { hz: 250, cpus: 2 },
  { hz: 1000, cpus: 4 },
] as const;
/** entropy's verdicts read counters: at two of them (the HZ and CPU-count extremes). */
const ENTROPY_AT = [
  { hz: 100, cpus: 3 },
  { hz: 1000, cpus: 4 },
];

function run(name: string, flags: Record<string, unknown>) {
  const { io, stdout } = fakeIo();
  const config = resolveConfig({
    preset: { name, config: SCENARIOS[name].config },
    flags: {
      trials: 1,
      trialMs: 100,
      warmupMs: 50,
      seed: 7,
      control: false,
      until: null,
      outDir: null,
      ...flags,
    } as never,
    cwd: process.cwd(),
  });
  // One boot a point (scenarios run 2 by default): the directions do not depend on it, the wall time does.
  return { ctx: { config, io, signal: new AbortController().signal, argv: ['scenario', name], boots: 1 }, out: stdout };
}

/** `VERDICT <expectation>: <outcome> — ...` lines whose expectation includes `key`. */
function outcomes(text: string, key: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('VERDICT ') && l.includes(key))
    .map((l) => /: (reproduced|not reproduced|inconclusive) — /.exec(l)?.[1] ?? l);
}

/** The unbound worker ran at most 3 times for 20 or more requests: stranded on the hog's CPU. */
const stranded = (q: Requests) => q.interrupts >= 20 && q.started <= 3;

describe('verdict directions across HZ and CPU counts (tiny size)', () => {
  it.each(COMBINATIONS)('HZ $hz, $cpus CPUs', async ({ hz, cpus }) => {
    const dir = join(tmp, `hz${hz}-cpus${cpus}`);
    // Two things make a 100 ms window judge nothing, and then the combination runs again with
    // another seed (at most twice more): a host loaded far beyond its cores held CPU 0's owner
    // off for the whole window (no interrupt reached CPU 0, in either strategy's window: CI once
    // saw the unbound one's 100 ms lost to host stalls and GC), or the unbound worker was stranded
    // on the hog's CPU (it ran at most 3 times for 20 or more requests: see the header).
    const variant = 'cpu-hog-nice-20';
    let hog = run('cpu-hog', { hz, cpus, irq: { rate: 1000 }, outDir: dir });
    let bound = requests(undefined);
    let unbound = requests(undefined);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt > 0) hog = run('cpu-hog', { hz, cpus, irq: { rate: 1000 }, outDir: dir, seed: 7 + attempt });
      expect(await runCpuHog(hog.ctx, [variant]), hog.out()).toBe(0);
      const p = (await readResults(join(dir, variant))).points[0];
      bound = requests(strategy(p, 'workqueue(wq=system)'));
      unbound = requests(strategy(p, 'unbound(scope=system)'));
      if (bound.interrupts > 0 && unbound.interrupts > 0 && !stranded(unbound)) break;
    }
    expect(outcomes(hog.out(), 'bound kworker delayed'), hog.out()).toEqual(['reproduced']);
    expect(bound.interrupts, hog.out()).toBeGreaterThan(0);
    expect(
      unbound.interrupts,
      `no interrupt reached the unbound window three times in a row\n${hog.out()}`,
    ).toBeGreaterThan(0);
    expect(stranded(unbound), `the unbound worker was stranded three times in a row\n${hog.out()}`).toBe(false);
    // Requests that found the work pending are timed too: more requests than runs.
    if (bound.started > 0) expect(bound.timed, hog.out()).toBeGreaterThan(bound.started);
    // The unbound worker served its requests off the hog's CPU: most of its runs were remote
    // mixes (run on another CPU than the one that queued them), a count, not a timing.
    expect(unbound.remote * 2, hog.out()).toBeGreaterThan(unbound.started);
    expect(unbound.started, hog.out()).toBeGreaterThan(0);

    if (!ENTROPY_AT.some((e) => e.hz === hz && e.cpus === cpus)) return;
    // Trigger 64 (the bisected backport's): 16 times the mixes of 1024, so that one 100 ms trial
    // counts enough of inline's for the starving verdicts' exact test (entropy.ts, fewerEventsP)
    // to tell a strategy that credits none from chance.
    const entropy = run('entropy', { hz, cpus, fastPool: { trigger: 64 } });
    const compared = ['inline', 'timer:deferrable=true', 'irq_work:target=next'];
    expect(await runEntropy(entropy.ctx, [20000], [], compared), entropy.out()).toBe(0);
    for (const starving of ['timer(deferrable=true)', 'irq_work(target=next)'])
      expect(outcomes(entropy.out(), `${starving} at 20000/s delivers less entropy`), entropy.out()).toEqual([
        'reproduced',
      ]);
  });
});
