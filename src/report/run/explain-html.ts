/**
 * report.html's explain section (`--explain`): per strategy, a stacked bar for its median band
 * and one for its slowest 1%, each split by cause (src/report/explain/), as shares of the band's
 * mean latency with the µs written at the end, one colour per cause across the page.
 */
import { band } from '../explain/buckets.js';
import { BANDS, primarySeries } from '../explain/text.js';
import type { RunResults } from '../types.js';

const COLOURS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#1f77b4',
  '#d62728',
  '#17becf',
  '#8c564b',
];

const escText = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const usText = (ns: number): string => (ns >= 100_000 ? (ns / 1000).toFixed(0) : (ns / 1000).toFixed(1));

/** The explain section of point `pi`, or '' when the run was not explained. */
export function explainSection(results: RunResults, pi: number): string {
  const p = results.explain?.points.find((x) => x.point === pi);
  if (!p) return '';
  const labels = [...new Set(p.series.map((s) => s.label))];
  const rows = labels.map((label) => ({ label, s: primarySeries(p.series, label) })).filter((r) => r.s !== undefined);
  if (rows.length === 0) return '';
  const causes = [...new Set(rows.flatMap((r) => r.s!.causes))];
  const colour = (c: string) => COLOURS[causes.indexOf(c) % COLOURS.length];
  const W = 760;
  const left = 210;
  const barW = W - left - 90;
  const rowH = 22;
  const out: string[] = [];
  let y = 10;
  for (const { label, s } of rows) {
    for (const b of BANDS) {
      const d = band(s!, b.lo, b.hi);
      let x = left;
      out.push(
        `<text x="${left - 8}" y="${y + 15}" text-anchor="end" class="tick">${escText(`${label} · ${b.name}`)}</text>`,
      );
      for (const c of causes) {
        const v = d.causes[c] ?? 0;
        if (!(v > 0) || !(d.latencyNs > 0)) continue;
        const w = (v / d.latencyNs) * barW;
        out.push(
          `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 4}" fill="${colour(c)}"><title>${escText(`${c}: ${usText(v)} µs`)}</title></rect>`,
        );
        x += w;
      }
      out.push(`<text x="${left + barW + 6}" y="${y + 15}" class="tick">${usText(d.latencyNs)} µs</text>`);
      y += rowH;
    }
    y += 6;
  }
  let lx = left;
  let ly = y + 8;
  for (const c of causes) {
    const w = 22 + c.length * 6.5 + 14;
    if (lx + w > W && lx > left) {
      lx = left;
      ly += 18;
    }
    out.push(`<rect x="${lx}" y="${ly}" width="12" height="12" fill="${colour(c)}"/>`);
    out.push(`<text x="${lx + 16}" y="${ly + 10}" class="legend">${escText(c)}</text>`);
    lx += w;
  }
  const h = ly + 24;
  return [
    '<h3>Why: latency by cause</h3>',
    `<svg xmlns="http://www.w3.org/2000/svg" class="explain" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" role="img" aria-label="latency by cause per strategy">`,
    ...out,
    '</svg>',
    `<p class="note">Each bar is one band of a strategy's ${rows[0].s!.kind === 'exchange' ? 'tcp_lat exchanges (one-way)' : 'hand-offs (until the work started)'}: its mean latency (µs, right) split into the causes along each one's critical path, as shares; hover for µs. ${escText(results.explain?.method ?? '')}. <code>deferlab explain DIR</code> prints the numbers and the Δ to the baseline.</p>`,
  ].join('\n');
}
