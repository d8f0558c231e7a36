/**
 * The kernel's mechanisms, in one list: what the machine plans, initialises, builds and asks
 * of each (src/kernel/mechanism.ts). Order matters where mechanisms share a softirq vector:
 * each one's actions run in the order they are opened, and 6.9 runs tasklets before the BH
 * workqueues (tasklet_action, then workqueue_softirq_action). A new mechanism is its own
 * file, exporting `mechanism`, and a line here.
 */

import type { RegionDecl } from '../hw/layout.js';
import { fieldTable, type RecordFields } from '../hw/layout-fields.js';
import * as core from './core.js';
import * as irqWork from './irq_work.js';
import type { AnyMechanism, KernelMemory, KernelShape } from './mechanism.js';
import * as tasklet from './tasklet.js';
import * as timer from './timer.js';
import * as workqueue from './workqueue.js';

/** A mechanism, or a module that exports one as `mechanism` (its records' constants are the module's). */
type Entry = AnyMechanism | { readonly mechanism: AnyMechanism };

/** The registry: the kernel's base first (src/kernel/core.ts), then each mechanism's module. */
const ENTRIES: readonly Entry[] = [core.objects, core.sched, core.softirq, tasklet, timer, workqueue, irqWork];

const mechanismOf = (e: Entry): AnyMechanism => ('mechanism' in e ? e.mechanism : e);

/** Every kernel mechanism, in registry order. */
export const MECHANISMS: readonly AnyMechanism[] = ENTRIES.map(mechanismOf);

/** The shared regions every mechanism declares, by name (a name declared twice is a bug). */
export function kernelRegions(shape: KernelShape): Record<string, RegionDecl> {
  const out: Record<string, RegionDecl> = {};
  for (const m of MECHANISMS)
    for (const [name, decl] of Object.entries(m.regions?.(shape) ?? {})) {
      if (name in out) throw new Error(`kernel region "${name}" is declared twice (${m.name})`);
      out[name] = decl;
    }
  return out;
}

/** The field tables of every mechanism's records, generated from its module's constants. */
export function kernelRecords(): Record<string, RecordFields> {
  const out: Record<string, RecordFields> = {};
  for (const e of ENTRIES) {
    const m = mechanismOf(e);
    const words = m.words ?? (e as Readonly<Record<string, unknown>>);
    for (const [name, r] of Object.entries(m.records ?? {}))
      out[name] = fieldTable(words, r.prefix, r.size, r.wide, r.not, r.extra);
  }
  return out;
}

/** Initialise every mechanism's regions. Context: main thread, before any worker starts. */
export function initKernel(m: KernelMemory): void {
  for (const mech of MECHANISMS) mech.init?.(m);
}

/**
 * What of the kernel is still in flight: the first answer that is not ''. Mechanisms are asked
 * last to first, upstream first: a later mechanism's work may raise an earlier one's softirq
 * (an irq_work that raises NET_TX, a BH pool run from HI/TASKLET), never the reverse, so a job
 * that moves from one to the next while the drain reads is seen in one of them.
 */
export function kernelBusy(m: KernelMemory): string {
  for (let i = MECHANISMS.length - 1; i >= 0; i--) {
    const b = MECHANISMS[i].busy?.(m) ?? '';
    if (b) return b;
  }
  return '';
}
