/**
 * bench:twin's table (twin.ts): the host's and the lab's distributions side by side with their
 * ratios; a p50 between modes marked † and a p99 between modes marked ‡, each compared by the
 * shares of its modes under the table; the rules alone and the older profile's rules beside the
 * host; the shares of (b).
 *
 * Context: main thread; pure (strings from numbers).
 */

import { tCritical95 } from '../src/report/statistics/interval.js';
import { table } from './lib.js';
import {
  BAR_HIGH,
  BAR_LOW,
  type BarVerdict,
  barVerdict,
  fmtRatio,
  type RoundCount,
  roundsRatio,
  slowShareRatio,
  slowShareText,
} from './twin-bar.js';
import type { Answer, Dist } from './twin-lab.js';

/**
 * A p50 is read as between modes when a side served a share of its wake-ups within PROMPT_NS
 * inside [SPLIT_LOW, SPLIT_HIGH]: the share moved by up to 15 points between runs minutes apart
 * on a quiet host (1 hog nice -20: host 64% and 50%, lab 51% and 66%; 2026-12-04, docs/twin.md),
 * and a p50 whose share is within that of 50% jumps between the prompt mode (tens of µs) and the
 * waiting one (ms).
 */
const SPLIT_LOW = 0.35;
const SPLIT_HIGH = 0.65;
/**
 * A p99 is read as between modes when a side's share of wake-ups that waited past PROMPT_NS lies
 * inside [TAIL_LOW, TAIL_HIGH]: then 5 to 20 wake-ups in 1000 decide whether the p99 is a prompt
 * one (tens of µs) or a tick's wait (ms). Beside one nice-0 hog the host's share was 0.3% and
 * 0.65% in two runs of 2000 wake-ups minutes apart (W = 20 µs, 2026-12-07, docs/twin.md), and
 * its p99 87 µs and 126 µs; one more wake-up in a hundred waiting would have made it ~3 ms.
 */
const TAIL_LOW = 0.005;
const TAIL_HIGH = 0.02;
/** A share answer: the first task's CPU over the second's. */
export type Share = { ratio: number; detail: string } | { none: string };

