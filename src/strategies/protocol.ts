/**
 * Messages between the main thread and the strategies' validation thread (workers/validate.ts,
 * src/strategies/validate.ts), by direction, as src/machine/protocol.ts declares the machine's.
 */
import type { StrategyRef } from './ref.js';

/** main → validation thread, as workerData: the strategies to load and construct, in order. */
export type ValidateStartup = readonly StrategyRef[];

/** validation thread → main. After `refused` or `threw` the thread ends: nothing follows. */
export type ValidateMessage =
  /** Strategy `index` starts loading: a timeout from now on names it. */
  | { type: 'start'; index: number }
  /** Every strategy loaded and constructed. */
  | { type: 'done' }
  /**
   * Strategy `index` is bad input (a StrategyLoadError or StrategyOptionError of the
   * catalogue): `message` is complete and names the file or built-in.
   */
  | { type: 'refused'; index: number; message: string }
  /** Loading or constructing strategy `index` threw anything else: main adds which strategy. */
  | { type: 'threw'; index: number; message: string };
