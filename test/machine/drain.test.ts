/**
 * The drain's promise: when Machine.drain() says the machine is quiet, every accepted hand-off
 * has run and every queued work item has run, and nothing new arrives afterwards. Checked over
 * many short measuring windows with frequent hand-offs (trigger 8), interrupts from the irq
 * thread and tcp_lat messages on both CPUs, on a workqueue and on a tasklet: a raise, a send or
 * an interrupt being handled when the phase flips must still be waited for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tcpLatOptions } from '../../src/config/defaults.js';
import { builtin, Machine, options, Phase, runUntil, sleep } from './helpers.js';

let m: Machine | undefined;
afterEach(async () => {
  await m?.stop();
  m = undefined;
});

const ROUNDS = 60;

describe('drain', () => {
  it.each(['workqueue', 'tasklet'])(
    'leaves nothing behind after %s hand-offs, round after round',
    async (name) => {
      m = await Machine.boot(
        options({
          irq: { rate: 50_000, pattern: 'poisson', burstSize: 8, cpus: [0, 1] },
          workload: tcpLatOptions({ ringBytes: 1 << 16 }),
          strategies: [builtin(name)],
        }),
      );
      m.setActiveStrategy(0);
      const machine = m;
      const late: string[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        // Every round hands off (a count), then flips a little later each time (vary where in
        // the stream the phase flips: the extra wait only moves the flip, it decides nothing).
        const from = m.counters().handoffs;
        await runUntil(m, `round ${r}: a hand-off`, () => machine.counters().handoffs > from);
        await sleep(r % 7);
        m.setPhase(Phase.Drain);
        const busy = await m.drain(5000);
        expect(busy, `round ${r}: did not drain`).toBe('');
        const a = m.counters();
        await sleep(20); // anything still arriving now came after the drain said "quiet"
        const b = m.counters();
        for (const k of ['handoffs', 'mixes', 'works_queued', 'works_run', 'interrupts'] as const)
          if (a[k] !== b[k]) late.push(`round ${r}: ${k} ${a[k]} -> ${b[k]} after the drain`);
        if (b.handoffs !== b.mixes) late.push(`round ${r}: ${b.handoffs} hand-offs, ${b.mixes} mixes`);
        if (b.works_queued !== b.works_run) late.push(`round ${r}: ${b.works_queued} queued, ${b.works_run} run`);
        m.setPhase(Phase.Pause);
      }
      expect(late).toEqual([]);
    },
    120_000,
  );
});
