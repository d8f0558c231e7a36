/**
 * report.html in a real browser: Debian's Chromium, headless, driven by its command line only
 * (no npm dependency, no DevTools socket). `--dump-dom` prints the DOM after the load event, by
 * which time the page's own script has measured every plot and set data-rendered attributes;
 * `--enable-logging=stderr` prints every console message and uncaught error as a `CONSOLE` line.
 * A control page that logs an error proves the capture works on this Chromium, so "no console
 * lines" can fail. A screenshot, decoded here (node:zlib), shows each strategy's curve painted in
 * its series colour, where a blank page shows none. Skipped when /usr/bin/chromium is absent (CI
 * installs it: apt-get install chromium).
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/report/compare/compare.js';
import { renderCompareHtml } from '../../src/report/compare/compare-html.js';
import { SERIES_COLOURS } from '../../src/report/run/html.js';
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

  it.skipIf(!hasChromium)("paints every strategy's line in its colour (a blank page paints none)", async () => {
    const r = syntheticResults({ samples: 300, trials: 3, strategies: DEFAULT_STRATEGIES.slice(0, 3) });
    const dir = join(root, 'shot');
    await writeResults(dir, r);
    const blank = join(root, 'blank.html');
    await writeFile(blank, '<!DOCTYPE html><body></body>');
    const [report, control] = await Promise.all([screenshot(join(dir, 'report.html')), screenshot(blank)]);
    expect(report.width).toBe(SHOT_WIDTH);
    const colours = r.points[0].strategies.map((_, i) => SERIES_COLOURS[i]);
    // A curve's stroke crosses the plot's 764 px at 2 px wide; its legend swatch alone is ~55 px.
    const counts = colours.map((c) => pixelsOf(report, c));
    for (const [i, c] of colours.entries())
      expect(counts[i], `${c} pixels (all: ${counts.join(', ')})`).toBeGreaterThan(LINE_PIXELS);
    expect(
      colours.map((c) => pixelsOf(control, c)),
      'the blank page',
    ).toEqual(colours.map(() => 0));
  });
});

const SHOT_WIDTH = 1200;
/** Fewer pixels of a series colour than this is a legend swatch, not a drawn curve. */
const LINE_PIXELS = 300;

/** A screenshot of `file` in a 1200×2400 window (the report's first plots are in it), decoded. */
async function screenshot(file: string): Promise<Png> {
  const png = join(root, `${Math.random().toString(36).slice(2)}.png`);
  await chromium([
    '--hide-scrollbars',
    `--screenshot=${png}`,
    `--window-size=${SHOT_WIDTH},2400`,
    pathToFileURL(file).href,
  ]);
  return decodePng(await readFile(png));
}

interface Png {
  width: number;
  height: number;
  /** Bytes per pixel: 3 (RGB) or 4 (RGBA). */
  channels: number;
  /** Rows of width × channels bytes, unfiltered. */
  pixels: Buffer;
}

/** An 8-bit RGB or RGBA PNG, as Chromium writes its screenshots (no interlace). */
function decodePng(bytes: Buffer): Png {
  expect(bytes.subarray(0, 8), 'PNG signature').toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let off = 8; off < bytes.length; ) {
    const len = bytes.readUInt32BE(off);
    const type = bytes.toString('latin1', off + 4, off + 8);
    const data = bytes.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect({ depth: data[8], interlace: data[12] }).toEqual({ depth: 8, interlace: 0 });
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      expect(channels, `colour type ${data[9]}`).toBeGreaterThan(0);
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      let p: number;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else {
        const e = a + b - c;
        const [da, db, dc] = [Math.abs(e - a), Math.abs(e - b), Math.abs(e - c)];
        p = da <= db && da <= dc ? a : db <= dc ? b : c;
      }
      out[i] = (line[i] + p) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** Pixels of colour `hex` (#rrggbb), within 8 per channel (anti-aliasing at a stroke's core is exact). */
function pixelsOf(png: Png, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  let n = 0;
  for (let i = 0; i < png.pixels.length; i += png.channels) {
    const p = png.pixels;
    if (Math.abs(p[i] - r) <= 8 && Math.abs(p[i + 1] - g) <= 8 && Math.abs(p[i + 2] - b) <= 8) n++;
  }
  return n;
}
