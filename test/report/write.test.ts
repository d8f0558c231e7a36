import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hgrmFiles, parseHgrm, sanitizeLabel } from '../../src/report/run/hgrm.js';
import {
  readResults,
  removeTempsInFlight,
  reportFromDir,
  writeFileAtomic,
  writeResults,
} from '../../src/report/run/write.js';
import type { RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const HOSTILE = '<script>alert(1)</script>';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'deferlab-report-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function results(): RunResults {
  return syntheticResults({
    samples: 400,
    trials: 3,
    msgSizes: [64, 4096],
    strategies: [DEFAULT_STRATEGIES[0], { ...DEFAULT_STRATEGIES[1], label: HOSTILE }, DEFAULT_STRATEGIES[2]],
  });
}

describe('writeResults / readResults', () => {
  it('writes every file (creating the directory), atomically, and returns their paths', async () => {
    const dir = join(root, 'run', 'nested');
    const r = results();
    const paths = await writeResults(dir, r);
    const names = await readdir(dir);
    expect(paths[0]).toBe(join(dir, 'results.json'));
    for (const p of paths) expect(existsSync(p), p).toBe(true);
    expect(names.sort()).toEqual(paths.map((p) => p.slice(dir.length + 1)).sort());
    expect(names).toContain('results.csv');
    expect(names).toContain('report.html');
    expect(names.some((n) => n.includes('.tmp-'))).toBe(false);
    const stages = r.points.flatMap((p) => p.strategies.flatMap((s) => Object.keys(s.merged)));
    expect(names.filter((n) => n.endsWith('.hgrm'))).toHaveLength(stages.length);
    expect(names).toContain('0-inline-one_way.hgrm');
    expect(names).toContain(`1-${sanitizeLabel(HOSTILE)}-handoff_to_start.hgrm`);
  });

  it('round-trips results.json, NaN included', async () => {
    const dir = join(root, 'roundtrip');
    const r = syntheticResults({ samples: 100, trials: 1 }); // one trial: NaN interval bounds
    expect(r.points[0].strategies[1].comparison![0].ciLow).toBeNaN();
    await writeResults(dir, r);
    expect(await readFile(join(dir, 'results.json'), 'utf8')).toContain('"ciLow": null');
    const back = await readResults(dir);
    expect(back).toEqual(r);
    expect(back.points[0].strategies[1].comparison![0].ciLow).toBeNaN();
  });

  it('round-trips the trial order, the control, the --until outcome and the detectable effects', async () => {
    const dir = join(root, 'roundtrip-stats');
    const r = syntheticResults({
      samples: 100,
      trials: 3,
      strategies: [DEFAULT_STRATEGIES[0], { ...DEFAULT_STRATEGIES[0], label: 'inline (control)' }],
    });
    r.control = 'inline (control)';
    r.points[0].schedule = {
      method: 'test',
      rounds: [
        ['inline (control)', 'inline'],
        ['inline', 'inline (control)'],
      ],
    };
    r.points[0].until = {
      pct: 3,
      maxTimeMs: 60_000,
      reached: false,
      rounds: 3,
      stop: 'time',
      widthPct: { 'inline (control)': Number.NaN },
    };
    const c = r.points[0].strategies[1].comparison![0];
    c.floor = { low: -1, high: 2 };
    c.insideFloor = true;
    expect(c.detectable).toBeGreaterThan(0);
    await writeResults(dir, r);
    expect(await readResults(dir)).toEqual(r);
  });

  it('writes .hgrm files that parse back to each merged histogram total count and max', async () => {
    const dir = join(root, 'hgrm');
    const r = results();
    await writeResults(dir, r);
    const files = hgrmFiles(r);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const parsed = parseHgrm(await readFile(join(dir, f.name), 'utf8'));
      const summary = r.points[f.point].strategies.find((s) => s.label === f.label)!.merged[f.stage]!.summary;
      expect(parsed.totalCount, f.name).toBe(summary.count);
      // The file's max is the decoded histogram's: equal to the recorded max within 3 significant digits.
      expect(Math.abs(parsed.maxUs * 1000 - summary.max) / summary.max, f.name).toBeLessThan(1e-3);
    }
  });

  it('report.html has a plot per stage present and the hostile label escaped', async () => {
    const dir = join(root, 'html');
    const r = results();
    await writeResults(dir, r);
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    for (const [pi, p] of r.points.entries()) {
      const present = new Set(p.strategies.flatMap((s) => Object.keys(s.merged)));
      for (const stage of present)
        expect(html, `${pi} ${stage}`).toMatch(new RegExp(`<svg[^>]*data-stage="${stage}" data-point="${pi}"`));
      expect(html.match(new RegExp(`data-point="${pi}" role="img"`, 'g'))).toHaveLength(present.size);
    }
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('gives distinct .hgrm names to labels that sanitize alike', () => {
    const r = syntheticResults({
      samples: 20,
      trials: 1,
      strategies: [
        DEFAULT_STRATEGIES[0],
        { ...DEFAULT_STRATEGIES[0], label: 'a/b' },
        { ...DEFAULT_STRATEGIES[0], label: 'a b' },
      ],
    });
    const names = hgrmFiles(r)
      .filter((f) => f.stage === 'one_way')
      .map((f) => f.name);
    expect(names).toEqual(['0-inline-one_way.hgrm', '0-a_b-one_way.hgrm', '0-a_b_2-one_way.hgrm']);
    expect(sanitizeLabel('..')).toBe('strategy');
    expect(sanitizeLabel('../../etc/passwd')).toBe('.._.._etc_passwd');
  });

  it('re-renders csv, hgrm and html from results.json alone (deferlab report DIR)', async () => {
    const dir = join(root, 'rerender');
    const r = results();
    const written = await writeResults(dir, r);
    for (const p of written.slice(1)) await rm(p);
    const { paths, table } = await reportFromDir(dir);
    expect(paths.sort()).toEqual(written.slice(1).sort());
    for (const p of paths) expect(existsSync(p)).toBe(true);
    for (const s of r.points[0].strategies) expect(table).toContain(s.label);
  });

  it('still gives the table when the derived files cannot be written (deferlab report on a read-only directory)', async () => {
    const dir = join(root, 'rerender-blocked');
    const r = results();
    await writeResults(dir, r);
    // A directory where results.csv goes: its write fails as on a read-only directory, even as root.
    await rm(join(dir, 'results.csv'));
    await mkdir(join(dir, 'results.csv'));
    const { paths, table, writeProblem } = await reportFromDir(dir);
    expect(paths).toEqual([]);
    expect(writeProblem).toMatch(/could not re-render the files derived from .*results\.json into /);
    for (const s of r.points[0].strategies) expect(table).toContain(s.label);
  });

  it('writes a run that failed before any point finished', async () => {
    const dir = join(root, 'failed-empty');
    const r: RunResults = {
      ...syntheticResults({ samples: 10, trials: 1 }),
      status: 'failed',
      error: { message: 'cpu1 worker exited with code 1', thread: 'cpu1', cpu: 1 },
      points: [],
    };
    const paths = await writeResults(dir, r);
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual(['results.json', 'results.csv', 'report.html']);
    expect(await readResults(dir)).toEqual(r);
    expect(await readFile(join(dir, 'report.html'), 'utf8')).toContain('cpu1 worker exited with code 1');
  });

  it('refuses invalid results and writes nothing', async () => {
    const dir = join(root, 'invalid');
    const bad = results() as unknown as { points: Array<{ strategies: Array<{ merged: Record<string, unknown> }> }> };
    bad.points[0].strategies[0].merged.handoff = bad.points[0].strategies[0].merged.one_way;
    await expect(writeResults(dir, bad as unknown as RunResults)).rejects.toThrow(
      /do not match the results model[\s\S]*points\[0\]\.strategies\[0\]\.merged/,
    );
    expect(existsSync(dir)).toBe(false);
  });
});

describe('readResults errors name the file and the fix', () => {
  const write = async (name: string, text: string): Promise<string> => {
    const dir = join(root, name);
    await writeResults(dir, syntheticResults({ samples: 10, trials: 1 }));
    await writeFile(join(dir, 'results.json'), text);
    return dir;
  };

  it('missing', async () => {
    const dir = join(root, 'nothing-here');
    await expect(readResults(dir)).rejects.toMatchObject({
      code: 'ERR_RESULTS_MISSING',
      message: expect.stringContaining(`${join(dir, 'results.json')} does not exist`),
    });
  });

  it('not JSON', async () => {
    const dir = await write('notjson', 'hello');
    await expect(readResults(dir)).rejects.toMatchObject({
      code: 'ERR_RESULTS_NOT_DEFERLAB',
      message: expect.stringMatching(/results\.json is not a deferlab results file: not JSON/),
    });
  });

  it("not JSON, on one line whatever the file holds (V8's message echoes the input, newlines and all)", async () => {
    for (const text of ['hi\nthere\n', '{"a":\n  1,,\n}']) {
      const dir = await write(`notjson-${text.length}`, text);
      const err = await readResults(dir).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).not.toContain('\n');
      expect((err as Error).message).toMatch(/not JSON \([^()]+\)$/);
    }
  });

  it('some other JSON', async () => {
    const dir = await write('otherjson', '{"name":"package"}');
    await expect(readResults(dir)).rejects.toMatchObject({
      code: 'ERR_RESULTS_NOT_DEFERLAB',
      message: expect.stringMatching(
        /results\.json is not a deferlab results file: expected a JSON object with "schemaVersion"/,
      ),
    });
  });

  it('another schemaVersion', async () => {
    const dir = await write('v2', JSON.stringify({ schemaVersion: 2, points: [], meta: { deferlab: '9.0.0' } }));
    await expect(readResults(dir)).rejects.toMatchObject({
      code: 'ERR_RESULTS_SCHEMA_VERSION',
      message: expect.stringMatching(
        /results\.json has schemaVersion 2; this deferlab reads schemaVersion 1: render it with deferlab 9\.0\.0/,
      ),
    });
  });

  /** The first line of readResults' error: what `deferlab report` prints. */
  const firstLine = async (dir: string): Promise<string> => {
    const e = await readResults(dir).then(
      () => undefined,
      (err: Error & { code?: string }) => err,
    );
    expect(e?.code).toBe('ERR_RESULTS_INVALID');
    return e?.message.split('\n')[0] ?? '';
  };

  it('a wrong field: the first line says which and why', async () => {
    const r = syntheticResults({ samples: 10, trials: 1 }) as unknown as { status: string };
    r.status = 'done';
    const dir = await write('badfield', JSON.stringify(r));
    expect(await firstLine(dir)).toBe(
      `${join(dir, 'results.json')} is not a valid deferlab results file: ` +
        'status must be one of "completed", "interrupted", "failed" (got "done")',
    );
  });

  it('a counter that is not a number: the JSON path of the field and the value', async () => {
    const r = syntheticResults({ samples: 10, trials: 1 }) as unknown as {
      points: Array<{ strategies: Array<{ trials: Array<{ counters: Record<string, unknown> }> }> }>;
    };
    r.points[0].strategies[1].trials[0].counters.handoffs = 'many';
    const dir = await write('many', JSON.stringify(r));
    expect(await firstLine(dir)).toBe(
      `${join(dir, 'results.json')} is not a valid deferlab results file: ` +
        'points[0].strategies[1].trials[0].counters.handoffs must be a number (got "many")',
    );
  });

  it('a skeleton without meta: names the first missing field and counts the rest', async () => {
    const dir = await write('skeleton', '{"schemaVersion":1,"points":[],"status":"completed"}');
    const line = await firstLine(dir);
    expect(line).toBe(
      `${join(dir, 'results.json')} is not a valid deferlab results file: ` +
        'meta is missing (expected an object) (and 2 more problems)',
    );
    // Every problem is listed on the following lines, for a reader of the whole message.
    const all = await readResults(dir).catch((e: Error) => e.message);
    expect(String(all).split('\n').slice(1)).toEqual([
      'meta is missing (expected an object)',
      'baseline is missing (expected a string)',
      'sweep is missing (expected an object)',
    ]);
  });
});

