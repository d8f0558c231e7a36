/**
 * `--irq-trace FILE` and its companions (`--irq-trace-map`, `--irq-trace-loop`,
 * `--irq-trace-scale`; in a config file `irq.trace`, `irq.traceMap`, `irq.traceLoop`,
 * `irq.traceScale`), resolved against the rest of the config. The file is only named here: it
 * is read once, just before the run (src/irq/replay.ts), and what is wrong inside it is an
 * IrqTraceError naming the line.
 *
 * Context: main thread, while resolving the config; pure apart from the path's resolution.
 */
import { resolve as resolvePath } from 'node:path';
import type { IrqTraceConfig } from '../irq/replay.js';
import { parseIrqTraceMap } from '../irq/trace-file.js';
import { badOption, conflict } from './errors.js';
import type { ParsedPartial } from './input.js';
import type { Origins, Path } from './origins.js';
import type { CommandRulesFor } from './rules.js';
import type { Sweep } from './sweep.js';

const TRACE: Path = ['irq', 'trace'];
/** The generator's settings, which a trace replaces. */
const GENERATOR_FIELDS = ['rate', 'pattern', 'burstSize', 'cpus'] as const;
const COMPANIONS = ['traceMap', 'traceLoop', 'traceScale'] as const;

/**
 * The trace to replay, or undefined for none. Throws a DeferlabError (exit 2) when a companion
 * is given without the trace, when the trace is given with a setting of the generator it
 * replaces (or a sweep of irq_rate), to a command that runs its own interrupts, or with a map
 * naming a CPU the machine lacks.
 */
export function resolveIrqTrace(
  origins: Origins<ParsedPartial>,
  irq: ParsedPartial['irq'],
  ctx: {
    cpus: number;
    cpusText: string;
    cwd: string;
    sweep: Sweep | null;
    rules?: CommandRulesFor;
  },
): IrqTraceConfig | undefined {
  const byFlag = (path: Path) => origins.layerOf(path)?.source.kind === 'flags';
  const file = irq?.trace ?? null;
  if (file === null) {
    const companion = COMPANIONS.find((f) => irq?.[f] !== undefined);
    if (companion === undefined) return undefined;
    const path: Path = ['irq', companion];
    throw conflict(
      `${origins.name(path)} applies to a replayed trace, but ${origins.name(TRACE)} is not given`,
      `add ${origins.name(TRACE)} FILE, or drop it`,
      byFlag(path),
    );
  }
  const name = origins.name(TRACE);
  if (ctx.rules && !ctx.rules.rules.takesIrqTrace) {
    throw conflict(
      `${ctx.rules.command} takes no ${name} (it sets its own device interrupts)`,
      "drop it, or use 'deferlab run' to replay a trace",
      byFlag(TRACE),
    );
  }
  const generator = GENERATOR_FIELDS.find((f) => !origins.isDefault(['irq', f]));
  if (generator !== undefined) {
    const path: Path = ['irq', generator];
    throw conflict(
      `${name} replaces the interrupt generator, so ${origins.name(path)} would have no effect`,
      'give one of them',
      byFlag(path) || byFlag(TRACE),
    );
  }
  if (ctx.sweep?.param === 'irq_rate') {
    throw conflict(
      `${origins.name(['sweep'])} over irq_rate sets the generator's rate, which ${name} replaces`,
      'sweep msg_size or trigger instead, or drop the trace (--irq-trace-scale changes a trace’s rate)',
      byFlag(['sweep']) || byFlag(TRACE),
    );
  }
  const map = irq?.traceMap ?? null;
  if (map !== null) {
    const parsed = parseIrqTraceMap(map, ctx.cpus);
    const path: Path = ['irq', 'traceMap'];
    if (!parsed.ok)
      throw badOption(
        origins.name(path),
        parsed.problem,
        origins.got(path, map),
        `map onto a CPU below ${ctx.cpus} (${ctx.cpusText}), or raise the CPU count`,
      );
  }
  return {
    file,
    path: resolvePath(ctx.cwd, file),
    map,
    loop: irq?.traceLoop ?? false,
    scale: irq?.traceScale ?? 1,
  };
}
