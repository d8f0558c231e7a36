/**
 * What the report says of a replayed trace (src/report/run/irq-trace-notes.ts, setup-line.ts): its
 * rate as recorded and as replayed, and when a trace played once ran out. From results alone.
 */
import { describe, expect, it } from 'vitest';
import { type IrqTraceMeta, irqTraceMeta } from '../../src/irq/replay.js';
import { parseIrqTrace } from '../../src/irq/trace-file.js';
import { irqTraceNotes } from '../../src/report/run/irq-trace-notes.js';
import { setupLine } from '../../src/report/run/setup-line.js';
import type { RunResults } from '../../src/report/types.js';

// 300 arrivals over 500 ms, host CPU 3 (200 of them) before host CPU 5: CPU 0 and CPU 1.
const CSV = Array.from({ length: 300 }, (_, i) => `${Math.round((i * 500e6) / 299)},${i % 3 === 2 ? 5 : 3},45`);
const TRACE: IrqTraceMeta = irqTraceMeta(parseIrqTrace(CSV.join('\n'), 'nic.csv', { cpus: 2 }), {
  file: 'nic.csv',
  path: '/nic.csv',
  map: null,
  loop: false,
  scale: 1,
});

/** Results of one strategy's two 1 s trials, with `replayed` arrivals in each. */
function results(trace: Partial<IrqTraceMeta>, warmupMs: number, replayed = 250): Pick<RunResults, 'meta' | 'points'> {
  const irqTrace = { ...TRACE, ...trace };
  const trial = (index: number) => ({
    index,
    order: index,
    durationNs: 1e9,
    stages: {},
    counters: { irqs_replayed: replayed, irqs_skipped: 1, irqs_dropped: 0 },
  });
  return {
    meta: {
      options: {
        workload: { kind: 'irq_only' },
        irq: {
          rate: 20000,
          pattern: 'constant',
          cpus: 'all',
          trace: { file: irqTrace.file, map: null, loop: irqTrace.loop, scale: irqTrace.scale },
        },
        trials: 2,
        trialMs: 1000,
        warmupMs,
      },
      irqTrace,
    } as unknown as RunResults['meta'],
    points: [{ params: {}, strategies: [{ trials: [trial(0), trial(1)] }] }] as unknown as RunResults['points'],
  };
}

describe('a replayed trace in the report', () => {
  it('the setup line names the trace, its map, loop and scale instead of the generator', () => {
    const line = setupLine(results({ loop: true, scale: 2 }, 300)) ?? '';
    expect(line).toContain(
      'background interrupts replayed from nic.csv (csv, 300 arrivals in 500 ms; host CPUs 3:0,5:1 by first arrival; looped; time ×2)',
    );
    expect(line).not.toContain('20k/s');
  });

  it('gives the rate as recorded (per loop period) and as replayed in the measured phases', () => {
    expect(irqTraceNotes(results({ loop: true, periodNs: 600e6 }, 300))).toEqual([
      'irq trace: 300 arrivals per 600 ms pass (500/s as recorded); replayed 250/s in the measured phases (irqs_replayed), 2 skipped late, 0 dropped',
    ]);
  });

  it('says when a trace played once ends inside the measured phase', () => {
    expect(irqTraceNotes(results({}, 300))[1]).toBe(
      "note: the irq trace ends 500 ms into each trial (it starts with the trial's warm-up), 200 ms into the 1 s measured phase: arrivals stopped for the rest; --irq-trace-loop repeats it",
    );
  });

  it('says when it ends within the warm-up: the measured phases had none of it', () => {
    expect(irqTraceNotes(results({}, 600, 0))[1]).toBe(
      "note: the irq trace ends 500 ms into each trial (it starts with the trial's warm-up), within the 600 ms warm-up: the measured phases had no trace arrivals; --irq-trace-loop repeats it",
    );
  });

  it('says nothing of running out when the trace outlasts the trials, and nothing at all without a trace', () => {
    expect(irqTraceNotes(results({ spanNs: 2e9, periodNs: 2.1e9 }, 300))).toHaveLength(1);
    const none = results({}, 300);
    delete (none.meta as { irqTrace?: unknown }).irqTrace;
    expect(irqTraceNotes(none)).toEqual([]);
  });
});
