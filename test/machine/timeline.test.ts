/**
 * The timeline ring (src/hw/timeline.ts) on one thread: records written and read back
 * field by field, wraparound, overwritten records counted (never silently lost), a recorder that
 * is off writes nothing; and the trace builder (src/report/timeline/timeline.ts) on hand-made records:
 * nesting, the window's cut, flows, and slices whose begin or end is missing.
 */
import { describe, expect, it } from 'vitest';
import { Vector } from '../../src/hw/irqchip.js';
import { CPU_F64, CPUF_HANDOFF_NS, Phase, timelineRingWords } from '../../src/hw/layout.js';
import {
  initTimelineRing,
  readTimelineRing,
  Timeline,
  TlOp,
  type TlRecord,
  TlWhat,
  timelineRecordsFor,
} from '../../src/hw/timeline.js';
import type { MachinePlan } from '../../src/machine/plan.js';
import { buildTrial } from '../../src/report/timeline/timeline.js';
import { LINE_WORDS } from '../../src/shm/layout.js';

/** A ring of `cap` records at word 16 (one line of canary words before it) and a fake clock. */
function ring(cap: number) {
  const base = LINE_WORDS;
  const words = base + timelineRingWords(cap) + LINE_WORDS;
  const sab = new SharedArrayBuffer(words * 4);
  const i32 = new Int32Array(sab);
  const f64 = new Float64Array(sab);
  i32.fill(0x5a5a5a5a, 0, base);
  i32.fill(0x5a5a5a5a, base + timelineRingWords(cap));
  initTimelineRing(i32, base, cap);
  let clock = 1000;
  const tl = new Timeline(i32, f64, base, () => clock++);
  const canariesIntact = () =>
    i32.subarray(0, base).every((w) => w === 0x5a5a5a5a) &&
    i32.subarray(base + timelineRingWords(cap)).every((w) => w === 0x5a5a5a5a);
  return { i32, f64, base, tl, canariesIntact };
}

