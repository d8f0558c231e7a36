/**
 * The plan of a machine's buffer: which regions exist for a machine of a given shape, each
 * reserved from its owner's declared size (src/hw/layout.ts for the machine's own words, the
 * kernel's, random.c's and the workload's), then allocated. Context: main thread.
 */
import { FAST_POOL_WORDS } from '../random/fastpool.js';
import { INPUT_POOL_WORDS } from '../random/inputpool.js';
import { DOORBELL_WORDS } from '../shm/doorbell.js';
import { LINE_WORDS, MIN_SHM_BYTES, ShmPlanner } from '../shm/layout.js';
import { MpscRing, SpscRing } from '../shm/ring.js';
import { GLOBAL_COUNTER_NAMES } from '../hw/counters.js';
import { timelineRingWords } from '../hw/timeline-layout.js';
import { ARRIVAL_RECORD_WORDS, ARRIVAL_RING_CAPACITY, CONTROL_WORDS, CPU_F64, CPU_WORDS, IRQ_RECORD_WORDS, IRQ_RING_CAPACITY, type MachineRegions, REQUEST_RECORD_WORDS, REQUEST_RING_CAPACITY } from '../hw/layout.js';
import { MAX_OBJECTS, OBJ_WORDS } from '../kernel/objects.js';
import { POOL_WORDS } from '../kernel/workqueue.js';
import { RQ_WORDS, TASK_F64, TASK_WORDS } from '../kernel/sched/rq.js';
import { TIMER_BASE_WORDS } from '../kernel/timer.js';

export interface MachineShape {
  cpus: number;
  tasks: number;
  threads: number;
  pools: number;
  /** Extra named regions a workload needs (name → Int32 words). */
  workloadRegions: Record<string, number>;
  /** Records per thread of the timeline rings (a power of two); 0: no timeline (none reserved). */
  timelineRecords?: number;
  /** A request ring per CPU (the driver payload: every request's wait is timed). */
  requestRings?: boolean;
}

/** Plan and allocate the buffer. Context: main thread. */
export function planMachine(shape: MachineShape): { sab: SharedArrayBuffer; regions: MachineRegions } {
  const p = new ShmPlanner();
  const r = {
    control: p.reserve('control', CONTROL_WORDS),
    globalCounters: p.reserve('globalCounters', Math.max(LINE_WORDS, GLOBAL_COUNTER_NAMES.length)),
    cpu: p.reserve('cpu', CPU_WORDS * shape.cpus),
    cpuF64: p.reserve('cpuF64', 2 * CPU_F64 * shape.cpus),
    rq: p.reserve('rq', RQ_WORDS * shape.cpus),
    timerBase: p.reserve('timerBase', TIMER_BASE_WORDS * shape.cpus),
    task: p.reserve('task', TASK_WORDS * shape.tasks),
    taskF64: p.reserve('taskF64', 2 * TASK_F64 * shape.tasks),
    bells: p.reserve('bells', DOORBELL_WORDS * shape.threads),
    objects: p.reserve('objects', OBJ_WORDS * MAX_OBJECTS),
    pools: p.reserve('pools', POOL_WORDS * shape.pools),
    poolLists: [] as number[],
    irqRings: [] as number[],
    arrivals: [] as number[],
    irqWorkLists: [] as number[],
    taskletLists: [] as number[],
    requestRings: [] as number[],
    fastPools: p.reserve('fastPools', FAST_POOL_WORDS * shape.cpus),
    inputPool: p.reserve('inputPool', INPUT_POOL_WORDS),
    workload: {} as Record<string, number>,
    timeline: [] as number[],
  };
  for (let i = 0; i < shape.pools; i++) r.poolLists.push(p.reserve(`poolList${i}`, MpscRing.wordsFor(MAX_OBJECTS, 1)));
  for (let c = 0; c < shape.cpus; c++) {
    r.irqRings.push(p.reserve(`irqRing${c}`, MpscRing.wordsFor(IRQ_RING_CAPACITY, IRQ_RECORD_WORDS)));
    r.arrivals.push(p.reserve(`arrivals${c}`, SpscRing.wordsFor(ARRIVAL_RING_CAPACITY, ARRIVAL_RECORD_WORDS)));
    r.irqWorkLists.push(p.reserve(`irqWork${c}`, MpscRing.wordsFor(MAX_OBJECTS, 1)));
    r.taskletLists.push(p.reserve(`taskletHi${c}`, MpscRing.wordsFor(MAX_OBJECTS, 1)));
    r.taskletLists.push(p.reserve(`tasklet${c}`, MpscRing.wordsFor(MAX_OBJECTS, 1)));
    if (shape.requestRings)
      r.requestRings.push(p.reserve(`requests${c}`, SpscRing.wordsFor(REQUEST_RING_CAPACITY, REQUEST_RECORD_WORDS)));
  }
  for (const [name, words] of Object.entries(shape.workloadRegions)) r.workload[name] = p.reserve(`wl:${name}`, words);
  const tlRecords = shape.timelineRecords ?? 0;
  if (tlRecords > 0)
    for (let t = 0; t < shape.threads; t++) r.timeline.push(p.reserve(`timeline${t}`, timelineRingWords(tlRecords)));
  const { sab, map } = p.allocate(MIN_SHM_BYTES);
  return { sab, regions: { ...r, map } };
}