export const fmt = (ns: number) =>
  !Number.isFinite(ns) ? '-' : ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`;
export const ratio = (lab: number, host: number) =>
  host > 0 && Number.isFinite(lab) ? `${(lab / host).toFixed(2)}x` : 'n/a';

export interface Row {
  question: string;
  host: Answer;
  lab: Answer;
  /** (a): the lab's scheduler rules alone on a fake clock (bench/twin-model.ts). */
  model?: Answer;
  /** (a): the 6.9 profile's rules alone, beside a host whose nearest profile is 6.18. */
  older?: Answer;
  /**
   * A named part of the host's column that the lab's column leaves out, measured in the lab run
   * beside it (its own distribution): where the row's figure `k` is not inside the bar, the bar
   * judges the host's against this part by the same method, and calls the row explained when that
   * is inside (the host's excess is that part, which the lab has and counts elsewhere).
   */
  explain?: { k: 'p50' | 'p99'; part: Answer; name: string };
  /**
   * The part of the lab's column that is the host kernel's own doing, measured in the same lab
   * runs ((c): kick_wake, the host's futex wake-up of the woken CPU's thread): where a figure is
   * not inside, the bar says how that part alone stands against the host's figure, so that what
   * remains reads as the emulator's own path. It never moves the figure's verdict.
   */
  hostPart?: { part: Answer; name: string };
}

const share = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');

/** The headers of {@link distCells}' five cells for side `who`. */
const distHeads = (who: string): string[] => ['≤0.5ms', 'p50', 'p90', 'p99', 'max'].map((k) => `${who} ${k}`);

function distCells(a: Answer): string[] {
  return 'none' in a ? ['-', '-', '-', '-', '-'] : [share(a.prompt), fmt(a.p50), fmt(a.p90), fmt(a.p99), fmt(a.max)];
}

/**
 * The host's cells beside a fake-clock answer's, the answer/host ratio of a statistic ('-' unless
 * both are there), and the p99 ratio's cell (marked ‡ when either side's p99 lies between modes).
 */
function besideHost(
  host: Answer,
  rules: Answer,
): { host: string[]; rules: string[]; ratio: (k: 'p50' | 'p99') => string; p99: string } {
  const both = !('none' in host) && !('none' in rules);
  const of = (k: 'p50' | 'p99') => (both ? ratio((rules as Dist)[k], (host as Dist)[k]) : '-');
  return {
    host: distCells(host),
    rules: distCells(rules),
    ratio: of,
    p99: of('p99') + (both && (splitAtP99(host) || splitAtP99(rules)) ? ' ‡' : ''),
  };
}

/** Whether a distribution's p50 lies between its modes (its ≤0.5 ms share near one half). */
function splitAtP50(a: Answer): boolean {
  return !('none' in a) && a.prompt >= SPLIT_LOW && a.prompt <= SPLIT_HIGH;
}

/** Whether a distribution's p99 lies between its modes (its share past 0.5 ms near 1%). */
function splitAtP99(a: Answer): boolean {
  return !('none' in a) && 1 - a.prompt >= TAIL_LOW && 1 - a.prompt <= TAIL_HIGH;
}

/** A side's rounds: its own counts, or one round from its share (a Dist made without them). */
const roundsOf = (d: Dist): readonly RoundCount[] => d.rounds ?? [{ n: d.n, slow: Math.round((1 - d.prompt) * d.n) }];
/** A side's share past PROMPT_NS over all its rounds. */
export const pooledSlow = (d: Dist): number => {
  const rs = roundsOf(d);
  return rs.reduce((a, r) => a + r.slow, 0) / rs.reduce((a, r) => a + r.n, 0);
};

/**
 * The shares past PROMPT_NS of two sides (pooled over the rounds), and their ratio with its
 * interval and verdict against the bar (twin-bar.ts): what a p50 or p99 between modes compares.
 */
function tailShares(host: Dist, lab: Dist, rules?: Answer): string {
  const h = pooledSlow(host);
  const x = (v: number) => (h > 0 ? `${(v / h).toFixed(2)}x` : 'n/a');
  const r =
    rules && !('none' in rules)
      ? `; the rules alone ${share(1 - rules.prompt)} of ${rules.n} (${x(1 - rules.prompt)})`
      : '';
  const ci = slowShareText(slowShareRatio(roundsOf(host), roundsOf(lab)));
  return `past 0.5 ms host ${share(h)} of ${host.n}, lab ${share(pooledSlow(lab))} of ${lab.n} (lab/host ${ci})${r}`;
}

/** A ratio's place against the bar, read from its point value (no interval: not between modes). */
const pointVerdict = (x: number): BarVerdict | undefined =>
  Number.isFinite(x) && x > 0 ? barVerdict(x, x) : undefined;

/** A figure judged against the bar, and how (for the summary). */
interface Judged {
  verdict: BarVerdict;
  text: string;
}

/**
 * Figure `k` of `lab` against `host`'s: by the share past 0.5 ms and its interval where `between`
 * (a side between modes: †, ‡), else by the paired rounds' ratios where there are two or more,
 * else by the figures' ratio (no interval). Undefined where there is nothing to judge.
 */
function judge(host: Dist, lab: Dist, k: 'p50' | 'p99', between: boolean): Judged | undefined {
  const modal = between ? slowShareRatio(roundsOf(host), roundsOf(lab)) : undefined;
  if (modal)
    return {
      verdict: modal.verdict,
      text: `by the shares ${fmtRatio(modal.ratio)}x [${fmtRatio(modal.lo)}, ${fmtRatio(modal.hi)}]`,
    };
  const rr = roundsRatio(roundsOf(host), roundsOf(lab), k);
  if (rr) return { verdict: rr.verdict, text: `${fmtRatio(rr.ratio)}x [${fmtRatio(rr.lo)}, ${fmtRatio(rr.hi)}]` };
  const v = pointVerdict(lab[k] / host[k]);
  return v ? { verdict: v, text: `${fmtRatio(lab[k] / host[k])}x (no interval)` } : undefined;
}

/** The bar's groups: the verdicts, and `explained` (not inside, and its named part is: Row.explain). */
type BarGroup = BarVerdict | 'explained';

/**
 * Each row's p50 and p99 against the bar, grouped by verdict: by the share past 0.5 ms and its
 * interval where a side is between modes (†, ‡), else by the ratio itself; a figure not inside
 * whose row names a part of the host's column the lab leaves out (Row.explain) is explained when
 * the host's figure against that part is inside.
 */
export function barLines(rows: Row[], shares: { question: string; host: Share; lab: Share }[]): string[] {
  const by: Record<BarGroup, string[]> = { inside: [], outside: [], undecided: [], explained: [] };
  for (const r of rows) {
    if ('none' in r.host || 'none' in r.lab) continue;
    const q = r.question;
    for (const k of ['p50', 'p99'] as const) {
      const split = k === 'p50' ? splitAtP50 : splitAtP99;
      const j = judge(r.host, r.lab, k, split(r.host) || split(r.lab));
      if (!j) continue;
      const ex = r.explain?.k === k ? r.explain : undefined;
      if (j.verdict !== 'inside' && ex && !('none' in ex.part)) {
        const e = judge(r.host, ex.part, k, split(r.host) || split(ex.part));
        if (e?.verdict === 'inside') {
          by.explained.push(`${q} ${k} ${j.text} (${j.verdict}): ${ex.name}, host against it ${e.text}`);
          continue;
        }
        by[j.verdict].push(`${q} ${k} ${j.text} (not explained by ${ex.name}: host against it ${e?.text ?? 'n/a'})`);
        continue;
      }
      const hp = r.hostPart;
      const h =
        j.verdict !== 'inside' && hp && !('none' in hp.part)
          ? judge(r.host, hp.part, k, split(r.host) || split(hp.part))
          : undefined;
      by[j.verdict].push(
        `${q} ${k} ${j.text}${h && hp ? ` (${hp.name} alone against the host: ${h.text}, ${h.verdict}; the rest is the emulator's path)` : ''}`,
      );
    }
  }
  for (const s of shares) {
    if ('none' in s.host || 'none' in s.lab) continue;
    const v = pointVerdict(s.lab.ratio / s.host.ratio);
    if (v) by[v].push(`${s.question} ${fmtRatio(s.lab.ratio / s.host.ratio)}x`);
  }
  const lines = [
    `  The bar (issue 24: lab/host within ${BAR_LOW}–${BAR_HIGH}x at p50 and p99; where a side is between modes (marked above), the`,
    "    share past 0.5 ms with its 95% interval, the rounds' spread counted; elsewhere the figure's ratio in each",
    '    round, host and lab of the same minute, with its 95% t interval over the rounds (none from one round):',
    '    inside or outside only when the whole interval is, undecided when it straddles an end; explained: not',
    "    inside, and the host's figure is inside the bar against a named part of its column that the lab's column",
    '    leaves out, measured in the same lab runs; bench/twin-bar.ts):',
  ];
  for (const v of ['inside', 'explained', 'outside', 'undecided'] as const)
    lines.push(`    ${v} (${by[v].length}): ${by[v].length ? by[v].join('; ') : 'none'}`);
  if (by.undecided.length)
    lines.push(
      `    (few rounds give wide intervals: t's 0.975 point is ${[2, 3, 5].map((k) => `${tCritical95(k - 1).toPrecision(3)} for ${k} rounds`).join(', ')}; \`-- --rounds N\`)`,
    );
  return lines;
}

