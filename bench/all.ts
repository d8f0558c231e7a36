/**
 * Every benchmark, in sequence, each under its own header: fastmix, shm, machine, strategies,
 * tracing. `npm run bench` builds and runs this (node dist/bench/all.js).
 *
 * A benchmark module that does not exist (yet) is skipped with a line saying so; one that fails
 * is reported and the rest still run (exit status 1 at the end). Nothing here asserts on a
 * timing: the figures are for reading, side by side, with the host's state printed beside them.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { type BenchUsage, benchArgs } from './cli.js';
import { isMain } from './lib.js';

interface Section {
  name: string;
  /** Module specifier relative to this file (a variable, so a missing module is a runtime skip). */
  spec: string;
  what: string;
}

const SECTIONS: Section[] = [
  { name: 'fastmix', spec: './fastmix.js', what: 'fast_mix and add_interrupt_randomness per call, against C' },
  { name: 'shm', spec: './shm.js', what: 'shared-memory rings, doorbells and locks' },
  { name: 'machine', spec: './machine.js', what: 'context switch, interrupt entry, interrupt throughput (issue #2)' },
  {
    name: 'strategies',
    spec: './strategies.js',
    what: 'hand-off -> start per strategy; unbound vs. a minimal pool (issue #4)',
  },
  { name: 'tracing', spec: './tracing.js', what: 'what tracing costs tcp_lat (issue #5)' },
  {
    name: 'net',
    spec: './net.js',
    what: 'the network path: per-packet cost, one-way 4K..1M per NIC profile (issue #13)',
  },
  {
    name: 'host',
    spec: './host.js',
    what: 'the emulator out of the way: generator CPU, idle policies, kthread hosting (issue #12)',
  },
];

function isMissing(e: unknown, spec: string): boolean {
  const err = e as { code?: string; message?: string; url?: string };
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  // Only the section's own module being absent is a skip; a missing import inside it is a failure.
  const base = spec.replace(/^\.\//, '').replace(/\.js$/, '');
  return new RegExp(`[/\\\\]bench[/\\\\]${base}\\.(js|ts)\\b`).test(`${err.message ?? ''} ${err.url ?? ''}`);
}

export async function main(): Promise<void> {
  const t0 = Date.now();
  const say = (s: string) => process.stdout.write(`${s}\n`);
  say(
    `deferlab benchmarks: Node ${process.version}, ${availableParallelism()} cores (os.availableParallelism()), ${cpus()[0]?.model ?? 'unknown CPU'}`,
  );
  say(
    `host load average at start: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (1, 5, 15 min); above the core count, other processes share the cores`,
  );
  const failed: string[] = [];
  for (const s of SECTIONS) {
    say('');
    say(`=== ${s.name}: ${s.what} ===`);
    const ts = Date.now();
    let mod: { main?: () => Promise<void> };
    try {
      mod = await import(s.spec);
    } catch (e) {
      if (isMissing(e, s.spec)) {
        say(`(skipped: bench/${s.name} does not exist in this checkout)`);
        continue;
      }
      failed.push(s.name);
      say(`(failed to load bench/${s.name}: ${e instanceof Error ? e.message : String(e)})`);
      continue;
    }
    if (typeof mod.main !== 'function') {
      failed.push(s.name);
      say(`(bench/${s.name} exports no main())`);
      continue;
    }
    try {
      await mod.main();
    } catch (e) {
      failed.push(s.name);
      say(`(bench/${s.name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)})`);
    }
    say(`[${s.name}: ${((Date.now() - ts) / 1000).toFixed(1)} s; load average now ${loadavg()[0].toFixed(2)}]`);
  }
  say('');
  say(
    `all benchmarks: ${((Date.now() - t0) / 1000).toFixed(0)} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
  );
  if (failed.length) process.exitCode = 1;
}

export const USAGE: BenchUsage = {
  script: 'bench',
  about:
    "The machine's own micro-benchmarks in sequence (fastmix, shm, machine, strategies, tracing), each under its header, with the host's load average beside them; about 2 minutes. A section that fails is reported and the rest still run (exit 1 at the end). It takes no options: the other benches are their own scripts (bench:net, bench:scale, bench:twin, bench:host, bench:aa, bench:stalls, bench:timeline, bench:scenarios).",
  flags: [],
};

if (isMain(import.meta.url)) {
  benchArgs(USAGE);
  await main();
}
