/**
 * report.html: one self-contained page (no external script, font, style or image; no network),
 * with the run's metadata, the summary table, one percentile-spectrum plot per stage and the
 * counters, drawn as inline SVG generated here.
 *
 * Every string that can come from a user (labels, names, file paths, options, the command line,
 * error messages) goes through {@link esc}. As a second line of defence the page carries a
 * Content-Security-Policy that allows only its own inline script (by hash) and inline styles,
 * so even a missed escape could not run a script or load anything.
 *
 * The page's one script runs at load: it checks that every plot has a non-zero size and at least
 * one drawn line, marks each `<svg data-stage>` with what it found, and sets
 * `<body data-rendered="ok">` (or `error: ...`). The browser test reads that with `--dump-dom`.
 */

import { createHash } from 'node:crypto';
import type { Histogram } from 'hdr-histogram-js';
import { decodeHistogram } from '../decode.js';
import { calibrationRows } from '../statistics/host-calibration.js';
import type { PointResult, RunResults, StageName } from '../types.js';
import { STAGE_DESCRIPTIONS, STAGE_NAMES } from '../types.js';
import { foundWithTails, tailMethodNote, tailVerdictNotes, untilLine } from './comparison-notes.js';
import { pointOfText } from './context.js';
import { explainSection } from './explain-html.js';
import type { ReportFormat } from './format.js';
import { generatorLossNotes, irqTraceNotes } from './irq-trace-notes.js';
import { netLines } from './net-lines.js';
import { setupLine } from './setup-line.js';
import { fmtRate, pointTitle, statusLine, summaryTable, type TableContext, tableContext } from './table.js';

export const REPORT_HTML = 'report.html';

