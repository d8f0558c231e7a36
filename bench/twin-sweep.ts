/**
 * `npm run bench:twin -- --sweep-work W1,W2,... [--sweep-nice N]`: question (a) with one hog
 * (nice 0, or N), asked at each work per wake-up W of the host, the lab and the rules alone, for
 * the share of wake-ups that waited past 0.5 ms (docs/twin.md, "One nice-0 hog"; beside a nice
 * −20 hog, "The share served at once beside a nice −20 hog, swept").
 *
 * Why this question: beside one nice-0 hog a nice-0 waker's wake-ups are almost all served at
 * once, and the few that wait, wait for a tick. Under EEVDF the waker's lag drains by about half
 * its CPU per wake-up (it runs while the hog, of equal weight, waits), and a wake-up with no lag
 * left can lose to the hog on the deadline; the wait then refills it. So the rules predict a share
 * of waits that grows with the waker's CPU per wake-up. The p99 of the default W sits on the
 * boundary between the modes, where a few wake-ups move it by milliseconds; the shares across W
 * are the comparison that says whether the host's kernel and the lab wait for the same reason.
 *
 * Context: main thread. Timing figures, never asserted.
 */

import { join } from 'node:path';
import { table } from './lib.js';
import {
  type Answer,
  BOUND,
  type Dist,
  hostDist,
  type Lab,
  type LabRunOptions,
  labDist,
  labHogs,
  labWorkNs,
  MODEL_PHASES,
  medianDist,
  readCpuSeq,
  rulesDist,
  type TwinOut,
} from './twin-lab.js';

/** The most values `--sweep-work` takes: each costs a host run and a lab run of iters · T. */
export const SWEEP_MAX = 8;

/** `--sweep-work`'s value: distinct integers in µs, each from 0 to below the period; or the problem. */
export function parseSweep(text: string, periodUs: number): number[] | string {
  const parts = text.split(',').map((x) => x.trim());
  const ws = parts.map(Number);
  const bad = parts.find((x, i) => x === '' || !Number.isInteger(ws[i]) || ws[i] < 0 || ws[i] >= periodUs);
  if (bad !== undefined)
    return `--sweep-work takes work per wake-up in µs, integers from 0 to below the period (${periodUs}), comma-separated, e.g. 20,100,200,400 (got ${JSON.stringify(bad)})`;
  if (new Set(ws).size !== ws.length) return `--sweep-work lists a value twice (got ${text})`;
  if (ws.length > SWEEP_MAX) return `--sweep-work takes at most ${SWEEP_MAX} values (got ${ws.length})`;
  return ws;
}

const pct = (a: Answer) => ('none' in a ? '-' : `${((1 - a.prompt) * 100).toFixed(1)}%`);
const over = (a: Answer, host: Answer) =>
  'none' in a || 'none' in host || host.prompt === 1 ? '-' : `${((1 - a.prompt) / (1 - host.prompt)).toFixed(2)}x`;
const ms = (a: Answer, k: 'p50' | 'p90' | 'p99' | 'max') =>
  'none' in a ? '-' : a[k] >= 1e6 ? `${(a[k] / 1e6).toFixed(2)} ms` : `${(a[k] / 1e3).toFixed(1)} µs`;

/** Rounds' answers pooled: the share past PROMPT_NS over all their wake-ups, the p99 the median of theirs. */
export function pooled(answers: readonly Answer[]): Answer {
  const ds = answers.filter((a): a is Dist => !('none' in a));
  const m = medianDist(answers);
  if (ds.length === 0 || 'none' in m) return m;
  const n = ds.reduce((a, d) => a + d.n, 0);
  return { ...m, n, prompt: ds.reduce((a, d) => a + d.prompt * d.n, 0) / n };
}

/** Ask (a) with one hog at `nice` at each W, `o.rounds` times; the lines of its table. */
export async function sweepWork(
  ws: readonly number[],
  nice: number,
  o: LabRunOptions & { wakerCpu: 'host' | 'work'; rounds: number },
  lab: Lab,
  host: (args: (string | number)[]) => TwinOut,
  /** Where twin.c writes the waker's CPU per cycle (its CPUSEQ_FILE), for the rules. */
  seqDir: string,
): Promise<string[]> {
  const rows: string[][] = [];
  for (const w of ws) {
    const hostAnswers: Answer[] = [];
    const labAnswers: Answer[] = [];
    let run: number | undefined;
    let workSeq: number[] | undefined;
    for (let round = 0; round < o.rounds; round++) {
      const at = `W = ${w} µs${o.rounds > 1 ? `, round ${round + 1} of ${o.rounds}` : ''}`;
      process.stderr.write(`(a) 1 hog nice ${nice}, ${at}: host...   \r`);
      const seqFile = join(seqDir, `cpuseq-sweep-${w}-${round}.txt`);
      const hr = host(['hogs', 1, nice, o.periodUs, w, o.iters, seqFile]);
      if (workSeq === undefined && o.wakerCpu === 'host') workSeq = readCpuSeq(seqFile);
      hostAnswers.push(hostDist(hr));
      if (run === undefined && 'values' in hr && hr.values.run > 0) run = hr.values.run;
      const workNs = labWorkNs(o.wakerCpu, run, w);
      process.stderr.write(`(a) 1 hog nice ${nice}, ${at}: lab...    \r`);
      labAnswers.push(labDist(await labHogs(lab, o, 1, nice, false, workNs, workSeq), BOUND));
    }
    const h = pooled(hostAnswers);
    const l = pooled(labAnswers);
    const rules = rulesDist(lab, lab.profile, {
      hogs: 1,
      nice,
      periodUs: o.periodUs,
      workNs: labWorkNs(o.wakerCpu, run, w),
      iters: o.iters,
      ...(workSeq ? { workSeq } : {}),
    });
    rows.push([
      `${w} µs`,
      run !== undefined ? `${(run / 1e3).toFixed(1)} µs` : '-',
      pct(h),
      pct(l),
      pct(rules),
      over(l, h),
      over(rules, h),
      ms(h, 'p99'),
      ms(l, 'p99'),
      ms(rules, 'p99'),
    ]);
  }
  process.stderr.write(`${' '.repeat(48)}\r`);
  return [
    `(a) 1 hog nice ${nice} at each W: the share of wake-ups that waited past 0.5 ms (a tick's wait, not the wake-up path's)`,
    `    host: ${o.iters * o.rounds} wake-ups each; lab: cpu-hog's bound kworker, as many; the rules alone pooled over ${MODEL_PHASES} phases of`,
    `    the tick (bench/twin-model.ts). The work the lab and the rules ran: ${o.wakerCpu === 'host' ? "the host waker's CPU per wake-up (--waker-cpu host), each cycle's in order" : 'W (--waker-cpu work)'}.`,
    ...table(
      [
        'W',
        'host CPU/wake-up',
        'host >0.5ms',
        'lab >0.5ms',
        'rules >0.5ms',
        'lab/host',
        'rules/host',
        'host p99',
        'lab p99',
        'rules p99',
      ],
      rows,
    ),
  ];
}
