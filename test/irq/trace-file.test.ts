/**
 * Reading recorded interrupt arrivals (src/irq/trace-file.ts): both formats, each malformed case
 * with its line number, the CPU map, loop and scale, and the sample under examples/.
 */
import { describe, expect, it } from 'vitest';
import {
  arrivalAt,
  IrqTraceError,
  irqAt,
  parseIrqTrace,
  parseIrqTraceMap,
  readIrqTrace,
} from '../../src/irq/trace-file.js';

const perf = (cpu: number, t: string, irq: number | string, comm = 'swapper', tid = '0') =>
  `${comm.padStart(16)} ${tid.padStart(6)} [${String(cpu).padStart(3, '0')}] ${t}: irq:irq_handler_entry: irq=${irq} name=eth0-rx-${cpu}`;

const PERF = [
  '# perf script --header would print lines like this one',
  perf(3, '100.000010', 45),
  perf(5, '100.000020', 46),
  '         swapper      0 [003] 100.000025: irq:irq_handler_exit: irq=45 ret=handled',
  perf(3, '100.000030', 45, 'Web Content', '4242'), // a COMM with a space
  '',
  perf(5, '100.000045', 46, 'nginx', '2145/2150'), // PID/TID (-F +pid)
].join('\n');

/** The error parseIrqTrace throws for `text`, or fails the test. */
function errorOf(text: string, opts: Parameters<typeof parseIrqTrace>[2] = { cpus: 2 }): IrqTraceError {
  try {
    parseIrqTrace(text, 'trace.txt', opts);
  } catch (e) {
    expect(e).toBeInstanceOf(IrqTraceError);
    return e as IrqTraceError;
  }
  throw new Error('expected an IrqTraceError');
}

/** `lines` are refused with an error naming line `line` (1-based) and matching `re`. */
function expectLineError(lines: string[], line: number, re: RegExp): void {
  const e = errorOf(lines.join('\n'));
  expect(e.line).toBe(line);
  expect(e.message).toMatch(new RegExp(`^trace\\.txt line ${line}: `));
  expect(e.message).toMatch(re);
}

