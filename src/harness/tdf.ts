/**
 * Time dilation (`--tdf N|auto`, config key `tdf`): how the run's time dilation factor is
 * chosen. The clock that applies it is src/clock.ts (`emulated ns = host ns / TDF`); why and
 * what it cannot fix: docs/architecture.md, "Time dilation".
 *
 * `auto` measures, at start-up and on this process's main thread, operations of the emulated
 * path the lab runs in JavaScript, each beside a reference for what the kernel pays for the
 * same operation, and sets TDF to the MEDIAN of their lab/reference ratios (a median: one
 * operation that is unusually slow or fast, or a noisy measurement on a loaded host, does not
 * set the factor alone), rounded to 0.1, at least 1, at most TDF_AUTO_MAX. The operations:
 *
 *   payload write per byte  the lab's send-side payload pass (src/net/packet.ts fillPayload)
 *                           over 64 KiB, against a 64 KiB memcpy: Uint8Array.prototype.set
 *                           between two SharedArrayBuffer views (V8 copies with memmove),
 *                           measured in the same pass; or bench:scale's memcpy (C) when
 *                           its file has one.
 *   mix (32 B)              random.c's mix_pool_bytes of one fast pool (32 B) into the input
 *                           pool under its lock (src/random/inputpool.ts InputPool.mix),
 *                           against MIX_REF_NS; or bench:scale's C BLAKE2s when its file has one.
 *
 * References that need a C compiler come only from the last `npm run bench:scale` on this
 * machine (SCALE_CACHE_FILE, written by bench/scale.ts; validated, ignored with one warning
 * line when broken): a run never needs a compiler.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LIMITS } from '../config/defaults.js';
import { fillPayload } from '../net/packet.js';
import { INPUT_POOL_WORDS, InputPool } from '../random/inputpool.js';
import { median } from '../report/statistics/order.js';

/**
 * The largest TDF `--tdf` takes (LIMITS.tdf.max, src/config/defaults.ts). Every trial, warm-up and drain lasts TDF times its emulated
 * length in host time (docs/cli.md, --duration), so the default comparison (3 strategies × 5
 * trials × (1 s + 0.3 s), ~25 s at TDF 1) takes ~7 min at 16; and at HZ 1000 a tick is 16 host
 * ms apart, still far inside the watchdog's 2 s.
 */
export const TDF_MAX = LIMITS.tdf.max;
/**
 * `auto` never picks more than this: the default comparison then takes ~3.5 min (~8× its TDF 1
 * time), the longest we let a run grow without the user asking for it.
 */
export const TDF_AUTO_MAX = 8;

/**
 * The mix's reference, ns for 32 B absorbed: blake2s_update of 32 B compresses half a 64 B
 * block on average (lib/crypto/blake2s.c). One block: 125 ns, golang.org/x/crypto/blake2s's
 * Write64 on amd64/SSE4 (commit 4428aee3, "blake2s: new package", 2016); the kernel's
 * blake2s_compress_ssse3 (arch/x86/crypto/blake2s-core.S) is no slower. The lock's uncontended
 * cost is not included, so the ratio errs high.
 */
export const MIX_REF_NS = 125 / 2;

/** Where bench:scale leaves its last measurements (XDG_CACHE_HOME respected). */
export function scaleCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.trim() !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'deferlab', 'bench-scale.json');
}

/** One operation of bench-scale.json (bench/scale.ts writes it). */
export interface ScaleOp {
  name: string;
  labNs: number;
  /** Absent (or null) for an operation with no reference yet: such an operation is not used. */
  refNs?: number | null;
  unit: string;
  source: string;
  measured: boolean;
}

/** bench-scale.json: `{ version: 1, date, node, host, ops: [...] }`. */
export interface ScaleCache {
  version: 1;
  date: string;
  node: string;
  host: string;
  ops: ScaleOp[];
}