export function render(rows: Row[], shares: { question: string; host: Share; lab: Share }[]): string[] {
  const split: string[] = [];
  const tail: string[] = [];
  const body = rows.map((r) => {
    let p50 = 'none' in r.host || 'none' in r.lab ? '-' : ratio(r.lab.p50, r.host.p50);
    let p99 = 'none' in r.host || 'none' in r.lab ? '-' : ratio(r.lab.p99, r.host.p99);
    if (!('none' in r.host) && !('none' in r.lab) && (splitAtP50(r.host) || splitAtP50(r.lab))) {
      p50 += ' †';
      const rules = r.model && !('none' in r.model) ? `; the rules alone ${share(r.model.prompt)}` : '';
      split.push(
        `${r.question.slice(4)}: ≤0.5 ms host ${share(r.host.prompt)}, lab ${share(r.lab.prompt)} (lab − host ${((r.lab.prompt - r.host.prompt) * 100).toFixed(1)} points)${rules}; past 0.5 ms lab/host ${slowShareText(slowShareRatio(roundsOf(r.host), roundsOf(r.lab)))}`,
      );
    }
    if (!('none' in r.host) && !('none' in r.lab) && (splitAtP99(r.host) || splitAtP99(r.lab))) {
      p99 += ' ‡';
      tail.push(`${r.question.slice(4)}: ${tailShares(r.host, r.lab, r.model)}`);
    }
    return [r.question, ...distCells(r.host), ...distCells(r.lab), p50, p99];
  });
  for (const s of shares) {
    const h = 'none' in s.host ? '-' : `${s.host.ratio.toFixed(2)} : 1`;
    const l = 'none' in s.lab ? '-' : `${s.lab.ratio.toFixed(2)} : 1`;
    const x = 'none' in s.host || 'none' in s.lab ? '-' : ratio(s.lab.ratio, s.host.ratio);
    body.push([s.question, '', h, '', '', '', '', l, '', '', '', x, '']);
  }
  const lines = table(['question', ...distHeads('host'), ...distHeads('lab'), 'lab/host p50', 'lab/host p99'], body);
  if (split.length)
    lines.push(
      `  † p50 between modes: a side served ${SPLIT_LOW * 100}–${SPLIT_HIGH * 100}% of its wake-ups within 0.5 ms, so the p50 falls where`,
      '    the distribution splits between wake-ups served at once and ones that wait a slice or more, and a few',
      '    per cent moving between the modes moves it by milliseconds (the share moved up to 15 points between runs of',
      "    one side minutes apart; beside one nice -20 hog the lab's run takes one phase of its interrupts against its",
      '    tick, and the rules serve 50% or 75% at once by that phase, pooled 62%: docs/twin.md): compare the ≤0.5 ms',
      '    shares instead:',
      ...split.map((l) => `    ${l}`),
    );
  if (tail.length)
    lines.push(
      `  ‡ p99 between modes: ${TAIL_LOW * 100}–${TAIL_HIGH * 100}% of a side's wake-ups waited past 0.5 ms, so 5 to 20 in 1000 decide`,
      "    whether its p99 is a prompt wake-up or a tick's wait (the host's share moved 0.3–0.65% between runs",
      '    minutes apart): compare the shares past 0.5 ms instead (`-- --sweep-work` shows them as W grows):',
      ...tail.map((l) => `    ${l}`),
    );
  lines.push(...barLines(rows, shares));
  const modelled = rows.filter((r) => r.model);
  const modelLines = table(
    ['question', 'host ≤0.5ms', 'host p50', 'host p99', ...distHeads('rules'), 'rules/host p50', 'rules/host p99'],
    modelled.map((r) => {
      const b = besideHost(r.host, r.model as Answer);
      return [r.question, b.host[0], b.host[1], b.host[3], ...b.rules, b.ratio('p50'), b.p99];
    }),
  );
  lines.push(
    '',
    "  The lab's scheduler rules alone (bench/twin-model.ts: the run queues on a fake clock, switches take no",
    '  time, no host): what the running lab adds beyond these is its time accounting (docs/twin.md).',
    ...modelLines,
  );
  const older = rows.filter((r) => r.older);
  if (older.length)
    lines.push(
      '',
      "  The 6.9 profile's rules alone (no delayed dequeue, RUN_TO_PARITY by the deadline at the pick, a",
      '  0.75 ms base slice): what the kernel changes since 6.11 do to the same question.',
      ...table(
        ['question', 'host ≤0.5ms', 'host p99', ...distHeads('6.9'), '6.9/host p99'],
        older.map((r) => {
          const b = besideHost(r.host, r.older as Answer);
          return [r.question, b.host[0], b.host[3], ...b.rules, b.p99];
        }),
      ),
    );
  const notes: string[] = [];
  for (const r of rows) {
    if ('none' in r.host) notes.push(`  ${r.question}: host: ${r.host.none}`);
    if ('none' in r.lab) notes.push(`  ${r.question}: lab: ${r.lab.none}`);
  }
  for (const s of shares) {
    if ('none' in s.host) notes.push(`  ${s.question}: host: ${s.host.none}`);
    else notes.push(`  ${s.question}: host ${s.host.detail}`);
    if ('none' in s.lab) notes.push(`  ${s.question}: lab: ${s.lab.none}`);
    else notes.push(`  ${s.question}: lab ${s.lab.detail}`);
  }
  return notes.length ? [...lines, '', ...notes] : lines;
}