/** Escape for HTML/SVG text and attribute values (always double-quote attributes). */
export function esc(s: unknown): string {
  return String(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Series colours: the Okabe-Ito colour-blind-safe palette without its yellow (unreadable on
 * white), then Paul Tol's muted colours. Past the end, colours repeat with a dash pattern.
 */
export const SERIES_COLOURS = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#882255',
  '#44AA99',
  '#999933',
  '#332288',
];
const DASHES = ['', '6 3', '2 3', '8 3 2 3'];

/** Plot geometry, px. */
const PLOT = {
  width: 860,
  height: 300, // the axes area, legend excluded
  left: 72,
  right: 24,
  top: 16,
  bottom: 44,
  legendRow: 20,
  legendCharPx: 7, // estimated width of one legend character at 12px
} as const;

/** x resolution of a percentile curve: one point every 0.01 decade (10 per 1/10 of a nine). */
const X_STEP = 0.01;
/** Plots stop at 99.9999% (six nines) at most; beyond, a lab run never has the samples. */
const MAX_NINES = 6;

/** x position of percentile p (0..100) on HdrHistogram's scale: log10(1 / (1 − p/100)). */
export function percentileToX(p: number): number {
  return Math.log10(1 / (1 - p / 100));
}

/** A "nice" upper bound (1, 2, 2.5, 5 × 10^k) ≥ v, and the tick step that divides it. */
export function niceScale(v: number): { max: number; step: number } {
  if (!(v > 0)) return { max: 1, step: 0.2 };
  const exp = 10 ** Math.floor(Math.log10(v));
  for (const [m, ticks] of [
    [1, 5],
    [2, 4],
    [2.5, 5],
    [5, 5],
    [10, 5],
  ] as const) {
    if (m * exp >= v * (1 - 1e-12)) return { max: m * exp, step: (m * exp) / ticks };
  }
  return { max: 10 * exp, step: 2 * exp };
}

/**
 * A log latency axis from the decade at or below `lo` to the decade at or above `hi` (µs), with
 * ticks at 1, 2 and 5 × 10^k, as HdrHistogram's plotter is read: p50 and max both legible when
 * they are orders of magnitude apart.
 */
export function logScale(lo: number, hi: number): { min: number; max: number; ticks: number[] } {
  const a = lo > 0 ? lo : hi > 0 ? hi / 10 : 1;
  const b = Math.max(hi, a);
  const min = 10 ** Math.floor(Math.log10(a) + 1e-12);
  let max = 10 ** Math.ceil(Math.log10(b) - 1e-12);
  if (max <= min) max = min * 10;
  const ticks: number[] = [];
  for (let d = min; d <= max * (1 + 1e-9); d *= 10)
    for (const m of max / min > 1000 ? [1] : [1, 2, 5]) if (d * m <= max * (1 + 1e-9)) ticks.push(d * m);
  return { min, max, ticks };
}

/** A log-axis tick label, µs. */
function fmtLogTick(us: number): string {
  return us >= 1 ? String(Math.round(us)) : String(Number(us.toPrecision(1)));
}

function percentileLabel(nines: number): string {
  if (nines === 0) return '0%';
  return `${(100 - 100 / 10 ** nines).toFixed(Math.max(0, nines - 2))}%`;
}

export interface PlotSeries {
  label: string;
  colourIndex: number;
  h: Histogram;
}

/**
 * One percentile-spectrum plot as an `<svg data-stage=...>` string: x = percentile on the log
 * scale (0%, 90%, 99%, ...), y = latency in µs on a log scale (logScale), one line per series.
 */
export function percentilePlot(stage: StageName, pointIndex: number, series: PlotSeries[]): string {
  const maxCount = Math.max(1, ...series.map((s) => s.h.totalCount));
  const nines = Math.min(MAX_NINES, Math.max(2, Math.ceil(Math.log10(maxCount))));
  const xMax = nines;
  const pAtX = (x: number): number => 100 * (1 - 10 ** -x);

  const curves = series.map((s) => {
    const pts: Array<[number, number]> = [];
    for (let i = 0; i * X_STEP <= xMax + 1e-9; i++) {
      const x = Math.min(i * X_STEP, xMax);
      pts.push([x, s.h.getValueAtPercentile(pAtX(x)) / 1000]);
    }
    return { s, pts, maxUs: s.h.maxValue / 1000 };
  });
  const ys = curves.flatMap((c) => c.pts.map(([, y]) => y));
  const yLow = Math.min(...ys.filter((y) => y > 0), Number.POSITIVE_INFINITY);
  const y = logScale(Number.isFinite(yLow) ? yLow : 0, Math.max(0, ...ys));
  const ly0 = Math.log10(y.min);
  const lySpan = Math.log10(y.max) - ly0;

  const plotW = PLOT.width - PLOT.left - PLOT.right;
  const plotH = PLOT.height - PLOT.top - PLOT.bottom;
  const px = (x: number): number => PLOT.left + (x / xMax) * plotW;
  const py = (v: number): number => PLOT.top + plotH - ((Math.log10(Math.max(v, y.min)) - ly0) / lySpan) * plotH;
  const r = (v: number): string => v.toFixed(1);

  // Legend rows below the axes, wrapped to the plot width.
  const legendItems: string[] = [];
  let lx = PLOT.left;
  let ly = PLOT.height + 4;
  for (const c of curves) {
    const text = `${c.s.label} (n=${c.s.h.totalCount}, max ${fmtUsShort(c.maxUs)} µs)`;
    const w = 28 + text.length * PLOT.legendCharPx + 16;
    if (lx + w > PLOT.width - PLOT.right && lx > PLOT.left) {
      lx = PLOT.left;
      ly += PLOT.legendRow;
    }
    const colour = SERIES_COLOURS[c.s.colourIndex % SERIES_COLOURS.length];
    const dash = DASHES[Math.floor(c.s.colourIndex / SERIES_COLOURS.length) % DASHES.length];
    legendItems.push(
      `<line x1="${lx}" y1="${ly + 6}" x2="${lx + 22}" y2="${ly + 6}" stroke="${colour}" stroke-width="2.5"${dash ? ` stroke-dasharray="${dash}"` : ''}/>` +
        `<text x="${lx + 28}" y="${ly + 10}" class="legend">${esc(text)}</text>`,
    );
    lx += w;
  }
  const totalH = ly + PLOT.legendRow + 4;

  const grid: string[] = [];
  for (let n = 0; n <= nines; n++) {
    const x = r(px(n));
    grid.push(`<line x1="${x}" y1="${PLOT.top}" x2="${x}" y2="${PLOT.top + plotH}" class="grid"/>`);
    grid.push(
      `<text x="${x}" y="${PLOT.top + plotH + 16}" text-anchor="middle" class="tick">${percentileLabel(n)}</text>`,
    );
  }
  for (const t of y.ticks) {
    const yy = r(py(t));
    grid.push(`<line x1="${PLOT.left}" y1="${yy}" x2="${PLOT.left + plotW}" y2="${yy}" class="grid"/>`);
    grid.push(`<text x="${PLOT.left - 6}" y="${yy}" dy="4" text-anchor="end" class="tick">${fmtLogTick(t)}</text>`);
  }

  const paths = curves.map((c) => {
    const colour = SERIES_COLOURS[c.s.colourIndex % SERIES_COLOURS.length];
    const dash = DASHES[Math.floor(c.s.colourIndex / SERIES_COLOURS.length) % DASHES.length];
    const d = c.pts.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${r(px(x))} ${r(py(y))}`).join('');
    return (
      `<path class="series" d="${d}" fill="none" stroke="${colour}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} data-label="${esc(c.s.label)}">` +
      `<title>${esc(c.s.label)}</title></path>`
    );
  });

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="${PLOT.width}" height="${totalH}" viewBox="0 0 ${PLOT.width} ${totalH}"`,
    ` data-stage="${stage}" data-point="${pointIndex}" role="img" aria-label="${esc(`${stage} latency by percentile`)}">`,
    `<rect x="${PLOT.left}" y="${PLOT.top}" width="${plotW}" height="${plotH}" class="frame"/>`,
    ...grid,
    ...paths,
    `<text x="${PLOT.left + plotW / 2}" y="${PLOT.top + plotH + 34}" text-anchor="middle" class="axis">percentile</text>`,
    `<text transform="translate(16 ${PLOT.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis">latency (µs, log)</text>`,
    ...legendItems,
    '</svg>',
  ].join('\n');
}

function fmtUsShort(us: number): string {
  return us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2);
}

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1100px; padding: 0 16px; color: #1a1a1a; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; } h3 { font-size: 15px; margin: 20px 0 4px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { padding: 3px 8px; border-bottom: 1px solid #e6e6e6; text-align: right; white-space: nowrap; }
th { vertical-align: bottom; } table.summary th { white-space: normal; } table.summary { font-size: 13px; }
th { background: #f5f5f5; font-weight: 600; } td.l, th.l { text-align: left; } tr.baseline td { background: #fafafa; font-style: italic; }
td.worse { color: #b00020; font-weight: 600; } td.better { color: #006b2e; font-weight: 600; }
.note { color: #555; font-size: 13px; } .found { font-weight: 600; } pre.net { font-size: 12px; } .status-bad { background: #fdecea; border: 1px solid #f5c2c0; padding: 8px 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; } dl.meta dt { color: #555; } dl.meta dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
pre { background: #f7f7f7; padding: 8px; overflow: auto; font-size: 12px; }
svg.plot { display: block; margin: 4px 0 12px; } svg .frame { fill: none; stroke: #999; } svg .grid { stroke: #e4e4e4; }
svg .tick { font-size: 11px; fill: #444; } svg .axis { font-size: 12px; fill: #222; } svg .legend { font-size: 12px; fill: #222; }
`;

/** The load-time self-check (see the top of this file). ES5, no user data. */
const SCRIPT = `(function () {
  var problems = [];
  var svgs = document.querySelectorAll('svg[data-stage]');
  for (var i = 0; i < svgs.length; i++) {
    var svg = svgs[i];
    var box = svg.getBoundingClientRect();
    var paths = svg.querySelectorAll('path.series');
    var drawn = 0;
    for (var j = 0; j < paths.length; j++) if (paths[j].getTotalLength() > 0) drawn++;
    svg.setAttribute('data-rendered-size', Math.round(box.width) + 'x' + Math.round(box.height));
    svg.setAttribute('data-rendered-paths', String(drawn));
    var name = 'point ' + svg.getAttribute('data-point') + ' ' + svg.getAttribute('data-stage');
    if (!(box.width > 0 && box.height > 0)) problems.push(name + ': zero size');
    if (drawn === 0) problems.push(name + ': no line drawn');
  }
  document.body.setAttribute('data-plots', String(svgs.length));
  document.body.setAttribute('data-rendered', problems.length ? 'error: ' + problems.join('; ') : 'ok');
})();`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');
const CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; img-src data:`;

function fmtCount(x: number): string {
  return Number.isFinite(x) ? (Number.isInteger(x) ? x.toLocaleString('en-US') : x.toFixed(3)) : '-';
}

function metaSection(results: RunResults): string {
  const m = results.meta;
  const started = Date.parse(m.startedAt);
  const finished = Date.parse(m.finishedAt);
  const wall =
    Number.isFinite(started) && Number.isFinite(finished) ? `${((finished - started) / 1000).toFixed(1)} s` : '-';
  const setup = setupLine(results);
  const items: Array<[string, string]> = [
    ...(setup ? ([['setup', setup]] as Array<[string, string]>) : []),
    ...irqTraceNotes(results).map((line): [string, string] => ['irq trace', line]),
    ...generatorLossNotes(results).map((line): [string, string] => ['interrupts', line]),
    ['status', results.status],
    ['baseline', results.baseline],
    ['sweep', results.sweep ? `${results.sweep.param}: ${results.sweep.values.join(', ')}` : 'none'],
    ['command', m.command.join(' ')],
    ['started / finished', `${m.startedAt} / ${m.finishedAt} (${wall})`],
    ['seed', String(m.seed)],
    ['deferlab', m.deferlab],
    ['node / v8', `${m.node} / ${m.v8}`],
    ['platform', `${m.platform} ${m.arch}`],
    ['host', `${m.cpuModel}, ${m.hostCores} cores; the run used ${m.threads} threads`],
    ...(m.mmapThreshold !== undefined
      ? [
          [
            'glibc mmap threshold',
            m.mmapThreshold === null
              ? 'dynamic (glibc default)'
              : `fixed at ${m.mmapThreshold} B (MALLOC_MMAP_THRESHOLD_)`,
          ] as [string, string],
        ]
      : []),
  ];
  return [
    '<dl class="meta">',
    ...items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`),
    '</dl>',
    ...calibrationHtml(results),
    '<details><summary>resolved options and topology</summary>',
    `<pre>${esc(JSON.stringify({ options: m.options, topology: m.topology }, null, 2))}</pre>`,
    '</details>',
  ].join('\n');
}

