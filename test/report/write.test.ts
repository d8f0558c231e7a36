import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHgrm } from '../../src/report/hgrm.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../../src/report/synthetic.js';
import type { RunResults } from '../../src/report/types.js';
import { hgrmFiles, readResults, reportFromDir, sanitizeLabel, writeResults } from '../../src/report/write.js';

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

  it('a wrong field', async () => {
    const r = syntheticResults({ samples: 10, trials: 1 }) as unknown as { status: string };
    r.status = 'done';
    const dir = await write('badfield', JSON.stringify(r));
    await expect(readResults(dir)).rejects.toMatchObject({
      code: 'ERR_RESULTS_INVALID',
      message: expect.stringMatching(/results\.json is not a valid deferlab results file:[\s\S]*status/),
    });
  });
});
