/**
 * The bench scripts' command lines: `--help` (or `-h`) says what a bench measures, about how long
 * it takes and what it takes, and exits 0 without measuring; anything it does not take (an unknown
 * flag, a flag without its value, a value given to a switch, a stray argument) is one line on
 * stderr and exit 2, before anything runs. Values themselves are checked by each bench.
 *
 * Each bench calls {@link benchArgs} only when it is the script node was started with (its
 * `isMain` block): `npm run bench` runs the sections' main() directly and has its own line.
 */

import { wrapWords } from '../src/text.js';

/** A flag a bench takes: `value` names its argument (`N`, `NAME`); absent, a switch. */
export interface BenchFlag {
  flag: string;
  value?: string;
  help: string;
}

export interface BenchUsage {
  /** The npm script (`bench:twin`), as the user runs it. */
  script: string;
  /** What it measures, how long it takes, what it needs: one paragraph, wrapped by the writer. */
  about: string;
  flags: readonly BenchFlag[];
  /** Bare arguments it takes, if any. */
  positional?: { name: string; help: string; accepts: (arg: string) => boolean };
}

/** The `--help` text. */
export function usageText(u: BenchUsage): string {
  const run = `npm run ${u.script}${u.flags.length || u.positional ? ' -- [options]' : ''}`;
  const rows: Array<[string, string]> = u.flags.map((f) => [f.value ? `${f.flag} ${f.value}` : f.flag, f.help]);
  if (u.positional) rows.push([u.positional.name, u.positional.help]);
  rows.push(['--help, -h', 'print this and exit']);
  const w = Math.max(...rows.map(([l]) => l.length));
  return [
    `usage: ${run}`,
    '',
    ...wrapWords(u.about, 96),
    '',
    'options:',
    ...rows.map(([l, h]) => `  ${l.padEnd(w)}  ${h}`),
    '',
  ].join('\n');
}

/**
 * Check `argv` against `u`: `--help` prints the usage and exits 0; anything not taken is one line
 * and exit 2. Returns the arguments with `--flag=value` split into `--flag value`, so that each
 * bench's own parser sees one form.
 */
/** Bad input to a bench: one line on stderr, `SCRIPT: problem`, and exit status 2. */
export function refuse(script: string, problem: string): never {
  process.stderr.write(`${script}: ${problem}\n`);
  process.exit(2);
}

export function benchArgs(u: BenchUsage, argv: readonly string[] = process.argv.slice(2)): string[] {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usageText(u));
    process.exit(0);
  }
  const fail = (problem: string): never =>
    refuse(u.script, `${problem}; 'npm run ${u.script} -- --help' lists what it takes`);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('-')) {
      const eq = a.indexOf('=');
      const name = eq >= 0 ? a.slice(0, eq) : a;
      const f = u.flags.find((x) => x.flag === name);
      if (!f) return fail(`unknown option ${name}`);
      if (f.value === undefined) {
        if (eq >= 0) fail(`${name} is a switch and takes no value (got ${a})`);
        out.push(name);
        continue;
      }
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '' || (eq < 0 && v.startsWith('--'))) fail(`${name} needs a value (${f.value})`);
      out.push(name, v);
      continue;
    }
    if (u.positional?.accepts(a)) {
      out.push(a);
      continue;
    }
    fail(
      u.positional ? `${JSON.stringify(a)} is not ${u.positional.name}` : `unexpected argument ${JSON.stringify(a)}`,
    );
  }
  return out;
}