/** The host calibration block (src/report/statistics/host-calibration.ts), when the results have one. */
function calibrationHtml(results: RunResults): string[] {
  const rows = calibrationRows(results.meta);
  if (!rows) return [];
  return [
    '<h3 id="calibration">Host calibration (measured before the first machine booted)</h3>',
    '<dl class="meta calibration">',
    ...rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`),
    '</dl>',
  ];
}

function summaryTableHtml(point: PointResult, baseline: string, ctx: TableContext): string {
  const t = summaryTable(point, baseline, ctx);
  const cls = (i: number): string => (t.align[i] === 'left' ? ' class="l"' : '');
  const rows = t.rows.map((row) => {
    const cells = [esc(row.label), ...row.cells.map(esc)];
    return (
      `<tr${row.isBaseline ? ' class="baseline"' : ''}>` +
      cells
        .map((c, i) => {
          const verdictCls = i === 8 && (row.marker === 'worse' || row.marker === 'better') ? row.marker : '';
          const classes = [t.align[i] === 'left' ? 'l' : '', verdictCls].filter(Boolean).join(' ');
          const title = i === 7 && row.comparison ? ` title="${esc(row.comparison.method)}"` : '';
          return `<td${classes ? ` class="${classes}"` : ''}${title}>${c}</td>`;
        })
        .join('') +
      '</tr>'
    );
  });
  return [
    t.stageNote ? `<p class="note">${esc(t.stageNote)}</p>` : '',
    '<table class="summary">',
    `<thead><tr>${t.header.map((h, i) => `<th${cls(i)}>${esc(h)}</th>`).join('')}</tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
    ...t.notes.map((n) => `<p class="note">${esc(n)}</p>`),
    ...findingsHtml(point, baseline, t, ctx),
    `<p class="note">${esc(t.deltaNote)}</p>`,
    ...[
      tailMethodNote(point, t.stage, true),
      ...tailVerdictNotes(point, baseline, t.stage, ctx.control),
      untilLine(point),
    ]
      .filter((l) => l !== undefined)
      .map((l) => `<p class="note">${esc(l)}</p>`),
  ].join('\n');
}

