/**
 * Parsers for the values a user types: integers, durations, byte sizes, rates, CPU lists.
 *
 * Each accepts a number (from a JSON config file or a preset) or a string (from a flag, or a
 * config file that prefers units) and returns {@link Parsed}: the value, or the constraint the
 * input broke. None of them knows which setting it parses; the caller names it.
 *
 * Units, and why they differ:
 *   durations  `1500` (ms), `1500ms`, `1.5s`, `2min`
 *   sizes      `64`, `4K` = `4KiB` = 4096, `1M` = `1MiB` = 1048576, `1G`: binary, as qperf reads sizes
 *   rates      `20000`, `20k` = 20000, `1M` = 1000000: decimal, since they count events per second
 */
import { fail, ok, type Parsed } from './errors.js';

const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** A JSON number, or a string holding a plain decimal number; otherwise undefined. */
export function parsePlainNumber(input: unknown): number | undefined {
  if (typeof input === 'number') return input;
  if (typeof input === 'string' && PLAIN_NUMBER.test(input.trim())) return Number(input.trim());
  return undefined;
}

/** `4194304` → `4M`, `4096` → `4K`, `100` → `100`: the shortest exact binary-suffixed form. */
export function formatSize(bytes: number): string {
  for (const [suffix, scale] of [
    ['G', 2 ** 30],
    ['M', 2 ** 20],
    ['K', 2 ** 10],
  ] as const) {
    if (bytes >= scale && bytes % scale === 0) return `${bytes / scale}${suffix}`;
  }
  return String(bytes);
}

/** `600000` → `600s`, `50` → `50ms`. */
export function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export function integerIn(min: number, max: number): (input: unknown) => Parsed<number> {
  const constraint = `must be an integer from ${min} to ${max}`;
  return (input) => {
    const n = parsePlainNumber(input);
    return n !== undefined && Number.isInteger(n) && n >= min && n <= max ? ok(n) : fail(constraint);
  };
}

/** An integer from a fixed list, e.g. the HZ values. `why` explains the list. */
export function oneOfIntegers<T extends number>(values: readonly T[], why: string): (input: unknown) => Parsed<T> {
  const constraint = `must be one of ${why}: ${values.join(', ')}`;
  return (input) => {
    const n = parsePlainNumber(input);
    return n !== undefined && (values as readonly number[]).includes(n) ? ok(n as T) : fail(constraint);
  };
}

/** A uint32, decimal or `0x` hex (a seed printed by a previous run can be pasted back). */
export function parseUint32(input: unknown): Parsed<number> {
  const constraint = 'must be an integer from 0 to 4294967295 (a uint32)';
  let n = parsePlainNumber(input);
  if (n === undefined && typeof input === 'string' && /^0x[0-9a-f]{1,8}$/i.test(input.trim())) {
    n = Number.parseInt(input.trim(), 16);
  }
  return n !== undefined && Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff ? ok(n) : fail(constraint);
}

const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|min)?$/i;
const MS_PER_UNIT: Record<string, number> = { ms: 1, s: 1000, min: 60_000 };

/** A duration in whole milliseconds: a number (ms), or `1500`, `1500ms`, `1.5s`, `2min`. */
export function durationMsIn(min: number, max: number): (input: unknown) => Parsed<number> {
  const range = `must be a duration from ${formatMs(min)} to ${formatMs(max)}`;
  return (input) => {
    let ms: number | undefined;
    if (typeof input === 'number') ms = input;
    else if (typeof input === 'string') {
      const m = DURATION.exec(input.trim());
      if (m) ms = Number(m[1]) * MS_PER_UNIT[(m[2] ?? 'ms').toLowerCase()];
    }
    if (ms === undefined)
      return fail(`must be a duration like 1500 (ms), 1500ms, 1.5s or 2min, from ${formatMs(min)} to ${formatMs(max)}`);
    if (!Number.isFinite(ms) || ms < min || ms > max) {
      // A bare number is milliseconds: say so where the reader may have meant seconds.
      const bare = typeof input === 'number' || /^[\d.]+$/.test(String(input).trim());
      return fail(
        bare && ms > 0 && ms < min && ms * 1000 <= max
          ? `${range}; a bare number is milliseconds: for seconds write ${String(input).trim()}s`
          : range,
      );
    }
    if (!Number.isInteger(ms)) return fail(`${range}, in whole milliseconds`);
    return ok(ms);
  };
}

const SIZE = /^(\d+(?:\.\d+)?|\.\d+)\s*(?:([kmg])(?:ib)?)?$/i;
const BYTES_PER_SUFFIX: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };

/** A byte count: a number, or `64`, `4K`, `4KiB`, `1M`, `1MiB`, `1G` (binary multiples). */
export function parseSize(input: unknown): number | undefined {
  if (typeof input === 'number') return input;
  if (typeof input !== 'string') return undefined;
  const m = SIZE.exec(input.trim());
  if (!m) return undefined;
  return Number(m[1]) * BYTES_PER_SUFFIX[(m[2] ?? '').toLowerCase()];
}