describe('writeResults when the directory cannot take the results', () => {
  it('never uses a recursive mkdir: a path under /proc fails at once instead of hanging', async () => {
    if (!existsSync('/proc/self')) return; // Linux only
    const r = syntheticResults({ samples: 10, trials: 1 });
    const e = (await writeResults('/proc/deferlab-no-such/x', r).catch((err: unknown) => err)) as Error & {
      code?: string;
      rescuedTo?: string;
    };
    expect(e.code).toBe('ERR_RESULTS_WRITE');
    if (e.rescuedTo) await rm(e.rescuedTo, { recursive: true, force: true });
  }, 10_000);

  it('saves a copy of results.json under the temp directory and says where', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'in the way\n');
    const r = syntheticResults({ samples: 10, trials: 1 });
    const e = (await writeResults(file, r).catch((err: unknown) => err)) as Error & {
      code?: string;
      rescuedTo?: string;
    };
    expect(e.code).toBe('ERR_RESULTS_WRITE');
    expect(e.rescuedTo).toBeDefined();
    const rescued = e.rescuedTo!;
    try {
      expect(rescued.startsWith(tmpdir())).toBe(true);
      expect(e.message.split('\n')[0]).toBe(
        `could not write ${join(file, 'results.json')}: ${file} exists and is not a directory; ` +
          `a copy of results.json was saved in ${rescued} instead ('deferlab report ${rescued}' renders the rest)`,
      );
      expect(await readResults(rescued)).toEqual(r);
    } finally {
      await rm(rescued, { recursive: true, force: true });
    }
  });
});