/**
 * What the terminal prints under its table, on the page too: the `found:` line with the tails
 * called, and tcp_lat's per-exchange network table (every column, as the page's summary table).
 */
function findingsHtml(
  point: PointResult,
  baseline: string,
  t: ReturnType<typeof summaryTable>,
  ctx: TableContext,
): string[] {
  const found = foundWithTails(point, baseline, t, ctx.control);
  const net = netLines(point, ctx.cpus ?? 1, { wide: true });
  return [
    found ? `<p class="found">${esc(found)}</p>` : '',
    net ? `<pre class="net">${esc(net.grid.join('\n'))}</pre>\n<p class="note">${esc(net.legend)}</p>` : '',
  ].filter(Boolean);
}

function plotsSection(point: PointResult, pi: number): string {
  const out: string[] = [];
  for (const stage of STAGE_NAMES) {
    const series: PlotSeries[] = [];
    point.strategies.forEach((s, si) => {
      const m = s.merged[stage];
      if (!m || m.summary.count === 0) return;
      const h = decodeHistogram(m.histogram, `point ${pi}, strategy ${JSON.stringify(s.label)}, stage ${stage}`);
      if (h.totalCount > 0) series.push({ label: s.label, colourIndex: si, h });
    });
    if (series.length === 0) continue;
    out.push(`<h3>${esc(stage)}: ${esc(STAGE_DESCRIPTIONS[stage])}</h3>`);
    out.push(percentilePlot(stage, pi, series));
  }
  return out.join('\n');
}

