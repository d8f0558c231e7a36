/**
 * report.html in a real browser: Debian's Chromium, headless, driven by its command line only
 * (no npm dependency, no DevTools socket). `--dump-dom` prints the DOM after the load event, by
 * which time the page's own script has measured every plot and set data-rendered attributes;
 * `--enable-logging=stderr` prints every console message and uncaught error as a `CONSOLE` line.
 * A control page that logs an error proves the capture works on this Chromium, so "no console
 * lines" can fail. Skipped when /usr/bin/chromium is absent (CI installs it: apt-get install chromium).
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/report/compare/compare.js';
import { renderCompareHtml } from '../../src/report/compare/compare-html.js';
import { writeResults } from '../../src/report/run/write.js';
import type { RunResults } from '../../src/report/types.js';
import { DEFAULT_STRATEGIES, syntheticResults } from '../fixtures/synthetic.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);

/** A Chromium run must not hang the suite. */
const CHROMIUM_TIMEOUT_MS = 30_000;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'deferlab-browser-'));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

async function chromium(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const profile = await mkdtemp(join(root, 'profile-'));
  const flags = [
    '--headless',
    '--no-sandbox', // CI runs as root
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    ...args,
  ];
  return new Promise((resolve, reject) => {
    execFile(CHROMIUM, flags, { timeout: CHROMIUM_TIMEOUT_MS, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`chromium ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/** The page's console messages and uncaught errors, from Chromium's stderr log. */
const consoleLines = (stderr: string): string[] => stderr.split('\n').filter((l) => /:CONSOLE[:(\]]/.test(l));

async function dumpDom(file: string): Promise<{ dom: string; console: string[] }> {
  const { stdout, stderr } = await chromium([
    '--enable-logging=stderr',
    '--v=0',
    '--dump-dom',
    pathToFileURL(file).href,
  ]);
  return { dom: stdout, console: consoleLines(stderr) };
}

describe('report.html in headless Chromium', () => {
  it.skipIf(!hasChromium)('the console capture sees errors (control page)', async () => {
    const file = join(root, 'control.html');
    await writeFile(
      file,
      '<!DOCTYPE html><body><script>console.error("control-error"); missingFunction();</script></body>',
    );
    const { console: lines } = await dumpDom(file);
    expect(lines.some((l) => l.includes('control-error'))).toBe(true);
    expect(lines.some((l) => l.includes('Uncaught ReferenceError'))).toBe(true);
  });

  it.skipIf(!hasChromium)(
    'renders every plot with a size and a line, without console errors or injection',
    async () => {
      const hostile = '<img src=x onerror="console.error(\'injected\')">';
      const r: RunResults = syntheticResults({
        samples: 500,
        trials: 3,
        msgSizes: [64, 4096],
        strategies: [...DEFAULT_STRATEGIES.slice(0, 3), { ...DEFAULT_STRATEGIES[3], label: hostile }],
      });
      const dir = join(root, 'run');
      await writeResults(dir, r);
      const { dom, console: lines } = await dumpDom(join(dir, 'report.html'));

      expect(lines).toEqual([]);
      expect(dom).toMatch(/<body[^>]*data-rendered="ok"/);
      const expectedPlots = r.points.reduce(
        (a, p) => a + new Set(p.strategies.flatMap((s) => Object.keys(s.merged))).size,
        0,
      );
      expect(dom).toContain(`data-plots="${expectedPlots}"`);
      const svgs = [...dom.matchAll(/<svg[^>]*data-stage="([a-z_]+)"[^>]*>/g)];
      expect(svgs).toHaveLength(expectedPlots);
      for (const [tag, stage] of svgs) {
        const size = /data-rendered-size="(\d+)x(\d+)"/.exec(tag);
        const paths = /data-rendered-paths="(\d+)"/.exec(tag);
        expect(size, stage).not.toBeNull();
        expect(Number(size![1]), stage).toBeGreaterThan(0);
        expect(Number(size![2]), stage).toBeGreaterThan(0);
        expect(Number(paths![1]), stage).toBeGreaterThanOrEqual(1);
      }
      expect(dom).not.toMatch(/<img/i); // the label stayed text
    },
  );

  it.skipIf(!hasChromium)(
    "compare's report.html draws every run's line (and the merged one) in each plot",
    async () => {
      const strategies = DEFAULT_STRATEGIES.slice(0, 2);
      const inputs = [1, 2].map((seed) => ({
        name: `run${seed}`,
        path: `run${seed}/results.json`,
        results: syntheticResults({ seed, samples: 300, trials: 2, strategies }),
      }));
      const model = compareRuns(inputs, { merge: true, stages: ['one_way', 'work'] });
      const file = join(root, 'compare.html');
      await writeFile(file, renderCompareHtml(model, inputs));
      const { dom, console: lines } = await dumpDom(file);
      expect(lines).toEqual([]);
      expect(dom).toMatch(/<body[^>]*data-rendered="ok"/);
      const paths = [...dom.matchAll(/<svg[^>]*data-rendered-paths="(\d+)"/g)].map((m) => Number(m[1]));
      expect(paths).toEqual(model.rows.map(() => 3)); // 2 runs + merged
    },
  );

  it.skipIf(!hasChromium)('takes a screenshot', async () => {
    const dir = join(root, 'shot');
    await writeResults(dir, syntheticResults({ samples: 300, trials: 3 }));
    const png = join(root, 'report.png');
    await chromium([
      '--hide-scrollbars',
      `--screenshot=${png}`,
      '--window-size=1200,2400',
      pathToFileURL(join(dir, 'report.html')).href,
    ]);
    const bytes = await readFile(png);
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(bytes.readUInt32BE(16)).toBe(1200); // IHDR width
  });
});