describe('a results directory reused for another run', () => {
  it("keeps no .hgrm file of the previous run's strategies beside the new results", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'deferlab-reuse-'));
    try {
      const first = syntheticResults({ trials: 2, samples: 50 });
      await writeResults(dir, first);
      const before = (await readdir(dir)).filter((n) => n.endsWith('.hgrm'));
      const second = syntheticResults({ trials: 2, samples: 50, strategies: DEFAULT_STRATEGIES.slice(0, 1) });
      const written = await writeResults(dir, second);
      const after = (await readdir(dir)).filter((n) => n.endsWith('.hgrm')).sort();
      const expected = hgrmFiles(second)
        .map((f) => f.name)
        .sort();
      expect(after).toEqual(expected);
      expect(before.length).toBeGreaterThan(after.length); // the first run had more
      expect(written.filter((p) => p.endsWith('.hgrm'))).toHaveLength(expected.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('deferlab report on a damaged results.json', () => {
  /** A written run whose results.json `damage` then edits; `check` sees the directory; removed after. */
  async function damaged(
    damage: (json: RunResults) => unknown,
    check: (dir: string, files: string[]) => Promise<void>,
  ) {
    const dir = await mkdtemp(join(tmpdir(), 'deferlab-damaged-'));
    try {
      await writeResults(dir, syntheticResults({ trials: 2, samples: 50 }));
      const files = (await readdir(dir)).sort();
      const json = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8'));
      await writeFile(join(dir, 'results.json'), JSON.stringify(damage(json) ?? json));
      await check(dir, files);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const hgrms = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith('.hgrm')).sort();

  it('refuses a completed run with no point, and removes none of the files beside it', async () => {
    await damaged(
      (json) => ({ ...json, points: [] }),
      async (dir, files) => {
        await expect(reportFromDir(dir)).rejects.toThrow(/completed but holds no measured point/);
        expect((await readdir(dir)).sort()).toEqual(files);
      },
    );
  });

  it('re-renders what results.json describes and keeps a .hgrm it no longer describes', async () => {
    await damaged(
      (json) => {
        json.points[0].strategies = json.points[0].strategies.slice(0, 1);
      },
      async (dir, files) => {
        await reportFromDir(dir);
        expect(await hgrms(dir)).toEqual(files.filter((n) => n.endsWith('.hgrm')));
      },
    );
  });

  it('refuses a negative latency in a stage summary', async () => {
    await damaged(
      (json) => {
        const stages = json.points[0].strategies[0].merged;
        const first = Object.keys(stages)[0] as keyof typeof stages;
        (stages[first] as { summary: { p50: number } }).summary.p50 = -5;
      },
      async (dir) => {
        await expect(reportFromDir(dir)).rejects.toThrow(/must be a latency in ns/);
      },
    );
  });
});

describe('a process leaving at once (a second Ctrl-C)', () => {
  it('removes, synchronously, the temp file of a write still in flight', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'deferlab-inflight-'));
    const path = join(dir, 'big.hgrm');
    let done = false;
    const write = writeFileAtomic(path, 'x'.repeat(64 * 1024 * 1024)).then(
      () => 'written',
      () => 'failed',
    );
    void write.then(() => {
      done = true;
    });
    const temps = () => readdirSync(dir).filter((f) => f.includes('.tmp-'));
    // Wait on the event loop (the write needs it) until the temp file exists: the write in flight.
    while (!done && temps().length === 0) await new Promise((r) => setImmediate(r));
    expect(done, 'a 64 MiB write was caught in flight').toBe(false);
    removeTempsInFlight();
    expect(temps()).toEqual([]); // before anything else runs: what process.exit() would leave
    // The write then fails (nothing half written is renamed into place) and leaves nothing.
    expect(await write).toBe('failed');
    expect(temps()).toEqual([]);
    expect(existsSync(path)).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('outputFileList', () => {
  it('names every format by default, and with the paths written only those that wrote a file', async () => {
    const { outputFileList } = await import('../../src/report/run/formats.js');
    expect(outputFileList()).toBe('results.json, results.csv, report.html, .hgrm per stage');
    const dir = '/r';
    const all = ['results.json', 'results.csv', 'report.html', '0-inline-one_way.hgrm'].map((f) => `${dir}/${f}`);
    expect(outputFileList(all)).toBe('results.json, results.csv, report.html, .hgrm per stage');
    // A run that measured no stage writes no .hgrm, and says so by not naming them.
    expect(outputFileList(all.slice(0, 3))).toBe('results.json, results.csv, report.html');
  });
});