describe('timeline ring', () => {
  it('records nothing until the phase records (Measure, Drain), and nothing when off', () => {
    const r = ring(8);
    r.tl.begin(TlWhat.Task, 0, 3);
    r.tl.phase(Phase.Warmup);
    r.tl.begin(TlWhat.Task, 0, 3);
    expect(readTimelineRing(r.i32, r.f64, r.base, 0).records).toHaveLength(0);
    r.tl.phase(Phase.Measure);
    r.tl.begin(TlWhat.Task, 0, 3);
    r.tl.phase(Phase.Drain);
    r.tl.end(TlWhat.Task, 0, 3);
    r.tl.phase(Phase.Pause);
    r.tl.end(TlWhat.Task, 0, 3);
    expect(readTimelineRing(r.i32, r.f64, r.base, 0).records).toHaveLength(2);
    const off = Timeline.off();
    off.phase(Phase.Measure);
    expect(off.on).toBe(false);
    off.begin(TlWhat.Task, 0, 1); // no ring: must not throw or write
  });

  it('reads back every field of a record, and the sequence in order', () => {
    const r = ring(8);
    r.tl.phase(Phase.Measure);
    r.tl.begin(TlWhat.Irq, 1, Vector.Device, 24, 5.5);
    r.tl.instant(TlWhat.Refill, -1, 1, 77, 6.25);
    r.tl.span(TlWhat.Halt, 0, 0, 7, 9);
    const read = readTimelineRing(r.i32, r.f64, r.base, 0);
    expect(read.head).toBe(4);
    expect(read.overwritten).toBe(0);
    expect(read.records.map((x) => x.seq)).toEqual([0, 1, 2, 3]);
    expect(read.records[0]).toMatchObject({
      op: TlOp.Begin,
      what: TlWhat.Irq,
      cpu: 1,
      arg: Vector.Device,
      arg2: 24,
      ts: 5.5,
    });
    expect(read.records[1]).toMatchObject({
      op: TlOp.Instant,
      what: TlWhat.Refill,
      cpu: -1,
      arg: 1,
      arg2: 77,
      ts: 6.25,
    });
    expect(read.records[2]).toMatchObject({ op: TlOp.Begin, what: TlWhat.Halt, ts: 7 });
    expect(read.records[3]).toMatchObject({ op: TlOp.End, what: TlWhat.Halt, ts: 9 });
    expect(r.canariesIntact()).toBe(true);
  });

  it('wraps around: the newest capacity records survive, the rest are counted as overwritten', () => {
    const r = ring(8);
    r.tl.phase(Phase.Measure);
    for (let k = 0; k < 5; k++) r.tl.instant(TlWhat.Jiffy, -1, k, 0, k);
    const first = readTimelineRing(r.i32, r.f64, r.base, 0);
    expect(first.records.map((x) => x.arg)).toEqual([0, 1, 2, 3, 4]);
    expect(first.overwritten).toBe(0);
    // 13 more: records 5..17 written, the ring holds 10..17; 5..9 were never read.
    for (let k = 5; k < 18; k++) r.tl.instant(TlWhat.Jiffy, -1, k, 0, k);
    const second = readTimelineRing(r.i32, r.f64, r.base, first.head);
    expect(second.head).toBe(18);
    expect(second.overwritten).toBe(5);
    expect(second.records.map((x) => x.arg)).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
    expect(second.records.map((x) => x.seq)).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
    // Nothing new: nothing read, nothing lost.
    const third = readTimelineRing(r.i32, r.f64, r.base, second.head);
    expect(third).toEqual({ records: [], head: 18, overwritten: 0 });
    // Exactly a ring's worth since the last read: all of it, none lost.
    for (let k = 18; k < 26; k++) r.tl.instant(TlWhat.Jiffy, -1, k, 0, k);
    const fourth = readTimelineRing(r.i32, r.f64, r.base, third.head);
    expect(fourth.overwritten).toBe(0);
    expect(fourth.records.map((x) => x.arg)).toEqual([18, 19, 20, 21, 22, 23, 24, 25]);
    expect(r.canariesIntact()).toBe(true);
  });

  it("names a hand-off's job by its CPU's CPUF_HANDOFF_NS at both ends", () => {
    const cpus = 2;
    const cpuF64 = 64; // Int32 base of the per-CPU doubles, in a buffer of our own
    const base = cpuF64 + 2 * CPU_F64 * cpus;
    const sab = new SharedArrayBuffer((base + timelineRingWords(8)) * 4);
    const i32 = new Int32Array(sab);
    const f64 = new Float64Array(sab);
    initTimelineRing(i32, base, 8);
    const tl = new Timeline(i32, f64, base, () => 50, cpuF64 / 2 + CPUF_HANDOFF_NS);
    f64[cpuF64 / 2 + CPU_F64 + CPUF_HANDOFF_NS] = 12345; // CPU 1's pending hand-off
    tl.phase(Phase.Measure);
    tl.handoffEnd(1, true);
    tl.workBegin(0, 1, 60);
    const [h, w] = readTimelineRing(i32, f64, base, 0).records;
    expect(h).toMatchObject({ what: TlWhat.Handoff, op: TlOp.End, cpu: 1, arg2: 1, aux: 12345 });
    expect(w).toMatchObject({ what: TlWhat.Work, op: TlOp.Begin, cpu: 0, arg: 1, ts: 60, aux: 12345 });
  });

  it('sizes rings from the window: powers of two within bounds', () => {
    for (const ms of [1, 10, 50, 200, 1000]) {
      const n = timelineRecordsFor(ms);
      expect(Math.log2(n) % 1).toBe(0);
      expect(n).toBeGreaterThanOrEqual(8192);
      expect(n).toBeLessThanOrEqual(262_144);
    }
  });
});

