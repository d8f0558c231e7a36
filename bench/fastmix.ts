/**
 * ns per `fast_mix()` (both variants) and per `add_interrupt_randomness()` without a hand-off,
 * beside the same `fast_mix()` compiled from C (bench/c/fastmix.c, `cc -O2`), and the 64-bit add
 * carry forms the SipHash permutation could use.
 *
 * Run: npm run build && node dist/bench/fastmix.js
 *
 * Each tinybench call runs BATCH operations, so the timer's own cost (~30-70 ns a reading) is
 * spread over BATCH; ns/op = median call latency / BATCH. Single thread, on whatever core the OS
 * gives it (the machine's core count is printed). Bar: JS fastMix64 at most 6x the C build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import {
  FAST_POOL_WORDS,
  FastPool,
  fastMix32,
  fastMix64,
  fastPoolBase,
  fastPoolRegionWords,
  initFastPool,
  SipState64,
  sipPermute64,
} from '../src/random/index.js';

const BATCH = 1000;
/** A trigger no count reaches: measures the path that returns without a hand-off. */
const NEVER = 2 ** 32;
/** The bar from the task: JS fast_mix at most this many times the C build. */
const MAX_RATIO = 6;

/** The directory holding package.json, walking up from this file (src or dist). */
export function repoRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}: run the bench from inside the deferlab checkout`);
    dir = up;
  }
}

// ---- alternative carry forms, for the record (the kept one is in src/random/siphash.ts) ----

type Perm = (s: SipState64) => void;

/** SIPHASH_PERMUTATION, carry taken with a branch. */
// biome-ignore format: the permutation reads best as a table, one kernel statement a line
function permTernary(s: SipState64): void {
  let a0 = s.v0lo, a1 = s.v0hi, b0 = s.v1lo, b1 = s.v1hi, c0 = s.v2lo, c1 = s.v2hi, d0 = s.v3lo, d1 = s.v3hi, t = 0;
  t = (a0 + b0) | 0; a1 = (a1 + b1 + ((t >>> 0) < (a0 >>> 0) ? 1 : 0)) | 0; a0 = t;
  t = (b0 << 13) | (b1 >>> 19); b1 = ((b1 << 13) | (b0 >>> 19)) ^ a1; b0 = t ^ a0; t = a0; a0 = a1; a1 = t;
  t = (c0 + d0) | 0; c1 = (c1 + d1 + ((t >>> 0) < (c0 >>> 0) ? 1 : 0)) | 0; c0 = t;
  t = (d0 << 16) | (d1 >>> 16); d1 = ((d1 << 16) | (d0 >>> 16)) ^ c1; d0 = t ^ c0;
  t = (a0 + d0) | 0; a1 = (a1 + d1 + ((t >>> 0) < (a0 >>> 0) ? 1 : 0)) | 0; a0 = t;
  t = (d0 << 21) | (d1 >>> 11); d1 = ((d1 << 21) | (d0 >>> 11)) ^ a1; d0 = t ^ a0;
  t = (c0 + b0) | 0; c1 = (c1 + b1 + ((t >>> 0) < (c0 >>> 0) ? 1 : 0)) | 0; c0 = t;
  t = (b0 << 17) | (b1 >>> 15); b1 = ((b1 << 17) | (b0 >>> 15)) ^ c1; b0 = t ^ c0;
  s.v0lo = a0; s.v0hi = a1; s.v1lo = b0; s.v1hi = b1; s.v2lo = c1; s.v2hi = c0; s.v3lo = d0; s.v3hi = d1;
}

/** SIPHASH_PERMUTATION, carry by the full-adder identity. */
// biome-ignore format: the permutation reads best as a table, one kernel statement a line
function permBitwise(s: SipState64): void {
  let a0 = s.v0lo, a1 = s.v0hi, b0 = s.v1lo, b1 = s.v1hi, c0 = s.v2lo, c1 = s.v2hi, d0 = s.v3lo, d1 = s.v3hi, t = 0;
  t = (a0 + b0) | 0; a1 = (a1 + b1 + (((a0 & b0) | ((a0 | b0) & ~t)) >>> 31)) | 0; a0 = t;
  t = (b0 << 13) | (b1 >>> 19); b1 = ((b1 << 13) | (b0 >>> 19)) ^ a1; b0 = t ^ a0; t = a0; a0 = a1; a1 = t;
  t = (c0 + d0) | 0; c1 = (c1 + d1 + (((c0 & d0) | ((c0 | d0) & ~t)) >>> 31)) | 0; c0 = t;
  t = (d0 << 16) | (d1 >>> 16); d1 = ((d1 << 16) | (d0 >>> 16)) ^ c1; d0 = t ^ c0;
  t = (a0 + d0) | 0; a1 = (a1 + d1 + (((a0 & d0) | ((a0 | d0) & ~t)) >>> 31)) | 0; a0 = t;
  t = (d0 << 21) | (d1 >>> 11); d1 = ((d1 << 21) | (d0 >>> 11)) ^ a1; d0 = t ^ a0;
  t = (c0 + b0) | 0; c1 = (c1 + b1 + (((c0 & b0) | ((c0 | b0) & ~t)) >>> 31)) | 0; c0 = t;
  t = (b0 << 17) | (b1 >>> 15); b1 = ((b1 << 17) | (b0 >>> 15)) ^ c1; b0 = t ^ c0;
  s.v0lo = a0; s.v0hi = a1; s.v1lo = b0; s.v1hi = b1; s.v2lo = c1; s.v2hi = c0; s.v3lo = d0; s.v3hi = d1;
}

/** SIPHASH_PERMUTATION, carry from a double-precision sum. */
// biome-ignore format: the permutation reads best as a table, one kernel statement a line
function permDouble(s: SipState64): void {
  let a0 = s.v0lo, a1 = s.v0hi, b0 = s.v1lo, b1 = s.v1hi, c0 = s.v2lo, c1 = s.v2hi, d0 = s.v3lo, d1 = s.v3hi, t = 0, u = 0;
  u = (a0 >>> 0) + (b0 >>> 0); a1 = (a1 + b1 + ((u / 4294967296) | 0)) | 0; a0 = u | 0;
  t = (b0 << 13) | (b1 >>> 19); b1 = ((b1 << 13) | (b0 >>> 19)) ^ a1; b0 = t ^ a0; t = a0; a0 = a1; a1 = t;
  u = (c0 >>> 0) + (d0 >>> 0); c1 = (c1 + d1 + ((u / 4294967296) | 0)) | 0; c0 = u | 0;
  t = (d0 << 16) | (d1 >>> 16); d1 = ((d1 << 16) | (d0 >>> 16)) ^ c1; d0 = t ^ c0;
  u = (a0 >>> 0) + (d0 >>> 0); a1 = (a1 + d1 + ((u / 4294967296) | 0)) | 0; a0 = u | 0;
  t = (d0 << 21) | (d1 >>> 11); d1 = ((d1 << 21) | (d0 >>> 11)) ^ a1; d0 = t ^ a0;
  u = (c0 >>> 0) + (b0 >>> 0); c1 = (c1 + b1 + ((u / 4294967296) | 0)) | 0; c0 = u | 0;
  t = (b0 << 17) | (b1 >>> 15); b1 = ((b1 << 17) | (b0 >>> 15)) ^ c1; b0 = t ^ c0;
  s.v0lo = a0; s.v0hi = a1; s.v1lo = b0; s.v1hi = b1; s.v2lo = c1; s.v2hi = c0; s.v3lo = d0; s.v3hi = d1;
}

// ---- the C reference ----

interface CResult {
  fastmix64: number;
  fastmix32: number;
}

/** Build bench/c/fastmix.c with `cc -O2` into a temp dir and run it; a string says why not. */
export function runC(): CResult | string {
  const src = join(repoRoot(), 'bench', 'c', 'fastmix.c');
  if (!existsSync(src)) return `C reference skipped: ${src} not found`;
  const dir = mkdtempSync(join(tmpdir(), 'deferlab-fastmix-'));
  try {
    const exe = join(dir, 'fastmix');
    const cc = spawnSync('cc', ['-O2', '-o', exe, src], { encoding: 'utf8' });
    if (cc.error) return `C reference skipped: no C compiler (\`cc\`: ${cc.error.message})`;
    if (cc.status !== 0) return `C reference skipped: cc -O2 failed (exit ${cc.status}): ${cc.stderr.trim()}`;
    const run = spawnSync(exe, [], { encoding: 'utf8' });
    if (run.status !== 0) return `C reference skipped: ${exe} exited ${run.status}: ${run.stderr.trim()}`;
    const out: Record<string, number> = {};
    for (const line of run.stdout.trim().split('\n')) {
      const [k, v] = line.split(/\s+/);
      out[k] = Number(v);
    }
    if (!(out.fastmix64 > 0 && out.fastmix32 > 0))
      return `C reference skipped: unexpected output ${JSON.stringify(run.stdout)}`;
    return { fastmix64: out.fastmix64, fastmix32: out.fastmix32 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the JS measurements ----

function nsPerOp(bench: Bench, name: string): number {
  const task = bench.tasks.find((t) => t.name === name);
  const r = task?.result;
  if (r?.state !== 'completed') throw new Error(`bench task "${name}" did not complete (${r?.state ?? 'missing'})`);
  return (r.latency.p50 * 1e6) / BATCH;
}

const KEPT64 = 'fastMix64 (SipHash perm, kept carry: +(s < a))';
const KEPT32 = 'fastMix32 (HSipHash perm)';
const ADD64 = 'addInterruptRandomness 64, no hand-off';
const ADD32 = 'addInterruptRandomness 32, no hand-off';
const COUNT_ATOMIC = 'count++ with Atomics.add';
const COUNT_PLAIN = 'count++ plain (kept: owner-only word)';
const PERM_KEPT = 'SIPHASH_PERMUTATION, carry +(s < a) as a number (kept)';

export async function main(): Promise<void> {
  const cpus = 2;
  const i32 = new Int32Array(new SharedArrayBuffer(4 * (16 + fastPoolRegionWords(cpus) + FAST_POOL_WORDS)));
  const region = 16;
  initFastPool(i32, fastPoolBase(region, 0), '64', 0);
  initFastPool(i32, fastPoolBase(region, 1), '32', 1);
  const fp64 = new FastPool(i32, fastPoolBase(region, 0), '64');
  const fp32 = new FastPool(i32, fastPoolBase(region, 1), '32');
  const scratchBase = region + fastPoolRegionWords(cpus);
  const countWord = scratchBase;

  // Every carry form must compute the kept permutation's result before it is timed.
  const forms: [string, Perm][] = [
    [PERM_KEPT, sipPermute64],
    ['SIPHASH_PERMUTATION, carry with a branch (s < a ? 1 : 0)', permTernary],
    ['SIPHASH_PERMUTATION, carry bitwise ((a&b)|((a|b)&~s))>>>31', permBitwise],
    ['SIPHASH_PERMUTATION, carry from a double (a + b) / 2^32', permDouble],
  ];
  for (const [name, perm] of forms) {
    const a = new SipState64();
    const b = new SipState64();
    for (let i = 0; i < 1000; i++) {
      a.v3lo ^= i * 1_000_003;
      b.v3lo ^= i * 1_000_003;
      a.v1hi ^= -i;
      b.v1hi ^= -i;
      sipPermute64(a);
      perm(b);
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${name}: differs from src/random/siphash.ts`);
  }

  // The clock argument: ~17 minutes into a run (above 2^32 ns, so both halves vary), advanced
  // per batch; within a batch it is a local double, so the harness allocates nothing.
  let batch = 0;
  const clock = (): number => 1e12 + ++batch * 1e6;
  const P64 = fastPoolBase(region, 0);
  const P32 = fastPoolBase(region, 1);
  const bench = new Bench({ time: 500, warmupTime: 200 });
  bench
    .add(KEPT64, () => {
      const t = clock();
      for (let i = 0; i < BATCH; i++) fastMix64(i32, P64, (t / 4294967296) | 0, t + i * 997, 0xc1000000, i);
    })
    .add(KEPT32, () => {
      const t = clock();
      for (let i = 0; i < BATCH; i++) fastMix32(i32, P32, t + i * 997, 0xc1000000 ^ i);
    })
    .add(ADD64, () => {
      const t = clock();
      for (let i = 0; i < BATCH; i++) fp64.addInterruptRandomness(i & 31, t + i * 997, 0xc0de, 0, 250, NEVER);
    })
    .add(ADD32, () => {
      const t = clock();
      for (let i = 0; i < BATCH; i++) fp32.addInterruptRandomness(i & 31, t + i * 997, 0xc0de, 0, 250, NEVER);
    })
    .add(COUNT_ATOMIC, () => {
      for (let i = 0; i < BATCH; i++) Atomics.add(i32, countWord, 1);
    })
    .add(COUNT_PLAIN, () => {
      for (let i = 0; i < BATCH; i++) i32[countWord]++;
    });
  // One task literal per form, so each loop's call site sees one permutation and inlines it.
  const st = [new SipState64(), new SipState64(), new SipState64(), new SipState64()];
  bench
    .add(forms[0][0], () => {
      const s = st[0];
      for (let i = 0; i < BATCH; i++) {
        s.v3lo ^= i;
        sipPermute64(s);
      }
    })
    .add(forms[1][0], () => {
      const s = st[1];
      for (let i = 0; i < BATCH; i++) {
        s.v3lo ^= i;
        permTernary(s);
      }
    })
    .add(forms[2][0], () => {
      const s = st[2];
      for (let i = 0; i < BATCH; i++) {
        s.v3lo ^= i;
        permBitwise(s);
      }
    })
    .add(forms[3][0], () => {
      const s = st[3];
      for (let i = 0; i < BATCH; i++) {
        s.v3lo ^= i;
        permDouble(s);
      }
    });
  await bench.run();
  // Keep the pools' reset state sane for anyone reading them after (the count grew by every call).
  fp64.randomOnlineCpu();
  fp32.randomOnlineCpu();

  const c = runC();
  const js64 = nsPerOp(bench, KEPT64);
  const js32 = nsPerOp(bench, KEPT32);
  const lines: string[] = [];
  lines.push(
    `fastmix bench: Node ${process.version}, ${availableParallelism()} cores, single thread, ${BATCH} ops per sample, median`,
  );
  const row = (name: string, ns: number, cNs?: number) =>
    lines.push(
      `  ${name.padEnd(62)} ${ns.toFixed(2).padStart(7)} ns/op${cNs ? `   C ${cNs.toFixed(2).padStart(6)} ns   JS/C ${(ns / cNs).toFixed(2)}x` : ''}`,
    );
  row(KEPT64, js64, typeof c === 'string' ? undefined : c.fastmix64);
  row(KEPT32, js32, typeof c === 'string' ? undefined : c.fastmix32);
  for (const name of [ADD64, ADD32, COUNT_ATOMIC, COUNT_PLAIN]) row(name, nsPerOp(bench, name));
  lines.push('  one permutation, by carry form:');
  for (const [name] of forms) row(`  ${name}`, nsPerOp(bench, name));
  if (typeof c === 'string') {
    lines.push(`  ${c}`);
    lines.push(`  bar (fastMix64 <= ${MAX_RATIO}x C): not checked`);
  } else {
    const ratio = js64 / c.fastmix64;
    lines.push(
      `  bar (fastMix64 <= ${MAX_RATIO}x C): ${ratio <= MAX_RATIO ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x)`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
