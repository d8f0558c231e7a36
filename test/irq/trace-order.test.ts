/**
 * An irq trace's arrivals must come in time order down the file (src/irq/trace-file.ts): a time
 * earlier than the previous arrival's is refused, naming the line and both times; equal times
 * are accepted (perf prints µs: two CPUs, or two handlers of a shared irq, share one). Through
 * the parser, and through the CLI in this process (exit 2, one line, nothing run).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IrqTraceError, parseIrqTrace } from '../../src/irq/trace-file.js';
import { stackLines } from '../fixtures/cli.js';
import { runMain } from '../fixtures/cli-main.js';

const perf = (cpu: number, t: string, irq: number) =>
  `         swapper      0 [${String(cpu).padStart(3, '0')}] ${t}: irq:irq_handler_entry: irq=${irq} name=eth0-rx-${cpu}`;

function refusal(text: string): IrqTraceError {
  try {
    parseIrqTrace(text, 'late.csv', { cpus: 2 });
  } catch (e) {
    expect(e).toBeInstanceOf(IrqTraceError);
    return e as IrqTraceError;
  }
  throw new Error('expected the trace to be refused');
}

describe('arrivals out of time order are refused, naming the line and both times', () => {
  it('CSV: 100 ns then 50 ns', () => {
    const e = refusal(['time_ns,cpu,irq', '100,0,45', '50,0,45'].join('\n'));
    expect(e.line).toBe(3);
    expect(e.message).toBe(
      "late.csv line 3: the time 50 ns is before line 2's 100 ns: arrivals must be in time order (equal times are fine); sort the rows by time_ns (the header stays first)",
    );
  });

  it('CSV grouped by CPU (each CPU in order, the file not): the first step back', () => {
    const e = refusal(['0,0,45', '# CPU 1', '', '300,0,45', '200,1,46', '400,1,46'].join('\n'));
    expect(e.line).toBe(5);
    expect(e.message).toMatch(/^late\.csv line 5: the time 200 ns is before line 4's 300 ns: /);
  });

  it('perf: its seconds as printed, past lines of other events', () => {
    const e = refusal(
      [
        perf(3, '5.000300', 45),
        '         swapper      0 [003] 5.000350: irq:irq_handler_exit: irq=45 ret=handled',
        perf(5, '5.000100', 46),
      ].join('\n'),
    );
    expect(e.line).toBe(3);
    expect(e.message).toMatch(
      /^late\.csv line 3: the time 5\.000100 s is before line 1's 5\.000300 s: arrivals must be in time order/,
    );
  });
});

describe('equal times are in order', () => {
  it('keeps arrivals of one time in the file’s order, on one CPU and across CPUs', () => {
    const p = parseIrqTrace(['time_ns,cpu,irq', '100,0,1', '100,1,2', '100,0,3', '250,1,4'].join('\n'), 't', {
      cpus: 2,
    });
    expect([...p.cpus[0].offsetsNs]).toEqual([0, 0]);
    expect([...p.cpus[0].irqs]).toEqual([1, 3]);
    expect([...p.cpus[1].offsetsNs]).toEqual([0, 150]);
    expect(p.events).toBe(4);
  });
});

describe('deferlab run --irq-trace with a trace out of order', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'deferlab-trace-order-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  writeFileSync(join(tmp, 'late.csv'), 'time_ns,cpu,irq\n100,0,45\n50,0,45\n');

  it('exits 2 with one line naming the line and both times, before anything runs', async () => {
    // A short run, so that a wrongly accepted trace fails the test quickly.
    const r = await runMain(
      ['run', '--irq-trace', 'late.csv', '--strategy', 'inline', '--trials', '1', '--duration', '50ms', '--no-output'],
      tmp,
    );
    expect(r.status, r.stderr).toBe(2);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stderr).toBe(
      "deferlab: irq trace late.csv line 3: the time 50 ns is before line 2's 100 ns: arrivals must be in time order (equal times are fine); sort the rows by time_ns (the header stays first)\n",
    );
    expect(r.stdout).toBe('');
  });
});