describe('timeline trace builder', () => {
  const plan = {
    cpus: 2,
    tasks: [
      { id: 0, name: 'swapper/0', kind: 'idle' },
      { id: 1, name: 'swapper/1', kind: 'idle' },
      { id: 2, name: 'kworker/0:0H', kind: 'kworker' },
    ],
  } as unknown as MachinePlan;
  const w = { point: 0, label: 'workqueue', round: 0, measureStartNs: 0, measureEndNs: 10_000 };
  let seq = 0;
  const rec = (op: TlOp, what: TlWhat, cpu: number, ts: number, arg = 0, arg2 = 0, aux = 0): TlRecord => ({
    op,
    what,
    cpu,
    arg,
    arg2,
    ts,
    aux,
    seq: seq++,
  });
  const B = TlOp.Begin;
  const E = TlOp.End;

  it('nests slices, cuts them at the window, and draws a flow from hand-off to work', () => {
    const meta = { unmatchedFlows: 0, repairedSlices: 0 };
    const cpu0 = [
      rec(B, TlWhat.Task, 0, 500, 0), // before the window (from 1000): cut at 1000
      rec(B, TlWhat.Hardirq, 0, 2000),
      rec(B, TlWhat.Irq, 0, 2001, Vector.Device, 24),
      rec(B, TlWhat.Handoff, 0, 2100),
      rec(E, TlWhat.Handoff, 0, 2200, 0, 1, 2000.5),
      rec(E, TlWhat.Irq, 0, 2300, Vector.Device),
      rec(E, TlWhat.Hardirq, 0, 2400),
      rec(E, TlWhat.Task, 0, 3000, 0, 2),
    ];
    const kworker = [
      rec(B, TlWhat.Task, 0, 3100, 2),
      rec(B, TlWhat.Work, 0, 3200, 0, 0, 2000.5),
      rec(E, TlWhat.Work, 0, 3500, 0),
      rec(E, TlWhat.Task, 0, 3600, 2, 0),
    ];
    const ev = buildTrial(plan, w, 1, 1000, [cpu0, kworker], meta);
    const x = ev.filter((e) => e.ph === 'X');
    expect(x.map((e) => [e.name, e.ts, e.dur])).toEqual([
      ['swapper/0', 1, 2],
      ['hardirq', 2, 0.4],
      ['irq 24', 2.001, 0.299],
      ['handoff: workqueue', 2.1, 0.1],
      ['kworker/0:0H', 3.1, 0.5],
      ['deferred work', 3.2, 0.3],
    ]);
    const s = ev.find((e) => e.ph === 's');
    const f = ev.find((e) => e.ph === 'f');
    expect(s).toMatchObject({ ts: 2.1, tid: 1 });
    expect(f).toMatchObject({ ts: 3.2, tid: 1, bp: 'e', id: s?.id });
    expect(meta).toEqual({ unmatchedFlows: 0, repairedSlices: 0 });
  });

  it('repairs what lost a record (counted), and counts a work start whose hand-off is not there', () => {
    const meta = { unmatchedFlows: 0, repairedSlices: 0 };
    const cpu1 = [
      rec(B, TlWhat.Task, 1, 1000, 1),
      rec(B, TlWhat.Hardirq, 1, 1100), // its end was lost
      rec(E, TlWhat.Task, 1, 1200, 1, 2), // closes the hardirq first: one repair
      rec(B, TlWhat.Task, 1, 1300, 2),
      rec(B, TlWhat.Work, 1, 1400, 1, 0, 999), // handed off before the window: no flow
      rec(E, TlWhat.Work, 1, 1500, 1),
      rec(E, TlWhat.Softirq, 1, 1600, 3), // its begin was lost while a task is open: dropped, one repair
    ];
    const ev = buildTrial(plan, w, 1, 1000, [cpu1], meta);
    expect(meta).toEqual({ unmatchedFlows: 1, repairedSlices: 2 });
    expect(ev.filter((e) => e.ph === 's' || e.ph === 'f')).toHaveLength(0);
    // The task still open when the rings were read ends with the measured phase (10 µs here).
    expect(ev.find((e) => e.name === 'kworker/0:0H')).toMatchObject({ ts: 1.3, dur: 8.7 });
  });
});