/** Check a parsed bench-scale.json; returns what is wrong, or the cache. */
export function validateScaleCache(x: unknown): ScaleCache | string {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return 'not a JSON object';
  const o = x as Record<string, unknown>;
  if (o.version !== 1) return `version is ${JSON.stringify(o.version)}, not 1`;
  for (const k of ['date', 'node', 'host'] as const) if (typeof o[k] !== 'string') return `"${k}" is not a string`;
  if (!Array.isArray(o.ops)) return '"ops" is not a list';
  for (const [i, op] of o.ops.entries()) {
    const p = op as Record<string, unknown>;
    if (!p || typeof p !== 'object') return `ops[${i}] is not an object`;
    if (typeof p.name !== 'string' || typeof p.unit !== 'string' || typeof p.source !== 'string')
      return `ops[${i}] needs string name, unit and source`;
    for (const k of ['labNs', 'refNs'] as const) {
      const v = p[k];
      if (k === 'refNs' && (v === undefined || v === null)) continue; // no reference yet
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        return `ops[${i}] (${p.name}): ${k} must be a positive number${k === 'refNs' ? ' (or absent)' : ''}`;
    }
    if (typeof p.measured !== 'boolean') return `ops[${i}] (${p.name}): measured must be true or false`;
  }
  return o as unknown as ScaleCache;
}

/** Read bench-scale.json: undefined when absent; when broken, one `warn` line and undefined. */
export function readScaleCache(file: string, warn: (line: string) => void): ScaleCache | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // no bench:scale run on this machine: the documented references serve
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    warn(`--tdf auto: ignoring ${file}: not valid JSON (re-run npm run bench:scale to rewrite it)`);
    return undefined;
  }
  const v = validateScaleCache(parsed);
  if (typeof v === 'string') {
    warn(`--tdf auto: ignoring ${file}: ${v} (re-run npm run bench:scale to rewrite it)`);
    return undefined;
  }
  return v;
}

/** One operation behind an `auto` choice. */
export interface TdfOp {
  name: string;
  unit: string;
  labNs: number;
  refNs: number;
  /** Where the reference comes from. */
  refSource: string;
}

/** The run's TDF and how it was chosen (results.json `meta.tdf`). */
export interface TdfChoice {
  tdf: number;
  /** `given` (the flag or config), `default`, or `auto`. */
  mode: 'given' | 'default' | 'auto';
  /** One line: `auto: median lab/reference 11.4 over 2 operations, capped at 8`. */
  how: string;
  /** With `auto`: the operations measured. */
  ops?: TdfOp[];
}

/** TDF from lab/reference ratios: their median, rounded to 0.1, clamped to [1, TDF_AUTO_MAX]. */
export function tdfFromRatios(ratios: readonly number[]): { tdf: number; median: number; capped: boolean } {
  const m = ratios.length ? median(ratios) : 1;
  const r = Math.round(m * 10) / 10;
  const capped = r > TDF_AUTO_MAX;
  return { tdf: Math.min(TDF_AUTO_MAX, Math.max(1, r)), median: m, capped };
}

/**
 * Host ns per call of `fn`: the fastest of `batches` batches of `n` calls, after WARM_BATCHES
 * unmeasured ones (the optimising compiler's turn: with one warm batch of 500 the mix measured
 * 1.5–6.3 µs in three back-to-back passes). The fastest, not the median: on a loaded host a batch
 * the host preempted is slower, never faster, and the references are not measured under that load.
 */
function timeNs(fn: () => void, n: number, batches = 9): number {
  let best = Number.POSITIVE_INFINITY;
  for (let b = -WARM_BATCHES; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    const dt = ((performance.now() - t0) * 1e6) / n;
    if (b >= 0 && dt < best) best = dt;
  }
  return best;
}

const PAYLOAD_BYTES = 64 * 1024;
const WARM_BATCHES = 3;

