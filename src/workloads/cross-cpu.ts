/**
 * cross_cpu: seed 002's cross-CPU work queues (Tempesta FW's ss_wq_push / ss_tx_action).
 *
 * Producer tasks (one per producer CPU, hosted on its thread) do `produceNs` of busy work per
 * item, then push the item into a consumer's ring (round robin over the consumers) and maybe
 * raise an IPI with irq_work_queue_on. The consumer CPU's IPI handler raises NET_TX; NET_TX
 * drains the ring, `consumeNs` of busy work per item, at most `budget` items per run, and
 * re-raises itself while items remain.
 *
 * IPI policy:
 *   'always'   the producer queues the irq_work after every item (the kernel still coalesces
 *              while the irq_work is pending, as irq_work_queue_on does).
 *   'if-idle'  Tempesta's fix: a per-consumer flag says "IPIs enabled". The IPI handler clears
 *              it; the consumer sets it once its ring is drained, then (Atomics are a full
 *              barrier) re-checks the ring and, if an item slipped in, clears it again and goes
 *              on draining. A producer raises an IPI only while the flag is set.
 *
 *     producer                               consumer (NET_TX)
 *     push item (publish)                    ring empty → store(flag, 1)
 *     load(flag) == 1 ? IPI : nothing        re-check ring: non-empty → exchange(flag, 0) == 1 ?
 *                                                           keep draining : (IPI on its way) stop
 *   SC order: either the producer sees flag 1 (and IPIs), or the consumer's re-check sees the item.
 *
 * Region legend (per consumer CPU c, "xcpu:ring<c>": MpscRing of [producer, seq, t lo, t hi]:
 * producers claim/publish, the owner of CPU c consumes; "xcpu:state": one line per consumer):
 *   FLAG   R: IPIs enabled (1) or not (0); store/exchange by the consumer's owner and the IPI
 *          handler, load by producers.
 *   POLICY (line 0, word 1) M: the IPI policy in force, 0 'always' / 1 'if-idle'; written by the
 *          main thread between trials (so that trials of both policies interleave on one
 *          machine), Atomics.load by producers and consumers.
 */

import type { IrqWork } from '../api/types.js';
import { GlobalCounter, Phase, Softirq } from '../hw/layout.js';
import { St } from '../hw/trace.js';
import type { HostedTask } from '../kernel/task.js';
import type { NotifyPolicy } from '../shm/doorbell.js';
import { getTime, LINE_WORDS, putTime } from '../shm/layout.js';
import { MpscRing } from '../shm/ring.js';
import type { CpuHost, Workload, WorkloadAttachment } from './workload.js';

/**
 * Seed 002: producers on some CPUs queue items for consumers on others through cross-CPU rings;
 * a consumer drains its ring in NET_TX softirq with a budget. `policy` decides when a producer
 * raises an IPI (irq_work_queue_on): 'always' after every item, or 'if-idle' (Tempesta's fix)
 * only while the consumer has announced it is not draining.
 */
export interface CrossCpuOptions {
  kind: 'cross_cpu';
  producers: number[];
  consumers: number[];
  policy: NotifyPolicy;
  /** Busy work a producer does per item (ns): sets the offered load. */
  produceNs: number;
  /** Busy work a consumer does per item (ns). */
  consumeNs: number;
  /** Items a consumer drains per NET_TX run before it re-raises (the budget). */
  budget: number;
}

const RING_CAPACITY = 4096;
const REC = 4;
/** An item's fields: the producing CPU, its sequence number, the time it was queued (two words). */
const ITEM_CPU = 0;
const ITEM_SEQ = 1;
const ITEM_TIME = 2;
const FLAG = 0;
/** Word of "xcpu:state" holding the policy in force (see the legend). */
export const XCPU_POLICY_WORD = 1;
/** Word of "xcpu:state" holding consumer `cpu`'s IPIs-enabled flag. */
export function xcpuFlagWord(stateBase: number, cpu: number): number {
  return stateBase + cpu * LINE_WORDS + FLAG;
}
const IF_IDLE = 1;

export function crossRegions(w: CrossCpuOptions, cpus: number): Record<string, number> {
  const r: Record<string, number> = { 'xcpu:state': LINE_WORDS * cpus };
  for (const c of w.consumers) r[`xcpu:ring${c}`] = MpscRing.wordsFor(RING_CAPACITY, REC);
  return r;
}

export function crossInit(
  i32: Int32Array,
  regions: Record<string, number>,
  w: CrossCpuOptions,
  cpus: number,
  words: (base: number) => number | undefined,
): void {
  i32.fill(0, regions['xcpu:state'], regions['xcpu:state'] + LINE_WORDS * cpus);
  i32[regions['xcpu:state'] + XCPU_POLICY_WORD] = w.policy === 'if-idle' ? IF_IDLE : 0;
  for (const c of w.consumers) {
    MpscRing.init(i32, regions[`xcpu:ring${c}`], RING_CAPACITY, REC, words(regions[`xcpu:ring${c}`]));
    i32[xcpuFlagWord(regions['xcpu:state'], c)] = 1; // idle consumers accept IPIs
  }
}

const active = (p: Phase) => p === Phase.Warmup || p === Phase.Measure;

function burn(rt: CpuHost, ns: number): void {
  const t0 = rt.now();
  while (rt.now() - t0 < ns) {
    // busy work
  }
}

