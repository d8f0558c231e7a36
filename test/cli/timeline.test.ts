/**
 * `--timeline` end to end: a tiny real run through the CLI (test/fixtures/cli.ts) writes
 * timeline.json, which is checked against the Chrome Trace Event Format: the fields each phase
 * needs, µs timestamps in time order per track, slices properly nested per track, thread names
 * for every track, and every hand-off's flow start ('s') ending ('f') at the start of a
 * deferred-work slice. Bad values of the flags: one line, exit status 2 (in this process, through
 * main() with the real commands). No timing is asserted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TimelineFile, TraceEvent } from '../../src/report/timeline/timeline.js';
import { runCli } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const tmp = mkdtempSync(join(tmpdir(), 'deferlab-timeline-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const RUN_TEST_TIMEOUT_MS = 120_000;
/** Float slack when adding µs values (they are integer ns / 1000). */
const EPS = 1e-6;

/** Every problem the file has against the trace-event format (empty when it conforms). */
function traceProblems(file: TimelineFile, windowMs: number): string[] {
  const out: string[] = [];
  const bad = (e: TraceEvent, why: string) => out.push(`${why}: ${JSON.stringify(e)}`);
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  if (!Array.isArray(file.traceEvents)) return ['traceEvents is not an array'];
  const named = new Set<string>();
  const procs = new Set<number>();
  const flowS = new Map<number, TraceEvent>();
  const flowF = new Map<number, TraceEvent>();
  const tracks = new Map<string, TraceEvent[]>();
  for (const e of file.traceEvents) {
    if (typeof e.name !== 'string' || e.name === '') bad(e, 'no name');
    if (!num(e.pid) || !num(e.tid)) bad(e, 'no pid/tid');
    const key = `${e.pid}:${e.tid}`;
    switch (e.ph) {
      case 'M':
        if (typeof e.args?.name !== 'string' && typeof e.args?.sort_index !== 'number') bad(e, 'metadata without args');
        if (e.name === 'thread_name') named.add(key);
        if (e.name === 'process_name') procs.add(e.pid);
        continue;
      case 'X':
        if (!num(e.ts) || !num(e.dur) || e.dur! < 0) bad(e, 'X needs ts and dur >= 0');
        break;
      case 'i':
        if (!num(e.ts) || !['t', 'p', 'g'].includes(e.s ?? '')) bad(e, 'i needs ts and scope s');
        break;
      case 's':
      case 'f':
        if (!num(e.ts) || !num(e.id) || typeof e.cat !== 'string') bad(e, 'flow needs ts, id, cat');
        if (e.ph === 'f' && e.bp !== 'e') bad(e, "f should bind to its enclosing slice (bp 'e')");
        (e.ph === 's' ? flowS : flowF).has(e.id!) ? bad(e, 'flow id used twice') : undefined;
        (e.ph === 's' ? flowS : flowF).set(e.id!, e);
        break;
      case 'B':
      case 'E':
        if (!num(e.ts)) bad(e, 'B/E needs ts');
        break;
      default:
        bad(e, 'unknown phase');
        continue;
    }
    const list = tracks.get(key) ?? [];
    if (list.length === 0) tracks.set(key, list);
    list.push(e);
  }
  for (const [key, list] of tracks) {
    if (!named.has(key)) out.push(`track ${key} has no thread_name`);
    if (!procs.has(Number(key.split(':')[0]))) out.push(`process of ${key} has no process_name`);
    // Timestamps in file order never go back on a track.
    for (let k = 1; k < list.length; k++)
      if (list[k].ts! < list[k - 1].ts!) bad(list[k], `ts goes back on track ${key}`);
    // µs, not ns or ms: the slices of one window span about the window (plus the drain).
    const xs = list.filter((e) => e.ph === 'X');
    if (xs.length) {
      const span = Math.max(...xs.map((e) => e.ts! + e.dur!)) - Math.min(...xs.map((e) => e.ts!));
      if (span > windowMs * 1000 + 30e6) out.push(`track ${key} spans ${span} "µs": not µs`);
    }
    // Nesting: each slice lies inside the one open below it, or starts after it ended.
    const stack: TraceEvent[] = [];
    const bs: TraceEvent[] = [];
    for (const e of list) {
      if (e.ph === 'X') {
        while (stack.length && e.ts! >= stack[stack.length - 1].ts! + stack[stack.length - 1].dur! - EPS) stack.pop();
        const top = stack[stack.length - 1];
        if (top && e.ts! + e.dur! > top.ts! + top.dur! + EPS) bad(e, `overlaps ${top.name} without nesting in it`);
        stack.push(e);
      } else if (e.ph === 'B') bs.push(e);
      else if (e.ph === 'E' && !bs.pop()) bad(e, 'E without B');
    }
    if (bs.length) out.push(`track ${key}: ${bs.length} B without E`);
  }
  // Flows: every start has its end, later, at the start of a deferred-work slice; every end a start.
  const xAt = (pid: number, tid: number, ts: number, cat: string) =>
    (tracks.get(`${pid}:${tid}`) ?? []).some((x) => x.ph === 'X' && x.cat === cat && Math.abs(x.ts! - ts) < EPS);
  for (const [id, s] of flowS) {
    const f = flowF.get(id);
    if (!f) {
      bad(s, 'flow start without an end');
      continue;
    }
    if (f.name !== s.name || f.cat !== s.cat || f.pid !== s.pid) bad(f, 'flow end does not match its start');
    if (f.ts! < s.ts!) bad(f, 'flow ends before it starts');
    if (!xAt(s.pid, s.tid, s.ts!, 'handoff')) bad(s, 'flow start is not at a hand-off');
    if (!xAt(f.pid, f.tid, f.ts!, 'work')) bad(f, 'flow end is not at a work start');
  }
  for (const [id, f] of flowF) if (!flowS.has(id)) bad(f, 'flow end without a start');
  return out.slice(0, 20);
}

