/**
 * The field tables of the machine's fixed-size records: every named field as [offset, words],
 * checked for overlaps and bounds when a machine's memory is planned (src/machine/memory.ts) and
 * by test/machine/layout.test.ts.
 *
 * A table is generated from the one declaration of its fields, the exported offset constants of
 * the module that owns the record (their names share a prefix: CPU_, RQ_, TB_, ...), so a new
 * field needs no second entry here: `fieldTable` finds it. Fields wider than one word say so.
 */
import { LINE_WORDS } from '../shm/layout.js';
import { LOCK_WORDS } from '../shm/lock.js';
import { CPU_COUNTER_NAMES, GLOBAL_COUNTER_NAMES } from './counters.js';
import * as L from './layout.js';

export interface RecordFields {
  /** Words (Int32, or doubles for the *F64 records) in one record. */
  size: number;
  fields: Record<string, readonly [offset: number, words: number]>;
}

/**
 * A record's field table from its owner's module namespace: every exported number whose name
 * matches `prefix`, except the names in `not` (the record's own sizes), one word each unless
 * `wide` gives its words; `extra` adds fields that have no constant of their own (a lock at 0).
 */
export function fieldTable(
  ns: Readonly<Record<string, unknown>>,
  prefix: RegExp,
  size: number,
  wide: Readonly<Record<string, number>> = {},
  not: readonly string[] = [],
  extra: RecordFields['fields'] = {},
): RecordFields {
  const fields: Record<string, readonly [number, number]> = { ...extra };
  for (const [name, v] of Object.entries(ns))
    if (typeof v === 'number' && prefix.test(name) && !not.includes(name)) fields[name] = [v, wide[name] ?? 1];
  return { size, fields };
}

const _lock = { lock: [0, LOCK_WORDS] } as const;

/** The records the machine's memory holds (src/hw/layout.ts), each generated from its constants. */
export const RECORD_FIELDS: Record<string, RecordFields> = {
  control: fieldTable(L, /^C_[A-Z_]+$/, L.CONTROL_WORDS, { C_IRQ_CPU_NS: 2 }),
  cpu: fieldTable(L, /^CPU_[A-Z_]+$/, L.CPU_WORDS, { CPU_COUNTERS: CPU_COUNTER_NAMES.length }, [
    'CPU_WORDS',
    'CPU_F64',
  ]),
  cpuF64: fieldTable(L, /^CPUF_[A-Z_0-9]+$/, L.CPU_F64),
  globalCounters: {
    size: Math.max(LINE_WORDS, GLOBAL_COUNTER_NAMES.length),
    fields: { counters: [0, GLOBAL_COUNTER_NAMES.length] },
  },
};

/**
 * Every problem with a record's field table: a field outside its record (or of no words), or
 * two fields sharing a word. Empty when the layout is sound.
 */
export function recordFieldProblems(tables: Record<string, RecordFields>): string[] {
  const out: string[] = [];
  for (const [record, { size, fields }] of Object.entries(tables)) {
    const spans = Object.entries(fields)
      .map(([name, [at, words]]) => ({ name, at, end: at + words }))
      .sort((a, b) => a.at - b.at);
    for (const f of spans) {
      if (!Number.isInteger(f.at) || f.at < 0 || f.end > size || f.end <= f.at)
        out.push(`${record}.${f.name}: words ${f.at}..${f.end - 1} do not fit a record of ${size} words`);
    }
    // Sorted by start: a field overlaps an earlier one iff it starts before the furthest end so far.
    let reach = spans[0];
    for (const f of spans.slice(1)) {
      if (f.at < reach.end)
        out.push(`${record}: ${f.name} (word ${f.at}) overlaps ${reach.name} (words ${reach.at}..${reach.end - 1})`);
      if (f.end > reach.end) reach = f;
    }
  }
  return out;
}

/** Throw if any record's field table has a problem (called when a machine's memory is planned). */
export function assertLayoutSound(tables: Record<string, RecordFields> = RECORD_FIELDS): void {
  const problems = recordFieldProblems(tables);
  if (problems.length) throw new Error(`machine layout: ${problems.join('; ')}`);
}
