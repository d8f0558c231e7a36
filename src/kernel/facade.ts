/**
 * What a strategy sees of the kernel: the `Kernel` facade at run time and the `StrategySetup`
 * it gets in setup() (src/api/types.ts, docs/strategies.md). The built-in strategies use
 * nothing else: there is no back door.
 *
 * The calls common to the whole kernel (where am I, what time is it, raise a softirq) are here;
 * each mechanism adds its own (src/kernel/mechanism.ts, `facade` and `setup`), so the facade
 * is assembled from the registry. Every call checks its handles (objects.ts) before it reaches
 * a subsystem, so a strategy that passes the wrong thing gets a message naming the call, not an
 * internal error.
 */
import type { CpuView, Deferred, Kernel, StrategySetup } from '../api/types.js';
import { NR_SOFTIRQS } from '../hw/layout.js';
import type { ContextName } from './context.js';
import type { AnyMechanism, KernelBase, Mechanism } from './mechanism.js';
import { KernelBug } from './objects.js';

/** A mechanism and the part one thread built of it. */
export type BuiltMechanism = readonly [mechanism: AnyMechanism, part: unknown];

/** What one thread built of the kernel's mechanisms: each one's part, and their hooks in registry order. */
export interface BuiltKernel {
  built: BuiltMechanism[];
  /** Run at every tick on the ticking CPU (mechanism `hooks().tick`). */
  tickHooks: ((c: number) => void)[];
  /** Run at every IRQ_WORK IPI on its CPU (mechanism `hooks().ipi`). */
  ipiHooks: ((c: number) => void)[];
}

/** Build every mechanism of `mechanisms` that builds a part, in order. Context: a Runtime's constructor. */
export function buildMechanisms(k: KernelBase, mechanisms: readonly AnyMechanism[]): BuiltKernel {
  const out: BuiltKernel = { built: [], tickHooks: [], ipiHooks: [] };
  for (const m of mechanisms) {
    if (!m.build) continue;
    const part = m.build(k);
    out.built.push([m, part]);
    const h = m.hooks?.(part);
    if (h?.tick) out.tickHooks.push(h.tick);
    if (h?.ipi) out.ipiHooks.push(h.ipi);
  }
  return out;
}

/** The part of mechanism `m` in `built`; a KernelBug when it was not built. */
export function partOf<P>(built: readonly BuiltMechanism[], m: Mechanism<P>): P {
  for (const [b, part] of built) if (b === m) return part as P;
  throw new KernelBug(`kernel mechanism ${m.name} is not built`);
}

/**
 * The read-only kernel facade strategies see: the calls common to the kernel, then each built
 * mechanism's. Frozen: a strategy cannot replace a call. `irqBacklog(cpu)`: interrupt records
 * waiting in CPU `cpu`'s IRQ ring (racy).
 */
export function kernelFacade(
  k: KernelBase,
  irqBacklog: (cpu: number) => number,
  built: readonly BuiltMechanism[],
): Kernel {
  const { ctx, sched, softirqs } = k;
  const core = {
    get cpu(): number {
      return ctx.cpu;
    },
    get nrCpus(): number {
      return ctx.nrCpus;
    },
    get context(): ContextName {
      return ctx.contextName();
    },
    get jiffies(): number {
      return ctx.jiffies();
    },
    get hz(): number {
      return ctx.hz;
    },
    nowNs(): number {
      return ctx.now();
    },
    cpuView(cpu: number): CpuView {
      if (!Number.isInteger(cpu) || cpu < 0 || cpu >= ctx.nrCpus) throw new Error(`cpuView: CPU ${cpu} does not exist`);
      return {
        idle: sched.isIdle(cpu),
        nrRunning: sched.rqs.nrRunning(cpu),
        softirqPending: softirqs.pending(cpu),
        irqBacklog: irqBacklog(cpu),
      };
    },
    raiseSoftirq(nr: number): void {
      if (!Number.isInteger(nr) || nr < 0 || nr >= NR_SOFTIRQS)
        throw new Error(`raiseSoftirq: vector must be 0..${NR_SOFTIRQS - 1} (got ${nr})`);
      softirqs.raise(nr);
    },
    mightSleep(): void {
      const name = ctx.contextName();
      if (name !== 'task') {
        throw new KernelBug(`BUG: sleeping function called from invalid context (${name}) on CPU ${ctx.cpu}`);
      }
    },
  };
  const facade = Object.defineProperties({}, Object.getOwnPropertyDescriptors(core));
  for (const [m, part] of built) Object.assign(facade, m.facade?.(part, k));
  return Object.freeze(facade) as Kernel;
}

/** The setup context strategy `index` receives; `deferred(cpu)` is the driver's per-CPU job. */
export function strategySetup(
  k: KernelBase,
  built: readonly BuiltMechanism[],
  index: number,
  options: Record<string, string | number | boolean>,
  deferred: (cpu: number) => Deferred,
): StrategySetup {
  const { ctx, objects } = k;
  const s = {
    nrCpus: ctx.nrCpus,
    hz: ctx.hz,
    options: Object.freeze({ ...options }),
    deferred: (cpu: number) => {
      objects.checkCpu(cpu, 'deferred');
      return deferred(cpu);
    },
  };
  for (const [m, part] of built) Object.assign(s, m.setup?.(part, k, index));
  return s as StrategySetup;
}
