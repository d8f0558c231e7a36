import { describe, expect, it } from 'vitest';
import { Vector } from '../../src/hw/irqchip.js';
import { Softirq } from '../../src/hw/layout.js';
import { TlOp, type TlRecord, TlWhat } from '../../src/hw/timeline.js';
import { CAUSE, type ExplainTask, explainRecords } from '../../src/report/explain/attribute.js';
import { band, CauseBuckets, delta } from '../../src/report/explain/buckets.js';
import { renderExplain } from '../../src/report/explain/text.js';

const TASKS: ExplainTask[] = [
  { id: 0, name: 'swapper/0', kind: 'idle' },
  { id: 1, name: 'tcp_client', kind: 'app', peer: 2 },
  { id: 2, name: 'tcp_server', kind: 'app', peer: 1 },
  { id: 3, name: 'swapper/1', kind: 'idle' },
  { id: 4, name: 'ksoftirqd/1', kind: 'ksoftirqd' },
  { id: 5, name: 'kworker/1:0H', kind: 'kworker' },
];

let seq = 0;
function r(op: TlOp, what: TlWhat, cpu: number, ts: number, arg = 0, arg2 = 0, aux = 0): TlRecord {
  return { op, what, cpu, arg, arg2, ts, aux, seq: seq++ };
}
const B = TlOp.Begin;
const E = TlOp.End;
const I = TlOp.Instant;

