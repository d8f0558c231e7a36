/**
 * The machine's record layouts: every named field is in the field table, and the table has no
 * overlapping or out-of-record fields (checked when a machine's memory is planned, layout-fields.ts; here the check itself is
 * shown to catch what it is for).
 */
import { describe, expect, it } from 'vitest';
import * as Words from '../../src/hw/layout.js';
import * as F from '../../src/hw/layout-fields.js';

/** The layout's words and the field tables that list them. */
const L = { ...Words, ...F };

/** Exported offset constants of each record, found by their prefix (sizes excluded). */
const PREFIXES: Record<string, { re: RegExp; not: string[] }> = {
  control: { re: /^C_[A-Z_]+$/, not: [] },
  cpu: { re: /^CPU_[A-Z_]+$/, not: ['CPU_WORDS', 'CPU_F64', 'CPU_COUNTER_NAMES'] },
  cpuF64: { re: /^CPUF_[A-Z_]+$/, not: [] },
  rq: { re: /^RQ_[A-Z_]+$/, not: ['RQ_WORDS'] },
  timerBase: { re: /^TB_[A-Z_]+$/, not: [] },
  task: { re: /^T_[A-Z_]+$/, not: [] },
  taskF64: { re: /^TF_[A-Z_]+$/, not: [] },
  object: { re: /^O_[A-Z_]+$/, not: [] },
  pool: { re: /^P_[A-Z_]+$/, not: [] },
};

describe('machine record layout', () => {
  it('has no overlapping or out-of-record fields', () => {
    expect(L.recordFieldProblems(L.RECORD_FIELDS)).toEqual([]);
  });

  it.each(Object.entries(PREFIXES))('lists every exported %s offset in the field table', (record, { re, not }) => {
    const exported = Object.entries(L)
      .filter(([name, v]) => re.test(name) && !not.includes(name) && typeof v === 'number')
      .map(([name]) => name)
      .sort();
    expect(exported.length).toBeGreaterThan(0);
    const listed = Object.keys(L.RECORD_FIELDS[record].fields).filter((n) => re.test(n));
    expect(listed.sort()).toEqual(exported);
    for (const name of exported)
      expect(L.RECORD_FIELDS[record].fields[name][0]).toBe((L as Record<string, unknown>)[name]);
  });

  it('finds two fields sharing a word, however far apart they start', () => {
    const problems = L.recordFieldProblems({
      r: { size: 16, fields: { LIST: [0, 8], A: [2, 1], B: [7, 1], C: [8, 1] } },
    });
    expect(problems).toEqual(['r: A (word 2) overlaps LIST (words 0..7)', 'r: B (word 7) overlaps LIST (words 0..7)']);
  });

  it('finds a field that runs past its record or has no words', () => {
    const problems = L.recordFieldProblems({ r: { size: 4, fields: { A: [0, 1], LIST: [2, 3], E: [1, 0] } } });
    expect(problems).toContain('r.LIST: words 2..4 do not fit a record of 4 words');
    expect(problems).toContain('r.E: words 1..0 do not fit a record of 4 words');
  });
});