describe('perf script output', () => {
  const plan = parseIrqTrace(PERF, 'trace.txt', { cpus: 2 });

  it('keeps irq_handler_entry samples, skips other events, and places host CPUs by first appearance', () => {
    expect(plan.format).toBe('perf');
    expect(plan.events).toBe(4);
    expect(plan.otherEvents).toBe(1);
    expect(plan.mapping).toEqual([
      { host: 3, cpu: 0 },
      { host: 5, cpu: 1 },
    ]);
    expect([...plan.cpus[0].offsetsNs]).toEqual([0, 20_000]);
    expect([...plan.cpus[1].offsetsNs]).toEqual([10_000, 35_000]);
    expect([...plan.cpus[0].irqs]).toEqual([45, 45]);
    expect([...plan.cpus[1].irqs]).toEqual([46, 46]);
    expect(plan.irqNames.get(45)).toBe('eth0-rx-3');
    expect(plan.spanNs).toBe(35_000);
  });

  it('reads 9-decimal (--ns) times exactly, and an old kernel’s handler= name', () => {
    const p = parseIrqTrace(
      [
        '  swapper 0 [000] 84215.317204001: irq:irq_handler_entry: irq=9 handler=acpi',
        '  swapper 0 [000] 84215.317204999: irq:irq_handler_entry: irq=9 handler=acpi',
      ].join('\n'),
      't',
      { cpus: 1 },
    );
    expect([...p.cpus[0].offsetsNs]).toEqual([0, 998]);
    expect(p.irqNames.get(9)).toBe('acpi');
  });

  it('passes over a period perf prints before the event, and CRLF line ends', () => {
    const p = parseIrqTrace(
      '  swapper 0 [001] 7.000001:          1 irq:irq_handler_entry: irq=3 name=a\r\n' +
        '  swapper 0 [001] 7.000002:          1 irq:irq_handler_entry: irq=3 name=a\r\n',
      't',
      { cpus: 1 },
    );
    expect([...p.cpus[0].offsetsNs]).toEqual([0, 1000]);
  });

  it('refuses arrivals given out of order (test/irq/trace-order.test.ts has the cases)', () => {
    expectLineError([perf(0, '5.000300', 1), perf(0, '5.000100', 2)], 2, /before line 1's 5\.000300 s/);
  });

  it.each([
    ['a line that is not a sample', [perf(3, '1.000001', 45), 'garbage here'], 2, /is not a perf script sample line/],
    [
      'a sample without irq=',
      [perf(3, '1.000001', 45), '  swapper 0 [003] 1.000002: irq:irq_handler_entry: name=x'],
      2,
      /without irq=/,
    ],
    ['irq= that is not a number', ['# c', perf(3, '1.000001', 'x')], 2, /irq= must be a whole number \(got "x"\)/],
    [
      'a CPU beyond any host',
      [perf(3, '1.000001', 45), perf(9000, '1.000002', 45)],
      2,
      /the CPU must be from 0 to 8191/,
    ],
    [
      'a time without its fraction',
      ['  swapper 0 [003] 12: irq:irq_handler_entry: irq=1 name=a'],
      1,
      /is not a perf script sample line/,
    ],
  ])('refuses %s, naming its line', (_what, lines, line, re) => expectLineError(lines, line, re));

  it('says when a perf trace has samples but none of irq_handler_entry', () => {
    const e = errorOf('  swapper 0 [003] 1.000001: irq:softirq_entry: vec=3 [action=NET_RX]');
    expect(e.line).toBeUndefined();
    expect(e.message).toBe(
      'trace.txt: holds 1 perf samples but none of irq:irq_handler_entry; record with perf record -e irq:irq_handler_entry',
    );
  });
});

describe('CSV time_ns,cpu,irq', () => {
  it('reads it with or without the header', () => {
    for (const head of [['time_ns,cpu,irq'], [], ['# a comment', 'TIME_NS, cpu, irq']]) {
      const p = parseIrqTrace([...head, '1000,2,30', '1500,0,31', '2500,2,30'].join('\n'), 'x.csv', { cpus: 2 });
      expect(p.format).toBe('csv');
      expect(p.mapping).toEqual([
        { host: 2, cpu: 0 },
        { host: 0, cpu: 1 },
      ]);
      expect([...p.cpus[0].offsetsNs]).toEqual([0, 1500]);
      expect([...p.cpus[1].offsetsNs]).toEqual([500]);
      expect(p.irqNames.size).toBe(0);
    }
  });

  it.each([
    [
      'too few fields',
      ['time_ns,cpu,irq', '1000,2,30', '1500,2'],
      3,
      /has 2 fields, not the 3 of time_ns,cpu,irq \("1500,2"\)/,
    ],
    ['too many fields', ['1000,2,30,7'], 1, /has 4 fields, not the 3/],
    ['a negative time', ['1000,2,30', '-5,2,30'], 2, /time_ns must be a whole number from 0/],
    ['a fractional time', ['1000.5,2,30'], 1, /time_ns must be a whole number/],
    ['a CPU that is a word', ['1000,two,30'], 1, /cpu must be a whole number from 0 to 8191 \(got "two"\)/],
    ['an empty irq', ['1000,2,'], 1, /irq must be a whole number .*got ""/],
    ['a header after data', ['1000,2,30', 'time_ns,cpu,irq'], 2, /the header time_ns,cpu,irq must be the first line/],
  ])('refuses %s, naming its line', (_what, lines, line, re) => expectLineError(lines, line, re));

  it('refuses a file with no arrival', () => {
    expect(errorOf('# nothing\n\n').message).toBe('trace.txt: is empty (only blank lines and comments)');
    expect(errorOf('time_ns,cpu,irq\n').message).toBe('trace.txt: holds no interrupt arrival');
  });
});

describe('mapping host CPUs onto emulated CPUs', () => {
  const csv = ['10,3,1', '20,5,2', '30,7,3', '40,3,1', '50,5,2'].join('\n');

  it('follows a map, merging host CPUs mapped together and dropping the unmapped ones', () => {
    const p = parseIrqTrace(csv, 't', { cpus: 2, map: '5:0,7:0' });
    expect([...p.cpus[0].offsetsNs]).toEqual([0, 10, 30]); // from host 5's first arrival at 20
    expect([...p.cpus[0].irqs]).toEqual([2, 3, 2]);
    expect(p.cpus[0].hostCpus).toEqual([5, 7]);
    expect(p.cpus[1].offsetsNs.length).toBe(0);
    expect(p.dropped).toEqual([{ host: 3, events: 2 }]);
    expect(p.events).toBe(3);
  });

  it('takes a parsed map too', () => {
    const p = parseIrqTrace(csv, 't', { cpus: 3, map: new Map([[7, 2]]) });
    expect([...p.cpus[2].irqs]).toEqual([3]);
  });

  it('without a map, refuses more host CPUs than emulated ones, suggesting a map', () => {
    expect(errorOf(csv).message).toBe(
      'trace.txt: has arrivals on 3 host CPUs (3, 5, 7) but the machine has 2 CPUs; choose which to replay with a map like 3:0,5:1, or raise --cpus',
    );
  });

  it('refuses a map that places no arrival', () => {
    expect(errorOf(csv, { cpus: 2, map: '9:0' }).message).toBe(
      'trace.txt: has no arrival on the host CPUs the map names (9); its arrivals are on host CPUs 3, 5, 7',
    );
  });

  it.each([
    ['', /must not be empty/],
    ['3-0', /must be HOST:CPU pairs separated by commas, like 3:0,5:1 \("3-0" is not one\)/],
    ['3:0,3:1', /must name each host CPU once \(host CPU 3 is given twice\)/],
    ['3:2', /must map onto emulated CPUs 0 to 1 \(3:2: the machine has 2 CPUs\)/],
    ['9999:0', /must name host CPUs from 0 to 8191/],
  ])('parseIrqTraceMap refuses %j', (spec, re) => {
    const r = parseIrqTraceMap(spec, 2);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(re);
  });

  it('parseIrqTraceMap reads spaces around pairs', () => {
    const r = parseIrqTraceMap(' 3:0 , 5:1', 2);
    expect(r.ok && [...r.map]).toEqual([
      [3, 0],
      [5, 1],
    ]);
  });
});

describe('scale and loop', () => {
  const csv = ['1000,0,1', '2000,0,2', '4000,0,3'].join('\n');

  it('scale stretches every offset, the span and the period', () => {
    const p = parseIrqTrace(csv, 't', { cpus: 1, scale: 0.5 });
    expect([...p.cpus[0].offsetsNs]).toEqual([0, 500, 1500]);
    expect(p.spanNs).toBe(1500);
    expect(p.periodNs).toBe(1500 + 750); // span + one mean gap, scaled
  });

  it.each([0, -1, Number.NaN, 1e6])('refuses the scale %s', (scale) => {
    expect(errorOf(csv, { cpus: 1, scale }).message).toMatch(/^trace\.txt: the time scale must be from 0\.001 to 1000/);
  });

  it('loops: arrival k repeats the trace every period, with the same irq numbers', () => {
    const p = parseIrqTrace(csv, 't', { cpus: 1, loop: true });
    expect(p.periodNs).toBe(3000 + 1500);
    expect([0, 1, 2, 3, 4, 5, 6].map((k) => arrivalAt(p, 0, k))).toEqual([0, 1000, 3000, 4500, 5500, 7500, 9000]);
    expect([0, 3, 5].map((k) => irqAt(p, 0, k))).toEqual([1, 1, 3]);
  });

  it('without loop, the arrivals end', () => {
    const p = parseIrqTrace(csv, 't', { cpus: 2 });
    expect(arrivalAt(p, 0, 2)).toBe(3000);
    expect(arrivalAt(p, 0, 3)).toBe(Number.POSITIVE_INFINITY);
    expect(arrivalAt(p, 1, 0)).toBe(Number.POSITIVE_INFINITY); // a CPU without arrivals
  });

  it('refuses to loop a single arrival', () => {
    expect(errorOf('1000,0,1', { cpus: 1, loop: true }).message).toBe(
      'trace.txt: cannot be looped: it needs at least 2 arrivals at different times',
    );
  });
});

describe('the sample trace under examples/', () => {
  it('reads as perf output: two NIC queues on host CPUs 3 and 5, sorted per CPU', async () => {
    const p = await readIrqTrace('examples/irq-trace.perf.txt', 'examples/irq-trace.perf.txt', { cpus: 2 });
    expect(p.format).toBe('perf');
    expect(p.events).toBeGreaterThan(200);
    expect(p.mapping).toEqual([
      { host: 3, cpu: 0 },
      { host: 5, cpu: 1 },
    ]);
    expect(p.irqNames.get(45)).toMatch(/^mlx5_comp0/);
    for (const c of p.cpus) {
      expect(c.offsetsNs.length).toBeGreaterThan(100);
      for (let i = 1; i < c.offsetsNs.length; i++) expect(c.offsetsNs[i]).toBeGreaterThanOrEqual(c.offsetsNs[i - 1]);
    }
    expect(new Set(p.cpus[1].irqs)).toEqual(new Set([46]));
  });

  it('a missing file is one error naming it', async () => {
    await expect(readIrqTrace('nope.txt', '/nonexistent/nope.txt', { cpus: 1 })).rejects.toThrow(
      /^nope\.txt: does not exist$/,
    );
  });
});