/**
 * (a) with no hog, the part each side's column holds or leaves out: the host's waker sleeps on a
 * timer, so its lateness is the host delivering that timer to an idle CPU (on a VM, a halted
 * vCPU) and waking it; the lab's CPU 0 halts between interrupts in the same way, woken by the
 * host's timer for each (idle_exit), but its column starts at the interrupt, after that wake-up.
 */
export function idleExitLines(host: Answer, lab: Answer): string[] {
  if ('none' in lab) return [`  (a) no hog, the lab's halted CPU 0 woken for each interrupt (idle_exit): ${lab.none}.`];
  const past = (d: Answer) => ('none' in d ? 'n/a' : `${(100 * (1 - d.prompt)).toFixed(1)}%`);
  return [
    `  (a) no hog: the host's lateness is its timer delivered to an idle CPU and the waker woken; the lab's CPU 0,`,
    `      halted between interrupts, is woken by the host's timer for each in the same way (idle_exit: due → its`,
    `      thread runs), before its column starts: p50 ${fmt(lab.p50)}, p99 ${fmt(lab.p99)}, max ${fmt(lab.max)}, past 0.5 ms ${past(lab)} (the host's`,
    `      waker: p50 ${'none' in host ? 'n/a' : fmt(host.p50)}, p99 ${'none' in host ? 'n/a' : fmt(host.p99)}, past 0.5 ms ${past(host)}).`,
  ];
}