/** The lab's operations measured now (host ns), with their in-process or documented references. */
export function measureOps(cache?: ScaleCache): TdfOp[] {
  const words = PAYLOAD_BYTES / 4;
  // fillPayload writes after a packet header (src/net/layout.ts): room for any header size.
  const pkt = new Int32Array(new SharedArrayBuffer(PAYLOAD_BYTES + 4096));
  let sink = 0;
  const payload = timeNs(() => {
    sink = fillPayload(pkt, 0, 0, words, sink);
  }, 20);
  const a = new Uint8Array(new SharedArrayBuffer(PAYLOAD_BYTES));
  const b = new Uint8Array(new SharedArrayBuffer(PAYLOAD_BYTES));
  a.fill(7);
  const memcpy = timeNs(() => b.set(a), 20);
  const pool = new Int32Array(new SharedArrayBuffer(INPUT_POOL_WORDS * 4));
  InputPool.init(pool, 0);
  const input = new InputPool(pool, 0);
  const fast = new Uint8Array(32).fill(0x5a);
  const mix = timeNs(() => input.mix(fast), 2000);
  if (sink === 0.5) throw new Error('unreachable'); // keeps the payload pass observable

  const fromCache = (re: RegExp, perByte: boolean): ScaleOp | undefined =>
    cache?.ops.find(
      (o) => o.measured && typeof o.refNs === 'number' && re.test(o.name) && /\/B|byte/i.test(o.unit) === perByte,
    );
  const cCopy = fromCache(/memcpy|copy/i, true);
  const cMix = fromCache(/blake2s|^mix\b|\bmix\b(?!.*fast)/i, false);
  return [
    {
      name: 'payload write per byte',
      unit: 'ns/B',
      labNs: payload / PAYLOAD_BYTES,
      refNs: cCopy?.refNs ? cCopy.refNs : memcpy / PAYLOAD_BYTES,
      refSource: cCopy
        ? `bench:scale ${cache?.date}: ${cCopy.source}`
        : 'memcpy of 64 KiB (Uint8Array.prototype.set between SharedArrayBuffer views), measured now',
    },
    {
      name: 'mix (32 B into the input pool)',
      unit: 'ns',
      labNs: mix,
      refNs: cMix?.refNs ? cMix.refNs : MIX_REF_NS,
      refSource: cMix
        ? `bench:scale ${cache?.date}: ${cMix.source}`
        : 'half a BLAKE2s block, 125 ns/64 B (golang.org/x/crypto/blake2s 4428aee3, amd64/SSE4)',
    },
  ];
}

/** The `auto` choice from measured operations. */
export function autoChoice(ops: TdfOp[], fromCache: boolean): TdfChoice {
  const { tdf, median: m, capped } = tdfFromRatios(ops.map((o) => o.labNs / o.refNs));
  const each = ops.map((o) => `${o.name} ${(o.labNs / o.refNs).toFixed(1)}x`).join(', ');
  const how =
    `auto: median lab/reference ratio ${m.toFixed(1)} over ${ops.length} operations (${each})` +
    `${fromCache ? ', references from bench:scale' : ''}${capped ? `, capped at ${TDF_AUTO_MAX}` : ''}`;
  return { tdf, mode: 'auto', how, ops };
}

let remembered: TdfChoice | undefined;

/**
 * The run's TDF from the config's `tdf` (a number, `auto`, or absent). `auto` measures once per
 * process (every point and scenario of a run shares the choice). Context: main thread, before
 * the first machine boots (the measurement loads the host for ~0.1 s).
 */
export function resolveTdf(
  setting: number | 'auto' | undefined,
  warn: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): TdfChoice {
  if (setting === undefined || setting === 1)
    return { tdf: 1, mode: setting === undefined ? 'default' : 'given', how: 'no dilation' };
  if (setting !== 'auto') return { tdf: setting, mode: 'given', how: `given (--tdf ${setting})` };
  if (remembered) return remembered;
  const cache = readScaleCache(scaleCacheFile(), warn);
  const ops = measureOps(cache);
  remembered = autoChoice(
    ops,
    ops.some((o) => o.refSource.startsWith('bench:scale')),
  );
  return remembered;
}
