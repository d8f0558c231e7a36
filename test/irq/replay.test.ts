/**
 * The replay's side of --irq-trace (src/irq/replay.ts): the plan shared on a SharedArrayBuffer,
 * the summary results.json keeps, and the irq thread's cursor (TraceReplay) driven with a fake
 * clock: in order, looped, scaled, and skipping what fell behind.
 */
import { describe, expect, it } from 'vitest';
import { irqTraceMeta, shareIrqTrace, TraceReplay } from '../../src/irq/replay.js';
import { parseIrqTrace } from '../../src/irq/trace-file.js';

// Host CPU 7: arrivals at 0, 1, 2 ms (irq 40); host CPU 9: at 0.5, 1.5 ms (irq 41).
const CSV = ['time_ns,cpu,irq', '1000000,7,40', '1500000,9,41', '2000000,7,40', '2500000,9,41', '3000000,7,40'].join(
  '\n',
);
const TRACE = { file: 'tiny.csv', path: '/tmp/tiny.csv', map: '7:1,9:0', loop: false, scale: 1 };

/** Every due time the cursor gives CPU `cpu` before clock `untilNs`, starting at `startNs`. */
function dues(replay: TraceReplay, cpu: number, startNs: number, untilNs: number): number[] {
  replay.start(startNs);
  const out: number[] = [];
  for (let t = replay.due(cpu); t < untilNs; t = replay.advance(cpu)) out.push(t);
  return out;
}

describe('shareIrqTrace', () => {
  it('puts every CPU’s offsets and irq numbers on one SharedArrayBuffer, unchanged', () => {
    const plan = parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0' });
    const shared = shareIrqTrace(plan);
    const sab = shared.cpus[0].offsetsNs.buffer;
    expect(sab).toBeInstanceOf(SharedArrayBuffer);
    for (const [cpu, c] of shared.cpus.entries()) {
      expect(c.offsetsNs.buffer).toBe(sab);
      expect(c.irqs.buffer).toBe(sab);
      expect([...c.offsetsNs]).toEqual([...plan.cpus[cpu].offsetsNs]);
      expect([...c.irqs]).toEqual([...plan.cpus[cpu].irqs]);
    }
    expect(shared.periodNs).toBe(plan.periodNs);
  });

  it('is summarised for results.json: arrivals per CPU, the map used, span and period', () => {
    const plan = parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0', loop: true, scale: 2 });
    const meta = irqTraceMeta(plan, { ...TRACE, loop: true, scale: 2 });
    expect(meta).toMatchObject({
      file: 'tiny.csv',
      format: 'csv',
      events: 5,
      perCpu: [2, 3],
      mapping: [
        { host: 7, cpu: 1 },
        { host: 9, cpu: 0 },
      ],
      dropped: 0,
      spanNs: 4_000_000,
      loop: true,
      scale: 2,
      mapGiven: true,
    });
  });
});

describe('TraceReplay (the irq thread’s cursor)', () => {
  it('gives each mapped CPU its arrivals from the stretch’s start, with their irq numbers, then stops', () => {
    const r = new TraceReplay(shareIrqTrace(parseIrqTrace(CSV, 'tiny.csv', { cpus: 3, map: '7:1,9:0' })));
    expect(r.targets).toEqual([0, 1]); // CPU 2 has no arrival
    expect(dues(r, 1, 5e9, Number.POSITIVE_INFINITY)).toEqual([5e9, 5e9 + 1e6, 5e9 + 2e6]);
    expect(dues(r, 0, 5e9, Number.POSITIVE_INFINITY)).toEqual([5e9 + 0.5e6, 5e9 + 1.5e6]);
    r.start(0);
    expect(r.irq(1)).toBe(40);
    expect(r.irq(0)).toBe(41);
    expect(r.advance(1)).toBe(1e6);
    r.advance(1);
    expect(r.advance(1)).toBe(Number.POSITIVE_INFINITY); // played once: it ran out
  });

  it('a new stretch starts the trace again from its top', () => {
    const r = new TraceReplay(parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0' }));
    expect(dues(r, 1, 0, Number.POSITIVE_INFINITY)).toHaveLength(3);
    expect(dues(r, 1, 1e9, Number.POSITIVE_INFINITY)).toEqual([1e9, 1e9 + 1e6, 1e9 + 2e6]);
  });

  it('loops: over a span of five periods every CPU gets five passes of its arrivals', () => {
    const plan = parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0', loop: true });
    const r = new TraceReplay(plan);
    const span = 5 * plan.periodNs; // period 2.5 ms: the 2 ms span plus one mean gap
    expect(dues(r, 1, 0, span)).toHaveLength(15);
    expect(dues(r, 0, 0, span)).toHaveLength(10);
    // the fourth arrival on CPU 1 is the first of the second pass
    r.start(0);
    for (let i = 0; i < 3; i++) r.advance(1);
    expect(r.due(1)).toBe(plan.periodNs);
    expect(r.irq(1)).toBe(40);
  });

  it('scale changes how many arrivals fall in a fixed span: ×2 halves them, ×0.5 doubles them', () => {
    const count = (scale: number) =>
      dues(
        new TraceReplay(parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0', loop: true, scale })),
        1,
        0,
        100e6, // 100 ms: 40 periods at scale 1
      ).length;
    expect(count(1)).toBe(120);
    expect(count(2)).toBe(60);
    expect(count(0.5)).toBe(240);
  });

  it('skips, and counts, the arrivals due before now when the thread fell behind', () => {
    const r = new TraceReplay(parseIrqTrace(CSV, 'tiny.csv', { cpus: 2, map: '7:1,9:0', loop: true }));
    r.start(0);
    // 10 ms late: CPU 1's arrivals at 0, 1, 2 ms of each 2.5 ms period before 10 ms: 4 passes
    expect(r.skipBefore(1, 10e6)).toBe(12);
    expect(r.due(1)).toBe(10e6);
    expect(r.skipBefore(1, 10e6)).toBe(0);
  });
});