describe('--timeline', () => {
  it(
    'writes timeline.json in the trace-event format: nested per-CPU tracks and hand-off → work flows',
    async () => {
      const out = join(tmp, 'run');
      const r = await runCli(
        [
          'run',
          ...['--strategy', 'inline', '--strategy', 'workqueue'],
          ...['--trials', '1', '--duration', '100ms', '--warmup', '50ms'],
          ...['--trigger', '16', '--irq-rate', '5k', '--seed', '7'],
          ...['--timeline', '--timeline-window', '60ms', '--out', out], // 60 ms: a busy host's stall leaves events in it
        ],
        { timeoutMs: RUN_TEST_TIMEOUT_MS - 10_000 },
      );
      expect(r.stderr.split('\n').filter((l) => /error|fail/i.test(l))).toEqual([]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`timeline: ${join(out, 'timeline.json')}`);
      const file = JSON.parse(readFileSync(join(out, 'timeline.json'), 'utf8')) as TimelineFile;
      expect(traceProblems(file, 60)).toEqual([]);
      const ev = file.traceEvents;
      // One process per trial window; a track per CPU and one for the generator, named.
      expect(ev.filter((e) => e.name === 'process_name').map((e) => e.args?.name)).toEqual([
        expect.stringContaining('inline'),
        expect.stringContaining('workqueue'),
      ]);
      const threadNames = new Set(ev.filter((e) => e.name === 'thread_name').map((e) => e.args?.name));
      expect([...threadNames].sort()).toEqual(['CPU 0', 'CPU 1', 'irq generator']);
      // What the tracks hold: tasks, device interrupts by irq number, hand-offs and their work.
      const cats = new Set(ev.filter((e) => e.ph === 'X').map((e) => e.cat));
      for (const c of ['task', 'hardirq', 'handoff', 'work']) expect(cats).toContain(c);
      expect(ev.some((e) => /^irq \d+$/.test(e.name))).toBe(true);
      expect(ev.some((e) => e.ph === 's')).toBe(true);
      // Metadata says what may be missing, in numbers.
      expect(file.otherData).toMatchObject({ windowMs: 60, trials: 2 });
      for (const k of ['recordsOverwritten', 'unmatchedFlows', 'repairedSlices'] as const)
        expect(typeof file.otherData[k]).toBe('number');
      expect(Array.isArray(file.otherData.truncatedWindows)).toBe(true);
      // And the offline page exists and embeds it.
      expect(readFileSync(join(out, 'timeline.html'), 'utf8')).toContain('deferlab timeline');
    },
    RUN_TEST_TIMEOUT_MS,
  );

  it.each([
    [['--timeline', '--timeline-window', '0'], /--timeline-window.*1ms/],
    [['--timeline', '--timeline-window', 'soon'], /--timeline-window.*duration/],
    [['--timeline-window', '10ms'], /--timeline-window.*--timeline is not given/],
    [['--timeline', '--no-output'], /--timeline.*--no-output writes no files/],
    [['scenario', 'cpu-hog', '--timeline'], /scenario cpu-hog takes no --timeline/],
    [['demo', '--timeline'], /demo takes no --timeline/],
  ])('refuses %j in one line, exit 2', async (args, message) => {
    // In this process, through main() with the real commands (test/fixtures/cli-main.ts).
    const r = await runMain(['run', 'scenario', 'demo'].includes(args[0]) ? args : ['run', ...args], tmp);
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines.filter((l) => l.startsWith('deferlab:')).length).toBe(1);
  });
});