/** One exchange, client on CPU 0, server on CPU 1; NET_RX on CPU 1 left to ksoftirqd; a host stall. */
function exchange(): TlRecord[] {
  return [
    r(B, TlWhat.Task, 0, 0, 1),
    r(B, TlWhat.Exchange, 0, 10, 100, 1, 200),
    r(I, TlWhat.MsgSent, 0, 30, 100, 1, 50),
    r(E, TlWhat.Task, 0, 35, 1, 0),
    r(B, TlWhat.Task, 0, 35, 0),
    r(B, TlWhat.Halt, 0, 36),
    r(B, TlWhat.Task, 1, 0, 3),
    r(B, TlWhat.Halt, 1, 0),
    r(E, TlWhat.Halt, 1, 58),
    r(I, TlWhat.NicDue, 1, 58, 1, 0, 55),
    r(B, TlWhat.Irq, 1, 58, Vector.Net),
    r(E, TlWhat.Irq, 1, 60, Vector.Net),
    r(E, TlWhat.Task, 1, 60, 3, 4),
    r(B, TlWhat.Task, 1, 62, 4),
    r(B, TlWhat.Softirq, 1, 65, Softirq.NetRx),
    r(E, TlWhat.Softirq, 1, 70, Softirq.NetRx),
    r(E, TlWhat.Task, 1, 71, 4, 2),
    r(B, TlWhat.Task, 1, 71, 2),
    r(B, TlWhat.HostStall, 1, 75, 1, 3),
    r(E, TlWhat.HostStall, 1, 80, 1),
    r(I, TlWhat.MsgSent, 1, 90, 200, 1, 100),
    r(I, TlWhat.NicDue, 0, 102, 1, 0, 100),
    r(E, TlWhat.Halt, 0, 101),
    r(B, TlWhat.Irq, 0, 102, Vector.Net),
    r(E, TlWhat.Irq, 0, 104, Vector.Net),
    r(B, TlWhat.Softirq, 0, 104, Softirq.NetRx),
    r(E, TlWhat.Softirq, 0, 108, Softirq.NetRx),
    r(E, TlWhat.Task, 0, 109, 0, 1),
    r(B, TlWhat.Task, 0, 109, 1),
    r(E, TlWhat.Exchange, 0, 120, 200, 1),
  ];
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe('critical-path attribution', () => {
  it('splits a constructed exchange into its causes, which add up to its one-way latency', () => {
    const { explained, unexplained } = explainRecords({
      cpus: 2,
      tasks: TASKS,
      records: exchange(),
      validFromNs: Number.NEGATIVE_INFINITY,
    });
    expect(unexplained.exchange).toBe(0);
    const ex = explained.filter((e) => e.kind === 'exchange');
    expect(ex).toHaveLength(1);
    const e = ex[0];
    expect(e.latencyNs).toBe(55);
    expect(sum(e.causes)).toBeCloseTo(55, 9);
    const c = Object.fromEntries(e.causes);
    expect(c).toEqual({
      [CAUSE.endpoint]: (20 + 14 + 11) / 2,
      [CAUSE.wire]: (20 + 10) / 2,
      [CAUSE.moderation]: 5 / 2,
      [CAUSE.idle]: (3 + 1 + 1 + 1) / 2,
      [CAUSE.hardirq]: (2 + 2) / 2,
      [CAUSE.ksoftirqd]: 5 / 2,
      [CAUSE.netRx]: (5 + 4) / 2,
      'behind ksoftirqd/1': 1 / 2,
      [CAUSE.stall]: 5 / 2,
    });
  });

  it("reads the NIC's moderation on the flow's vector CPU, and ends it when NET_RX there picks the message up", () => {
    // --nic-irq-cpus 0: both flows interrupt on CPU 0; the server reads on CPU 1. Its message
    // arrives at 50 and CPU 0's IRQ is due at 50: no moderation. The reply arrives at 100 while
    // CPU 0's NET_RX is already polling (from 98), and the next RX IRQ (another message's) is due
    // only at 115: the poll picked it up at 100, so no moderation either.
    const tasks: ExplainTask[] = TASKS.map((t) => (t.kind === 'app' ? { ...t, rxCpu: 0 } : t));
    const records = [
      r(B, TlWhat.Task, 0, 0, 1),
      r(B, TlWhat.Exchange, 0, 10, 100, 1, 200),
      r(I, TlWhat.MsgSent, 0, 30, 100, 1, 50),
      r(E, TlWhat.Task, 0, 35, 1, 0),
      r(B, TlWhat.Task, 0, 35, 0),
      r(I, TlWhat.NicDue, 0, 50, 1, 0, 50),
      r(B, TlWhat.Irq, 0, 50, Vector.Net),
      r(E, TlWhat.Irq, 0, 52, Vector.Net),
      r(B, TlWhat.Softirq, 0, 52, Softirq.NetRx),
      r(E, TlWhat.Softirq, 0, 56, Softirq.NetRx),
      r(B, TlWhat.Task, 1, 0, 3),
      r(E, TlWhat.Task, 1, 58, 3, 2),
      r(B, TlWhat.Task, 1, 60, 2),
      r(I, TlWhat.MsgSent, 1, 90, 200, 1, 100),
      r(B, TlWhat.Softirq, 0, 98, Softirq.NetRx),
      r(E, TlWhat.Softirq, 0, 104, Softirq.NetRx),
      r(E, TlWhat.Task, 0, 106, 0, 1),
      r(B, TlWhat.Task, 0, 106, 1),
      r(I, TlWhat.NicDue, 0, 115, 1, 0, 115),
      r(E, TlWhat.Exchange, 0, 120, 200, 1),
    ];
    const ex = explainRecords({ cpus: 2, tasks, records, validFromNs: Number.NEGATIVE_INFINITY }).explained.filter(
      (e) => e.kind === 'exchange',
    );
    expect(ex).toHaveLength(1);
    expect(sum(ex[0].causes)).toBeCloseTo(55, 9);
    expect(ex[0].causes.get(CAUSE.moderation) ?? 0).toBe(0);
    // Read on the reader's CPU (CPU 1) alone, as before rxCpu: all 40 ns of the server's receive
    // part, and the reply's 15 ns until the next IRQ, would have been "moderation".
    const before = explainRecords({ cpus: 2, tasks: TASKS, records, validFromNs: Number.NEGATIVE_INFINITY });
    expect(before.explained.find((e) => e.kind === 'exchange')?.causes.get(CAUSE.moderation)).toBeGreaterThan(0);
  });

  it('counts an exchange whose records a ring lost as unexplained, not guessed', () => {
    const recs = exchange().filter((x) => !(x.what === TlWhat.MsgSent && x.cpu === 1));
    const { explained, unexplained } = explainRecords({ cpus: 2, tasks: TASKS, records: recs, validFromNs: 0 });
    expect(explained.filter((e) => e.kind === 'exchange')).toHaveLength(0);
    expect(unexplained.exchange).toBe(1);
    const late = explainRecords({ cpus: 2, tasks: TASKS, records: exchange(), validFromNs: 11 });
    expect(late.unexplained.exchange).toBe(1);
    // One that ends after the measured window is in neither count, as it is not in the histogram.
    const end = exchange().find((x) => x.what === TlWhat.Exchange && x.op === E)!.ts;
    const after = explainRecords({ cpus: 2, tasks: TASKS, records: recs, validFromNs: 0, untilNs: end - 1 });
    expect(after.unexplained.exchange).toBe(0);
    expect(
      explainRecords({ cpus: 2, tasks: TASKS, records: recs, validFromNs: 0, untilNs: end }).unexplained.exchange,
    ).toBe(1);
  });

  it('names a hand-off’s and a pending request’s wait behind another task, a GC, the hand-off call', () => {
    const recs = [
      r(B, TlWhat.Task, 1, 0, 2),
      r(B, TlWhat.Irq, 1, 10, Vector.Device),
      r(B, TlWhat.Handoff, 1, 12),
      r(E, TlWhat.Handoff, 1, 14, 0, 1, 12),
      r(E, TlWhat.Irq, 1, 15, Vector.Device),
      r(B, TlWhat.Gc, 1, 20, 1),
      r(E, TlWhat.Gc, 1, 26, 1),
      r(E, TlWhat.Task, 1, 40, 2, 5),
      r(B, TlWhat.Task, 1, 42, 5),
      r(B, TlWhat.Work, 1, 45, 1, 0, 12),
      r(B, TlWhat.LockWait, 1, 46),
      r(E, TlWhat.LockWait, 1, 49),
      r(E, TlWhat.Work, 1, 50, 1),
    ];
    // A request made at 20 that found the work pending, served by the run that starts at 45.
    recs.push(r(I, TlWhat.Request, 1, 45, 1, 0, 20));
    const { explained } = explainRecords({ cpus: 2, tasks: TASKS, records: recs, validFromNs: 0 });
    expect(explained).toHaveLength(2);
    expect(Object.fromEntries(explained[1].causes)).toEqual({
      [CAUSE.gc]: 6,
      'behind tcp_server': 40 - 26,
      [CAUSE.switch]: 2,
      [CAUSE.worker]: 3,
    });
    expect(explained[1].latencyNs).toBe(25);
    const e = explained[0];
    expect(e.kind).toBe('handoff');
    expect(e.latencyNs).toBe(33);
    expect(Object.fromEntries(e.causes)).toEqual({
      [CAUSE.handoff]: 2,
      [CAUSE.hardirq]: 1,
      'behind tcp_server': 40 - 15 - 6,
      [CAUSE.gc]: 6,
      [CAUSE.switch]: 2,
      [CAUSE.worker]: 3,
    });
  });

  it('adds up on random event sequences (every cause sums to the latency)', () => {
    let s = 12345;
    const rnd = () => {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      return s / 0x7fffffff;
    };
    for (let trial = 0; trial < 200; trial++) {
      const recs = exchange().map((x) => ({ ...x }));
      // Shuffle in noise: slices, stalls and tasks at random times on both CPUs.
      const whats = [TlWhat.Hardirq, TlWhat.Softirq, TlWhat.Work, TlWhat.HostStall, TlWhat.Gc, TlWhat.LockWait];
      for (let k = 0; k < 10; k++) {
        const cpu = rnd() < 0.5 ? 0 : 1;
        const t0 = rnd() * 130 - 5;
        const w = whats[Math.floor(rnd() * whats.length)];
        recs.push(r(B, w, cpu, t0, Math.floor(rnd() * 4)));
        recs.push(r(E, w, cpu, t0 + rnd() * 20, 0));
        if (rnd() < 0.3) recs.push(r(B, TlWhat.Task, cpu, t0 + rnd() * 5, Math.floor(rnd() * 6)));
      }
      const { explained } = explainRecords({ cpus: 2, tasks: TASKS, records: recs, validFromNs: -Infinity });
      const e = explained.find((x) => x.kind === 'exchange');
      expect(e).toBeDefined();
      expect(Math.abs(sum(e!.causes) - e!.latencyNs)).toBeLessThan(1e-9 * e!.latencyNs + 1e-9);
    }
  });
});

describe('cause buckets', () => {
  it('decomposes a band exactly and the Δ against a baseline', () => {
    const a = new CauseBuckets('inline', 'exchange');
    const b = new CauseBuckets('workqueue', 'exchange');
    for (let i = 1; i <= 1000; i++) {
      a.add({
        kind: 'exchange',
        startNs: i,
        endNs: i,
        latencyNs: 10_000,
        causes: new Map([
          ['wire', 6000],
          ['copy', 4000],
        ]),
      });
      const slow = i > 990;
      b.add({
        kind: 'exchange',
        startNs: i,
        endNs: i,
        latencyNs: slow ? 50_000 : 10_000,
        causes: new Map([
          ['wire', 6000],
          ['copy', 4000],
          ...(slow ? [['waiting for ksoftirqd', 40_000] as const] : []),
        ]),
      });
    }
    const top = band(b.series(), 0.99, 1);
    expect(top.count).toBeCloseTo(10, 9);
    expect(top.latencyNs).toBeCloseTo(50_000, 6);
    expect(Object.values(top.causes).reduce((x, y) => x + y, 0)).toBeCloseTo(top.latencyNs, 6);
    const d = delta(top, band(a.series(), 0.99, 1));
    expect(d.latencyNs).toBeCloseTo(40_000, 6);
    expect(d.causes['waiting for ksoftirqd']).toBeCloseTo(40_000, 6);
    expect(d.causes.wire).toBeCloseTo(0, 6);
    const text = renderExplain(
      { method: '', points: [{ point: 0, series: [a.series(), b.series()] }] },
      'inline',
      null,
    );
    expect(text).toMatch(/slowest 1% is 40\.0 µs above inline's: \+40\.0 waiting for ksoftirqd/);
  });
});
