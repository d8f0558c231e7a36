/**
 * compare's report.html: the runs, the metadata that differs, and per point, strategy and stage
 * a table of the percentiles with their ratios to run #1 and one percentile-spectrum plot with
 * a line per run (plus the merged histogram with `--merge`). The plot and the page are
 * report.html's own (html.ts: `percentilePlot`, `htmlPage`), so both pages read alike, carry the
 * same Content-Security-Policy and run the same load-time self-check.
 */

import { esc, htmlPage, type PlotSeries, percentilePlot } from '../run/html.js';
import { STAGE_DESCRIPTIONS } from '../types.js';
import { COMPARE_METRICS, type CompareInput, type CompareModel, mergeHistograms, rowHistograms } from './compare.js';
import { fmtCompareUs, fmtRatio, shownMetaValues } from './compare-text.js';

function runsSection(model: CompareModel, inputs: readonly CompareInput[]): string {
  const rows = model.runs.map((r, i) => {
    const m = inputs[i].results.meta;
    return (
      `<tr><td>#${r.index}</td><td class="l">${esc(r.name)}</td><td class="l">${esc(r.status)}</td>` +
      `<td class="l">${esc(r.startedAt)}</td><td class="l">${esc(`${m.cpuModel}, ${m.hostCores} cores; node ${m.node}`)}</td></tr>`
    );
  });
  return [
    '<table class="runs">',
    '<thead><tr><th>run</th><th class="l">results</th><th class="l">status</th><th class="l">started</th><th class="l">host</th></tr></thead>',
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
  ].join('\n');
}

function metaSection(model: CompareModel): string {
  const ignored = `<p class="note">Not compared (they differ by nature): ${esc(model.metaIgnored.join(', '))}.</p>`;
  if (model.metaDifferences.length === 0) return `<p>The metadata is the same in every run.</p>\n${ignored}`;
  const head = model.runs.map((r) => `<th class="l">#${r.index}</th>`).join('');
  const rows = model.metaDifferences.map(
    (d) =>
      `<tr><td class="l"><code>${esc(d.field)}</code></td>${shownMetaValues(d.values)
        .map((v) => `<td class="l">${v === null ? '<i>absent</i>' : esc(v)}</td>`)
        .join('')}</tr>`,
  );
  return [
    '<table class="meta-diff">',
    `<thead><tr><th class="l">field</th>${head}</tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
    ignored,
  ].join('\n');
}

function rowTable(model: CompareModel, row: CompareModel['rows'][number]): string {
  const head = COMPARE_METRICS.map(([, t]) => `<th>${esc(t)} µs</th>`).join('');
  const body = row.runs.map((s, ri) => {
    const r = model.runs[ri];
    const cells = COMPARE_METRICS.map(([m]) => {
      if (!s) return '<td>-</td>';
      const ratio = ri === 0 ? '' : fmtRatio(row.ratios[ri]?.[m] ?? null);
      return `<td>${esc(fmtCompareUs(s[m]))}${ratio ? ` <span class="note">${esc(ratio)}</span>` : ''}</td>`;
    }).join('');
    return `<tr><td class="l">#${r.index} ${esc(r.name)}</td><td>${s ? s.count.toLocaleString('en-US') : '-'}</td>${cells}</tr>`;
  });
  if (row.merged) {
    const m = row.merged;
    body.push(
      `<tr class="baseline"><td class="l">merged</td><td>${m.count.toLocaleString('en-US')}</td>${COMPARE_METRICS.map(
        ([k]) => `<td>${esc(fmtCompareUs(m[k]))}</td>`,
      ).join('')}</tr>`,
    );
  }
  return [
    '<table class="summary">',
    `<thead><tr><th class="l">run</th><th>samples</th>${head}</tr></thead>`,
    `<tbody>${body.join('\n')}</tbody>`,
    '</table>',
  ].join('\n');
}

/**
 * The whole page. `inputs` are the runs the model was built from, in the same order (their
 * histograms are decoded again for the plots). Context: main thread; pure apart from decoding.
 */
export function renderCompareHtml(model: CompareModel, inputs: readonly CompareInput[]): string {
  const points = [...new Set(model.rows.map((r) => r.point))];
  const sections = points.map((point, pi) => {
    const parts = [`<section class="point" data-point="${pi}">`];
    if (point || points.length > 1) parts.push(`<h2>Point ${esc(point || `${pi + 1}`)}</h2>`);
    for (const row of model.rows.filter((r) => r.point === point)) {
      const hs = rowHistograms(inputs, row);
      const series: PlotSeries[] = [];
      hs.forEach((h, ri) => {
        if (h && h.totalCount > 0) series.push({ label: `#${ri + 1} ${model.runs[ri].name}`, colourIndex: ri, h });
      });
      // The merged line in black (palette index 6) unless a run already has that colour.
      const mergedColour = Math.max(6, model.runs.length);
      if (model.merged) series.push({ label: 'merged', colourIndex: mergedColour, h: mergeHistograms(hs) });
      parts.push(`<h3>${esc(row.label)} · ${esc(row.stage)}: ${esc(STAGE_DESCRIPTIONS[row.stage])}</h3>`);
      parts.push(rowTable(model, row));
      if (series.length) parts.push(percentilePlot(row.stage, pi, series));
    }
    parts.push('</section>');
    return parts.join('\n');
  });
  return htmlPage(`deferlab compare: ${model.runs.map((r) => r.name).join(' vs ')}`, [
    '<h1>deferlab compare</h1>',
    '<h2>Runs</h2>',
    runsSection(model, inputs),
    ...model.incomparable.map((l) => `<p class="warn"><b>${esc(l)}</b></p>`),
    '<h2>Metadata that differs</h2>',
    metaSection(model),
    ...sections,
    '<p class="note">Ratios ×N are to run #1. Plots: x is the percentile on HdrHistogram\'s log scale, ' +
      "x = log10(1/(1 − p)); y is latency in µs; one line per run (each run's histogram merged over its trials)" +
      (model.merged ? ", and the runs' histograms added (merged)" : '') +
      '.</p>',
  ]);
}
