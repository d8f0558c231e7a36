/**
 * The plan of a machine's buffer: which regions exist for a machine of a given shape, each
 * reserved at the size its owner declares (src/hw/layout.ts for the machine's own words, the
 * kernel's mechanisms through their registry, random.c, the workload), then allocated.
 * Context: main thread.
 */
import { GLOBAL_COUNTER_NAMES } from '../hw/counters.js';
import {
  ARRIVAL_RECORD_WORDS,
  ARRIVAL_RING_CAPACITY,
  CONTROL_WORDS,
  CPU_F64,
  CPU_WORDS,
  IRQ_RECORD_WORDS,
  IRQ_RING_CAPACITY,
  type MachineRegions,
  type RegionDecl,
} from '../hw/layout.js';
import { timelineRingWords } from '../hw/timeline-layout.js';
import { DOORBELL_WORDS } from '../shm/doorbell.js';
import { LINE_WORDS, MIN_SHM_BYTES, ShmPlanner } from '../shm/layout.js';
import { MpscRing, SpscRing } from '../shm/ring.js';

export interface MachineShape {
  cpus: number;
  threads: number;
  /** Regions the machine's parts declare (the kernel's mechanisms, random.c), by name. */
  parts: Record<string, RegionDecl>;
  /** Extra named regions a workload needs (name → Int32 words). */
  workloadRegions: Record<string, number>;
  /** Records per thread of the timeline rings (a power of two); 0: no timeline (none reserved). */
  timelineRecords?: number;
}

/** Plan and allocate the buffer. Context: main thread. */
export function planMachine(shape: MachineShape): { sab: SharedArrayBuffer; regions: MachineRegions } {
  const p = new ShmPlanner();
  const r: Omit<MachineRegions, 'map'> = {
    control: p.reserve('control', CONTROL_WORDS),
    globalCounters: p.reserve('globalCounters', Math.max(LINE_WORDS, GLOBAL_COUNTER_NAMES.length)),
    cpu: p.reserve('cpu', CPU_WORDS * shape.cpus),
    cpuF64: p.reserve('cpuF64', 2 * CPU_F64 * shape.cpus),
    bells: p.reserve('bells', DOORBELL_WORDS * shape.threads),
    irqRings: [],
    arrivals: [],
    parts: {},
    workload: {},
    timeline: [],
  };
  for (const [name, { words, count }] of Object.entries(shape.parts)) {
    const bases: number[] = [];
    for (let i = 0; i < count; i++) bases.push(p.reserve(count === 1 ? name : `${name}${i}`, words));
    r.parts[name] = bases;
  }
  for (let c = 0; c < shape.cpus; c++) {
    r.irqRings.push(p.reserve(`irqRing${c}`, MpscRing.wordsFor(IRQ_RING_CAPACITY, IRQ_RECORD_WORDS)));
    r.arrivals.push(p.reserve(`arrivals${c}`, SpscRing.wordsFor(ARRIVAL_RING_CAPACITY, ARRIVAL_RECORD_WORDS)));
  }
  for (const [name, words] of Object.entries(shape.workloadRegions)) r.workload[name] = p.reserve(`wl:${name}`, words);
  const tlRecords = shape.timelineRecords ?? 0;
  if (tlRecords > 0)
    for (let t = 0; t < shape.threads; t++) r.timeline.push(p.reserve(`timeline${t}`, timelineRingWords(tlRecords)));
  const { sab, map } = p.allocate(MIN_SHM_BYTES);
  return { sab, regions: { ...r, map } };
}
