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
 * fixed, see docs/scenarios.md), and another in the workqueue's unbound kick (it waited for any
 * awake worker of the pool, as a bound pool does, where the kernel's unbound workers are never
 * counted in nr_running: fixed, test/kernel/workqueue.test.ts). Should either happen again, or
 * should a loaded host leave a window that judges nothing, the combination runs again with
 * another seed (ATTEMPTS in all).
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

/** Attempts at a combination before its cpu-hog checks fail (see the test). */
const ATTEMPTS = 3;

/**
 * The watchdog for cpu-hog here: 20 s, not the 4 s of 4 CPUs' default. On 2 cores loaded to 8–9
 * by the rest of the suite, a CPU thread that collects garbage waits for V8's helpers (cpu-hog's
 * preset idles them, and the machine raises them to nice 10 once one starves: docs/twin.md, "The
 * collector waits on them"), which then get ~1% of a core: CI saw the HZ 1000, 4-CPU case stopped
 * at 4.0 s "in the callback of work fast_pool_mix/0" with the helpers raised after 0.3 s (twice on
 * 2026-12-07). This test asks which way the verdicts point, not how long a starved host stalls;
 * a real hang still ends it, 20 s in.
 */
const HOG_WATCHDOG_MS = 20_000;

/**
 * cpu-hog at the tiny size: 1000 requests/s so that a 100 ms window times enough of them, and
 * the host's run delay over a stall counted as steal (--host-steal), not as the running task's
 * time: on a loaded host the nice -20 hog was otherwise charged for the time its CPU's thread
 * waited for a host core, fell behind the kworker in virtual time and let it run at once.
 */
const HOG_FLAGS = { irq: { rate: 1000 }, hostSteal: true, watchdogMs: HOG_WATCHDOG_MS };

/**
 * What one cpu-hog attempt must show, as the failed checks' descriptions (none: it judged as
 * expected). Counts and verdicts, never a timing.
 */
function hogChecks(boundVerdict: string[], bound: Requests, unbound: Requests): string[] {
  const failed: string[] = [];
  // One trial, one boot: the verdict has no interval (it is judged against the unbound worker and
  // the A/A control over rounds and boots), so its direction is read from the counts: the hog held
  // some bound request past 1 ms, or left the window's requests unserved.
  if (boundVerdict.length !== 1) failed.push(`bound kworker delayed: ${boundVerdict.join() || 'no verdict'}`);
  if (bound.slow === 0 && !(bound.timed === 0 && bound.interrupts > 0))
    failed.push(`bound kworker delayed: no request over 1 ms of ${bound.timed} timed`);
  if (bound.interrupts === 0) failed.push('no interrupt reached the bound window');
  if (unbound.interrupts === 0) failed.push('no interrupt reached the unbound window');
  if (stranded(unbound)) failed.push(`the unbound worker was stranded (${unbound.started} runs)`);
  // Requests that found the work pending are timed too: more requests than runs.
  if (bound.started > 0 && bound.timed <= bound.started)
    failed.push(`bound: ${bound.timed} requests timed for ${bound.started} runs`);
  // The unbound worker served its requests off the hog's CPU: most of its runs were remote
  // mixes (run on another CPU than the one that queued them), a count, not a timing.
  if (unbound.started === 0 || unbound.remote * 2 <= unbound.started)
    failed.push(`unbound: ${unbound.remote} of ${unbound.started} runs remote`);
  return failed;
}

describe('verdict directions across HZ and CPU counts (tiny size)', () => {
  it.each(COMBINATIONS)('HZ $hz, $cpus CPUs', { timeout: 240_000 }, async ({ hz, cpus }) => {
    const dir = join(tmp, `hz${hz}-cpus${cpus}`);
    // A 100 ms window can judge nothing, and then the combination runs again with another seed
    // (at most ATTEMPTS in all; every attempt's output is printed if none judges): a host loaded
    // far beyond its cores held CPU 0's owner off for the whole window (no interrupt reached
    // CPU 0: CI once saw the unbound window's 100 ms lost to host stalls and GC); the unbound
    // worker was stranded on the hog's CPU (see the header); or, at a host load of 11 on 2
    // cores, the CPU threads waited for a host core 80% of the time and the bound kworker's
    // waits in one window stayed under a millisecond (2 of 5 runs before --host-steal below). A
    // defect that turns a direction around fails every attempt.
    const variant = 'cpu-hog-nice-20';
    const attempts: string[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const hog = run('cpu-hog', { ...HOG_FLAGS, hz, cpus, outDir: dir, seed: 7 + attempt });
      expect(await runCpuHog(hog.ctx, [variant]), hog.out()).toBe(0);
      const p = (await readResults(join(dir, variant))).points[0];
      const bound = requests(strategy(p, 'workqueue(wq=system)'));
      const unbound = requests(strategy(p, 'unbound(scope=system)'));
      const failed = hogChecks(outcomes(hog.out(), 'bound kworker delayed'), bound, unbound);
      if (!failed.length) break;
      attempts.push(`attempt ${attempt + 1}: ${failed.join('; ')}\n${hog.out()}`);
      console.log(`HZ ${hz}, ${cpus} CPUs, attempt ${attempt + 1} judged nothing: ${failed.join('; ')}`);
      if (attempt === ATTEMPTS - 1) expect.fail(`no attempt judged as expected:\n${attempts.join('\n')}`);
    }

    if (!ENTROPY_AT.some((e) => e.hz === hz && e.cpus === cpus)) return;
    // Trigger 64 (the bisected backport's): 16 times the mixes of 1024, so that one 100 ms trial
    // counts enough of inline's for the starving verdicts' exact test (entropy.ts, fewerEventsP)
    // to tell a strategy that credits none from chance.
    // Retried as cpu-hog is (at a host load of 12 on 2 cores, inline's whole 100 ms window once
    // saw no interrupt: 'inconclusive, inline credited no entropy').
    const compared = ['inline', 'timer:deferrable=true', 'irq_work:target=next'];
    const starving = ['timer(deferrable=true)', 'irq_work(target=next)'];
    const tries: string[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entropy = run('entropy', { hz, cpus, fastPool: { trigger: 64 }, seed: 7 + attempt });
      expect(await runEntropy(entropy.ctx, [20000], [], compared), entropy.out()).toBe(0);
      const got = starving.map((st) => outcomes(entropy.out(), `${st} at 20000/s delivers less entropy`).join());
      if (got.every((o) => o === 'reproduced')) break;
      tries.push(`attempt ${attempt + 1}: ${got.join(', ')}\n${entropy.out()}`);
      console.log(`HZ ${hz}, ${cpus} CPUs, entropy attempt ${attempt + 1}: ${got.join(', ')}`);
      if (attempt === ATTEMPTS - 1) expect.fail(`entropy: no attempt judged as expected:\n${tries.join('\n')}`);
    }
  });
});