function strategiesSection(point: PointResult): string {
  const rows = point.strategies.map(
    (s) =>
      `<tr><td class="l">${esc(s.label)}</td><td class="l">${esc(s.name)}</td><td class="l">${esc(s.kind)}${s.file ? `: ${esc(s.file)}` : ''}</td>` +
      `<td>${s.trials.length}</td><td class="l">${esc(s.description)}</td><td class="l"><code>${esc(JSON.stringify(s.options))}</code></td></tr>`,
  );
  return [
    '<table class="strategies">',
    '<thead><tr><th class="l">label</th><th class="l">strategy</th><th class="l">kind</th><th>trials</th><th class="l">description</th><th class="l">options</th></tr></thead>',
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
  ].join('\n');
}

function countersSection(point: PointResult): string {
  const names: string[] = [];
  for (const s of point.strategies) for (const k of Object.keys(s.counters)) if (!names.includes(k)) names.push(k);
  if (names.length === 0) return '<p class="note">no counters recorded</p>';
  const head = point.strategies.map((s) => `<th>${esc(s.label)}</th>`).join('');
  const rows = names.map((n) => {
    const cells = point.strategies.map((s) => {
      const total = s.counters[n];
      const rate = s.rates[n];
      return `<td>${total === undefined ? '-' : fmtCount(total)}${rate === undefined ? '' : `<br><span class="note">${esc(fmtRate(rate))}/s</span>`}</td>`;
    });
    return `<tr><td class="l">${esc(n)}</td>${cells.join('')}</tr>`;
  });
  return [
    '<table class="counters">',
    `<thead><tr><th class="l">counter (total over trials, rate per second)</th>${head}</tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
  ].join('\n');
}

/** The whole report.html. Context: main thread; pure apart from decoding histograms. */
export function renderHtml(results: RunResults): string {
  const status = statusLine(results);
  const sections = results.points.map((point, pi) => {
    const title = pointTitle(point);
    const heading =
      results.points.length > 1 || title ? `Point ${pointOfText(results, pi)}${title ? `: ${title}` : ''}` : 'Results';
    return [
      `<section class="point" data-point="${pi}">`,
      `<h2>${esc(heading)}</h2>`,
      summaryTableHtml(point, results.baseline, tableContext(results)),
      '<h3>Strategies</h3>',
      strategiesSection(point),
      plotsSection(point, pi),
      explainSection(results, pi),
      '<h3>Counters</h3>',
      countersSection(point),
      '</section>',
    ].join('\n');
  });
  return htmlPage(`deferlab report: ${results.meta.startedAt}`, [
    '<h1>deferlab report</h1>',
    results.status === 'completed' ? '' : `<p class="status-bad">${esc(status)}</p>`,
    metaSection(results),
    ...sections,
    '<p class="note">Plots: x is the percentile on HdrHistogram\'s log scale, x = log10(1/(1 − p)); y is latency in µs on a log scale (decades), so p50 and max are both readable. ' +
      "Each line is one strategy's histogram merged over all its trials. Full distributions: the .hgrm files next to this report.</p>",
  ]);
}

/** report.html as a report format (formats.ts). */
export const HTML_FORMAT: ReportFormat = {
  listed: REPORT_HTML,
  holds: 'a self-contained page: metadata, summary table, plots, counters',
  render: (results) => [{ name: REPORT_HTML, text: renderHtml(results) }],
};

/**
 * A whole self-contained page around `body` (HTML already escaped): the style, the
 * Content-Security-Policy and the plots' load-time self-check (see the top of this file).
 * `title` is plain text (escaped here). Shared by report.html and compare's report.html.
 */
export function htmlPage(title: string, body: readonly string[]): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    ...body,
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