const SIZE_FORMAT = 'must be a size in bytes like 64, 4K, 1M or 4KiB';

export function sizeIn(min: number, max: number): (input: unknown) => Parsed<number> {
  const range = `must be a size from ${formatSize(min)} to ${formatSize(max)} bytes`;
  return (input) => {
    const n = parseSize(input);
    if (n === undefined) return fail(SIZE_FORMAT);
    return Number.isInteger(n) && n >= min && n <= max ? ok(n) : fail(`${range}, a whole number of bytes`);
  };
}

export function powerOfTwoSizeIn(min: number, max: number): (input: unknown) => Parsed<number> {
  const constraint = `must be a power of two from ${formatSize(min)} to ${formatSize(max)} bytes`;
  return (input) => {
    const n = parseSize(input);
    if (n === undefined) return fail(SIZE_FORMAT);
    const powerOfTwo = Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
    return powerOfTwo && n >= min && n <= max ? ok(n) : fail(constraint);
  };
}

const RATE = /^(\d+(?:\.\d+)?|\.\d+)\s*([kKM])?$/;
const PER_SUFFIX: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6 };

/** An event count per second: a number, or `20000`, `20k`, `1.5M` (decimal multiples). */
export function parseRate(input: unknown): number | undefined {
  if (typeof input === 'number') return input;
  if (typeof input !== 'string') return undefined;
  const trimmed = input.trim();
  if (/^-\d/.test(trimmed)) return Number(trimmed); // let the range check name a negative rate
  const m = RATE.exec(trimmed);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * PER_SUFFIX[m[2] ?? ''] * 1e6) / 1e6;
}

export function rateIn(min: number, max: number, what: string): (input: unknown) => Parsed<number> {
  const range = `must be a whole number of ${what} from ${min} to ${max}`;
  return (input) => {
    const n = parseRate(input);
    if (n === undefined || Number.isNaN(n)) return fail(`must be a number of ${what} like 20000, 20k or 1M`);
    return Number.isInteger(n) && n >= min && n <= max ? ok(n) : fail(range);
  };
}

const GBPS = /^(\d+(?:\.\d+)?|\.\d+)\s*(G|Gb\/s|Gbps|Gbit)?$/i;

/** A link rate in Gb/s: a number, or `10`, `10G`, `40Gb/s`, `2.5`. */
export function gbpsIn(min: number, max: number): (input: unknown) => Parsed<number> {
  const constraint = `must be a link rate in Gb/s from ${min} to ${max}, like 10, 32 or 40G`;
  return (input) => {
    const n =
      typeof input === 'number' ? input : typeof input === 'string' ? Number(GBPS.exec(input.trim())?.[1]) : NaN;
    return Number.isFinite(n) && n >= min && n <= max ? ok(n) : fail(constraint);
  };
}

/**
 * CPU ids: `all`, or a list like `[0, 1]`, `"0,1"` or `"0-3,6"`. Each id is an integer from
 * 0 to `maxId`; none twice. Whether each is below `cpus` is checked once `cpus` is known.
 */
export function cpuSelection(maxId: number): (input: unknown) => Parsed<readonly number[] | 'all'> {
  const constraint = `must be "all" or a list of CPU ids like 0,1 or 0-3`;
  return (input) => {
    if (input === 'all') return ok('all');
    let ids: number[] | undefined;
    if (Array.isArray(input)) ids = input.every((x) => typeof x === 'number') ? (input as number[]) : undefined;
    else if (typeof input === 'string') ids = parseIdList(input, ',');
    if (ids === undefined || ids.length === 0) return fail(constraint);
    if (!ids.every((id) => Number.isInteger(id) && id >= 0 && id <= maxId)) {
      return fail(`must list CPU ids from 0 to ${maxId}`);
    }
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    if (twice !== undefined) return fail('must list each CPU once', { detail: `CPU ${twice} is listed twice` });
    return ok(ids);
  };
}

/** `0-3,6` → [0, 1, 2, 3, 6] (with `separator` between items); undefined if malformed. */
export function parseIdList(text: string, separator: string): number[] | undefined {
  const ids: number[] = [];
  for (const item of text.split(separator)) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(item);
    if (!m) return undefined;
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    if (last < first || last - first > 4096) return undefined;
    for (let id = first; id <= last; id++) ids.push(id);
  }
  return ids;
}

/** A strategy option's value as typed: `true`/`false` → boolean, a plain number → number, else the string. */
export function coerceOptionValue(text: string): string | number | boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (/^-?(\d+(\.\d+)?|\.\d+)$/.test(text)) return Number(text);
  return text;
}