class Producer implements HostedTask {
  readonly startsOnPhase = true;
  private next = 0;
  private seq = 0;
  private readonly recheck: () => boolean;
  private readonly policyWord: number;
  constructor(
    private readonly rt: CpuHost,
    readonly id: number,
    private readonly w: CrossCpuOptions,
    private readonly rings: MpscRing[],
    private readonly ipis: IrqWork[],
    private readonly flag: (c: number) => number,
  ) {
    this.recheck = () => active(rt.phase) || rt.isStopping();
    this.policyWord = rt.R.workload['xcpu:state'] + XCPU_POLICY_WORD;
  }
  run(): void {
    const rt = this.rt;
    const i32 = rt.i32;
    const w = this.w;
    for (;;) {
      if (!rt.poll() || rt.isStopping()) return;
      if (!active(rt.phase)) {
        if (rt.sched.sleepCurrent(this.recheck)) return;
        continue;
      }
      burn(rt, w.produceNs);
      // A generation step (C_GEN_INFLIGHT): nothing is pushed after the drain looked.
      if (!rt.genEnter()) continue;
      const k = this.next;
      this.next = (k + 1) % w.consumers.length;
      const cons = w.consumers[k];
      const ring = this.rings[k];
      const idx = ring.claim();
      if (idx < 0) {
        rt.genExit();
        rt.globalCount(GlobalCounter.items_refused);
        continue;
      }
      const t = rt.now();
      i32[idx + ITEM_CPU] = rt.cpu;
      i32[idx + ITEM_SEQ] = this.seq++;
      putTime(i32, idx + ITEM_TIME, t);
      ring.publish();
      rt.globalCount(GlobalCounter.items_produced);
      if (Atomics.load(i32, this.policyWord) !== IF_IDLE || Atomics.load(i32, this.flag(cons)) === 1)
        rt.facade.irqWorkQueueOn(this.ipis[k], cons);
      rt.genExit();
    }
  }
}

/** cross_cpu as a Workload (src/workloads/workload.ts). */
export function crossCpu(w: CrossCpuOptions, cpus: number): Workload {
  return {
    kind: 'cross_cpu',
    describe: () =>
      `cross_cpu: producers on CPU ${w.producers.join(',')} feeding consumers on CPU ${w.consumers.join(',')}, IPI policy ${w.policy}`,
    regions: () => crossRegions(w, cpus),
    init: (i32, regions, words) => crossInit(i32, regions, w, cpus, words),
    tasks: () => w.producers.map((cpu) => ({ kind: 'producer' as const, cpu })),
    attach: (rt) => crossAttach(rt, w),
    busy(i32, regions) {
      for (const c of w.consumers)
        if (new MpscRing(i32, regions[`xcpu:ring${c}`]).length() !== 0) return `cross_cpu items queued for CPU ${c}`;
      return '';
    },
  };
}

/**
 * Switch the IPI policy between trials (main thread, while the machine is quiet), so that trials
 * of both policies interleave on one machine. Idle consumers must accept IPIs under either policy.
 */
export function setCrossCpuPolicy(
  i32: Int32Array,
  regions: Record<string, number>,
  w: CrossCpuOptions,
  policy: NotifyPolicy,
): void {
  const base = regions['xcpu:state'];
  Atomics.store(i32, base + XCPU_POLICY_WORD, policy === 'if-idle' ? IF_IDLE : 0);
  for (const c of w.consumers) Atomics.store(i32, xcpuFlagWord(base, c), 1);
}

function crossAttach(rt: CpuHost, w: CrossCpuOptions): WorkloadAttachment {
  const state = rt.R.workload['xcpu:state'];
  const flag = (c: number) => xcpuFlagWord(state, c);
  const rings = w.consumers.map((c) => new MpscRing(rt.i32, rt.R.workload[`xcpu:ring${c}`]));
  const ringOf = new Map(w.consumers.map((c, k) => [c, rings[k]]));
  // The IPI: irq_work on the consumer, hardirq there: disable further IPIs, raise NET_TX.
  const policyWord = state + XCPU_POLICY_WORD;
  const ifIdle = () => Atomics.load(rt.i32, policyWord) === IF_IDLE;
  const ipis = w.consumers.map((c) =>
    rt.createWorkloadIrqWork(`xcpu_ipi/${c}`, () => {
      if (ifIdle()) Atomics.store(rt.i32, flag(c), 0);
      rt.softirqs.raise(Softirq.NetTx);
    }),
  );
  return {
    netTx(r: CpuHost) {
      const c = r.cpu;
      const ring = ringOf.get(c);
      if (!ring) return;
      const i32 = r.i32;
      for (let n = 0; n < w.budget; n++) {
        const idx = ring.peek();
        if (idx < 0) break;
        const t = getTime(i32, idx + ITEM_TIME);
        ring.release();
        burn(r, w.consumeNs);
        r.pollIrq(); // hard interrupts (a producer's IPI) arrive between items, as in the kernel
        r.tracer.record(St.OneWay, r.now() - t);
        r.globalCount(GlobalCounter.items_consumed);
      }
      if (ring.peek() >= 0) {
        r.softirqs.raise(Softirq.NetTx); // budget spent: go on in the next pass (or ksoftirqd)
        return;
      }
      if (!ifIdle()) return;
      Atomics.store(i32, flag(c), 1); // drained: accept IPIs again (full barrier)
      if (ring.peek() >= 0 && Atomics.exchange(i32, flag(c), 0) === 1) {
        r.softirqs.raise(Softirq.NetTx); // an item slipped in: keep draining
      }
    },
    task(id: number) {
      const t = rt.plan.tasks[id];
      if (t.app?.kind === 'producer') return new Producer(rt, id, w, rings, ipis, flag);
      return undefined;
    },
  };
}
