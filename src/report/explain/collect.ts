/**
 * `--explain`'s collector: after every measured slice (drained), it reads what each thread's
 * timeline ring recorded since its last read (src/hw/timeline.ts), explains every exchange and
 * hand-off in it (attribute.ts) and folds them into the strategy's buckets (buckets.ts); the
 * records are then dropped. The rings are sized for a slice (src/harness/options.ts), so a
 * whole measured run is explained with memory bounded by the rings and the buckets; an exchange
 * whose records a ring overwrote before the read is counted as unexplained, never guessed.
 *
 * Context: main thread, between slices (the machine's threads go on writing: the ring read is
 * racy by design and drops what may be torn).
 */
import { readTimelineRing, type TlRecord } from '../../hw/timeline.js';
import type { TimelineSource } from '../timeline/timeline.js';
import type { ExplainResults, ExplainSeries } from '../types.js';
import { type ExplainTask, explainRecords } from './attribute.js';
import { CauseBuckets } from './buckets.js';

export type { ExplainResults };

export const EXPLAIN_METHOD =
  "critical path of each exchange (send → reply read; one-way = half, as tcp_lat's histogram) and of each accepted hand-off (→ its work's start), split by what the CPU holding it was doing, from the timeline rings' records of every measured slice; log-latency buckets 1% wide";

/** One slice, as the harness tells it. */
export interface ExplainSlice {
  point: number;
  label: string;
  /** The measured phase's end: what ends after it (in the drain) is not in the table's histograms, nor here. */
  measureEndNs: number;
}

export class ExplainCollector {
  private source: TimelineSource | undefined;
  private heads: number[] = [];
  private f64: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private readonly series = new Map<string, { point: number; b: CauseBuckets }>();

  /** Read the rings after a slice of `s` and fold what they hold. */
  sliceEnd(m: TimelineSource, s: ExplainSlice): void {
    if (m.R.timeline.length === 0) return;
    if (m !== this.source) {
      this.source = m;
      this.heads = m.R.timeline.map(() => 0);
      this.f64 = new Float64Array(m.sab);
    }
    const records: TlRecord[] = [];
    let validFrom = Number.NEGATIVE_INFINITY;
    m.R.timeline.forEach((base, t) => {
      const read = readTimelineRing(m.i32, this.f64, base, this.heads[t]);
      this.heads[t] = read.head;
      if (read.overwritten > 0) validFrom = Math.max(validFrom, read.records[0]?.ts ?? Number.POSITIVE_INFINITY);
      for (const r of read.records) records.push(r);
    });
    const tasks: ExplainTask[] = m.plan.tasks.map((t) => {
      const app = t.app as { rxCpu?: number } | undefined;
      return { id: t.id, name: t.name, kind: t.kind, ...(app?.rxCpu !== undefined ? { rxCpu: app.rxCpu } : {}) };
    });
    for (const t of m.plan.tasks) {
      const app = t.app as { kind?: string; instance?: number } | undefined;
      if (app?.kind !== 'tcp_client') continue;
      const peer = m.plan.tasks.find((u) => {
        const a = u.app as { kind?: string; instance?: number } | undefined;
        return a?.kind === 'tcp_server' && a.instance === app.instance;
      });
      if (peer) {
        tasks[t.id].peer = peer.id;
        tasks[peer.id].peer = t.id;
      }
    }
    const { explained, unexplained } = explainRecords({
      cpus: m.plan.cpus,
      tasks,
      records,
      validFromNs: validFrom,
      untilNs: s.measureEndNs,
    });
    if (unexplained.exchange > 0) this.of(s, 'exchange').unexplained += unexplained.exchange;
    if (unexplained.handoff > 0) this.of(s, 'handoff').unexplained += unexplained.handoff;
    for (const e of explained) if (e.endNs <= s.measureEndNs) this.of(s, e.kind).add(e);
  }

  private of(s: ExplainSlice, kind: 'exchange' | 'handoff'): CauseBuckets {
    const key = `${s.point}\u0000${s.label}\u0000${kind}`;
    let e = this.series.get(key);
    if (!e) {
      e = { point: s.point, b: new CauseBuckets(s.label, kind) };
      this.series.set(key, e);
    }
    return e.b;
  }

  results(): ExplainResults {
    const points = new Map<number, ExplainSeries[]>();
    for (const { point, b } of this.series.values()) {
      if (b.count === 0 && b.unexplained === 0) continue;
      const list = points.get(point) ?? [];
      list.push(b.series());
      points.set(point, list);
    }
    return {
      method: EXPLAIN_METHOD,
      points: [...points.entries()].sort((a, b) => a[0] - b[0]).map(([point, series]) => ({ point, series })),
    };
  }
}
