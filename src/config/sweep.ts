/**
 * Parameter sweeps in qperf's option-sweep syntax (`qperf -oo msg_size:4K:1024K:*2`).
 *
 *   NAME:MIN:MAX:STEP    MIN, MIN∘STEP, ... up to MAX inclusive, where STEP is `*N` (multiply,
 *                        N > 1) or `+N` / `N` (add, N > 0)
 *   NAME:V1,V2,...       exactly these values, in this order
 *
 * NAME is `msg_size` (bytes: `4K` = 4096, as qperf reads sizes), `irq_rate` (interrupts per
 * second per CPU: `20k` = 20000) or `trigger` (the fast pool's mix threshold, a count).
 * A sweep runs every strategy at every point, so it is capped at {@link MAX_SWEEP_POINTS}.
 * Whether msg_size fits the ring is checked once the ring size is known.
 */
import { closest, fail, ok, type Parsed } from './errors.js';
import { parsePlainNumber, parseRate, parseSize } from './units.js';

export const SWEEP_PARAMS = ['msg_size', 'irq_rate', 'trigger'] as const;
export type SweepParam = (typeof SWEEP_PARAMS)[number];

/** Points per sweep, at most: each point is a whole comparison of every strategy. */
export const MAX_SWEEP_POINTS = 64;
/** Counting stops here when telling the user how long a sweep would be. */
const COUNT_LIMIT = 10_000_000;

export interface Sweep {
  readonly param: SweepParam;
  readonly values: readonly number[];
}

interface ParamRule {
  /** Reads one value of this parameter (number or string with the parameter's units). */
  readonly read: (input: unknown) => number | undefined;
  readonly min: number;
  readonly max: number;
  readonly unit: string;
}

/** Per-value ranges; they match the settings the parameter overrides (see input.ts LIMITS). */
export const SWEEP_RULES: Readonly<Record<SweepParam, ParamRule>> = {
  msg_size: { read: parseSize, min: 1, max: 2 ** 28, unit: 'bytes (64, 4K, 1M)' },
  irq_rate: { read: parseRate, min: 0, max: 2_000_000, unit: 'interrupts per second per CPU (20000, 20k, 1M)' },
  trigger: { read: parsePlainNumber, min: 1, max: 65_535, unit: 'interrupts' },
};

const SHAPE = 'must look like name:min:max:step (step *N or +N) or name:v1,v2,..., e.g. msg_size:4K:1024K:*2';

function isParam(name: string): name is SweepParam {
  return (SWEEP_PARAMS as readonly string[]).includes(name);
}

/** One value of `param`, in range, or the problem. */
function readValue(param: SweepParam, input: unknown): Parsed<number> {
  const rule = SWEEP_RULES[param];
  const n = rule.read(input);
  if (n === undefined || !Number.isInteger(n) || n < rule.min || n > rule.max) {
    return fail(`must give ${param} values from ${rule.min} to ${rule.max} ${rule.unit}`, {
      detail: `bad value ${JSON.stringify(input)}`,
    });
  }
  return ok(n);
}

/** A sweep given as an object `{ param, values }` (config files), checked like the text form. */
function unknownParam(param: string): Parsed<never> {
  const near = closest(param, SWEEP_PARAMS);
  return fail(`must sweep one of ${SWEEP_PARAMS.join(', ')}`, { fix: near ? `did you mean ${near}?` : undefined });
}

export function sweepFromList(param: string, inputs: readonly unknown[]): Parsed<Sweep> {
  if (!isParam(param)) return unknownParam(param);
  if (inputs.length === 0) return fail('must list at least one value');
  if (inputs.length > MAX_SWEEP_POINTS) {
    return fail(`must have at most ${MAX_SWEEP_POINTS} points`, { detail: `${inputs.length} given` });
  }
  const values: number[] = [];
  for (const input of inputs) {
    const v = readValue(param, input);
    if (!v.ok) return v;
    if (values.includes(v.value))
      return fail(`must list each ${param} value once`, {
        detail: `${JSON.stringify(input)} repeats ${v.value}`,
        fix: 'drop the repeat (use --trials for more measurements of one point)',
      });
    values.push(v.value);
  }
  return ok({ param, values });
}

/** Parse `name:min:max:step` or `name:v1,v2,...`. */
export function parseSweep(text: string): Parsed<Sweep> {
  const parts = text.trim().split(':');
  if (parts.length === 2) {
    if (parts[1].trim() === '') return fail(SHAPE);
    return sweepFromList(
      parts[0],
      parts[1].split(',').map((s) => s.trim()),
    );
  }
  if (parts.length !== 4) return fail(SHAPE);
  const [param, minText, maxText, stepText] = parts;
  if (!isParam(param)) return unknownParam(param);
  const min = readValue(param, minText);
  if (!min.ok) return min;
  const max = readValue(param, maxText);
  if (!max.ok) return max;
  if (min.value > max.value) {
    return fail('must have min no larger than max', { detail: `min ${min.value} > max ${max.value}` });
  }

  const multiply = stepText.startsWith('*');
  const stepBody = multiply || stepText.startsWith('+') ? stepText.slice(1) : stepText;
  // An additive step has the parameter's units (+4K); a factor is a plain number.
  const step = multiply
    ? /^\d+(\.\d+)?$/.test(stepBody)
      ? Number(stepBody)
      : undefined
    : SWEEP_RULES[param].read(stepBody);
  if (step === undefined || Number.isNaN(step)) {
    return fail('must have a step *N (multiply) or +N (add)', { detail: `step ${JSON.stringify(stepText)}` });
  }
  const grows = multiply ? step > 1 && min.value > 0 : step > 0;
  if (!grows && min.value < max.value) {
    return fail('must have a step that grows toward max: *N with N > 1 from a min above 0, or +N with N > 0', {
      detail: 'which never ends',
    });
  }

  const next = (v: number) => (multiply ? Math.ceil(v * step) : v + step);
  const points =
    min.value === max.value
      ? 1
      : multiply
        ? countPoints(min.value, max.value, next)
        : Math.floor((max.value - min.value) / step) + 1;
  if (points > MAX_SWEEP_POINTS) {
    const count = points >= COUNT_LIMIT ? `more than ${COUNT_LIMIT}` : String(points);
    return fail(`must have at most ${MAX_SWEEP_POINTS} points`, {
      detail: `which would produce ${count}`,
      fix: multiply ? 'narrow the range or use a larger factor' : 'narrow the range, use a larger step or a *N step',
    });
  }
  const values: number[] = [];
  for (let v = min.value; v <= max.value && values.length < points; v = next(v)) values.push(v);
  return ok({ param, values });
}

/** How many points min..max by `next` has (stops counting at COUNT_LIMIT). `next` must grow. */
function countPoints(min: number, max: number, next: (v: number) => number): number {
  let n = 0;
  for (let v = min; v <= max && n < COUNT_LIMIT; v = next(v)) n++;
  return n;
}
