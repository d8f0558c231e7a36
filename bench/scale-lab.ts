/**
 * bench:scale's lab side (bench/scale.ts): the lab's own code timed, warm, in loops (the copy,
 * checksum, mix, fast_mix, the kernel's softirq, tasklet and tick code on one thread, NAPI and
 * send through the real Nic), and one machine run on worker threads for what only a running
 * machine has (queue_work_on's hand-off, the hard IRQ, the switches) and for what each operation
 * costs as a run meets it (its stage's p50 in that run: cold where it runs rarely).
 */
import type { Tasklet } from '../src/api/types.js';
import { nowNs } from '../src/clock.js';
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import { Softirq } from '../src/hw/layout.js';
import { MachineMemory } from '../src/machine/memory.js';
import { Runtime } from '../src/machine/runtime.js';
import { WasmCsum } from '../src/net/csum-wasm.js';
import { copyWords, csumWords } from '../src/net/packet.js';
import {
  FAST_POOL_WORDS,
  FastPool,
  fastMix64,
  fastPoolBase,
  fastPoolRegionWords,
  initFastPool,
} from '../src/random/index.js';
import { INPUT_POOL_WORDS, InputPool } from '../src/random/inputpool.js';
import { machineOptions } from './lib.js';
import { perPacket } from './net.js';
import { copyLoopBefore, csumLoopBefore, MixBefore } from './scale-before.js';

// ---- timing helpers ------------------------------------------------------------------------

/** Best of `reps` timings of `fn` (each `calls` calls), ns per call: on a loaded host the least
 *  preempted repetition, the same statistic bench/c/scale.c reports for its CPU-bound figures. */
function best(reps: number, calls: number, fn: (i: number) => void): number {
  let b = Number.POSITIVE_INFINITY;
  for (let r = 0; r < reps; r++) {
    const t = nowNs();
    for (let i = 0; i < calls; i++) fn(i);
    const ns = (nowNs() - t) / calls;
    if (ns < b) b = ns;
  }
  return b;
}

// ---- the lab, one thread ---------------------------------------------------------------------

const PKT_WORDS = 16384; // a 64 KiB payload (IPoIB CM's MTU is 65520 B)

export function labCopyCsum(reps: number): {
  copy: number;
  copyBefore: number;
  csum: number;
  csumJs: number;
  csumBefore: number;
} {
  const i32 = new Int32Array(new SharedArrayBuffer(4 * 3 * PKT_WORDS));
  for (let k = 0; k < PKT_WORDS; k++) i32[k] = Math.imul(k, 0x9e3779b1);
  const dst = 2 * PKT_WORDS;
  const bytes = PKT_WORDS * 4;
  let sink = 0;
  const calls = 200;
  const copy = best(reps, calls, (i) => {
    i32[i & 1023] = i;
    copyWords(i32, dst, 0, PKT_WORDS);
  });
  const copyBefore = best(reps, calls, (i) => {
    i32[i & 1023] = i;
    sink ^= copyLoopBefore(i32, dst, 0, PKT_WORDS, 0);
  });
  const csum = best(reps, calls, (i) => {
    i32[i & 1023] = i;
    sink += csumWords(i32, 0, PKT_WORDS, 0);
  });
  const wasm = new WasmCsum();
  const csumWasm = best(reps, calls, (i) => {
    i32[i & 1023] = i;
    sink += wasm.words(i32, 0, PKT_WORDS, PKT_WORDS);
  });
  const csumBefore = best(reps, calls, (i) => {
    i32[i & 1023] = i;
    sink ^= csumLoopBefore(i32, 0, PKT_WORDS);
  });
  if (sink === 0.5) console.log(sink);
  return {
    copy: copy / bytes,
    copyBefore: copyBefore / bytes,
    csum: csumWasm / bytes,
    csumJs: csum / bytes,
    csumBefore: csumBefore / bytes,
  };
}

/**
 * The median of 200 timings of `f`, each once after the thread slept 3 ms in Atomics.wait (a
 * timeout on a private word, as a parked kworker sleeps), timed by two clock reads: what `f`
 * costs met cold, its floor included (`afterSleep(() => {})`: the two reads alone).
 */
function afterSleep(f: (k: number) => void): number {
  const word = new Int32Array(new SharedArrayBuffer(4));
  const t: number[] = [];
  for (let k = 0; k < 200; k++) {
    Atomics.wait(word, 0, 0, 3);
    const a = nowNs();
    f(k);
    t.push(nowNs() - a);
  }
  t.sort((x, y) => x - y);
  return t[100];
}

export function labMix(reps: number): {
  mix: number;
  mixBefore: number;
  fastMix: number;
  mixCold: number;
  clockCold: number;
  /** Measure the two cold rows again (bench:scale interleaves them with C's). */
  cold: () => { mixCold: number; clockCold: number };
} {
  const i32 = new Int32Array(
    new SharedArrayBuffer(4 * (3 * INPUT_POOL_WORDS + fastPoolRegionWords(1) + FAST_POOL_WORDS)),
  );
  InputPool.init(i32, 0);
  InputPool.init(i32, INPUT_POOL_WORDS);
  const pool = new InputPool(i32, 0);
  const before = new MixBefore(i32, INPUT_POOL_WORDS);
  const bytes = new Uint8Array(16); // sizeof(unsigned long[2]): the 64-bit mix_interrupt_randomness
  const calls = 20_000;
  const mix = best(reps, calls, (i) => {
    bytes[0] = i;
    pool.mix(bytes);
  });
  const mixBefore = best(reps, calls, (i) => {
    bytes[0] = i;
    before.mix(bytes);
  });
  const region = 2 * INPUT_POOL_WORDS;
  initFastPool(i32, fastPoolBase(region, 0), '64', 0);
  const fp = new FastPool(i32, fastPoolBase(region, 0), '64');
  const P = fastPoolBase(region, 0);
  const t = 1e12;
  const fastMix = best(reps, 100_000, (i) => fastMix64(i32, P, (t / 4294967296) | 0, t + i * 997, 0xc1000000, i));
  fp.randomOnlineCpu();
  const cold = () => ({
    mixCold: afterSleep((k) => {
      bytes[0] = k;
      pool.mix(bytes);
    }),
    clockCold: afterSleep(() => {}),
  });
  return { mix, mixBefore, fastMix, ...cold(), cold };
}

/** softirq pass, tasklet schedule + run, timer tick: the kernel's code on a Runtime entered as CPU 1. */
export function labKernel(reps: number): { softirq: number; tasklet: number; tick: number } {
  const opts = machineOptions({ strategies: [], tracing: false });
  const mem = MachineMemory.build(opts);
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, 1, nowNs);
  rt.enterCpu(1, 1);
  let runs = 0;
  const id = rt.objects.create(
    'tasklet',
    'bench:scale',
    () => {
      runs++;
    },
    0,
  );
  const t: Tasklet = { kind: 'tasklet', id, name: 'bench:scale' } as Tasklet;
  const calls = 20_000;
  // raise_softirq from task context runs __do_softirq at once (local_bh_enable): one pass over
  // TASKLET_SOFTIRQ with an empty list.
  const softirq = best(reps, calls, () => rt.softirqs.raise(Softirq.Tasklet));
  const tasklet = best(reps, calls, () => rt.tasklets.schedule(t, false));
  rt.ctx.hardirq++;
  const tick = best(reps, calls, () => rt.timers.tick(1));
  rt.ctx.hardirq--;
  rt.softirqs.doSoftirq(false); // whatever the ticks raised
  if (runs < calls) throw new Error(`bench:scale: the tasklet ran ${runs} times for ${calls * reps} schedules`);
  return { softirq, tasklet, tick };
}

/** NAPI and send per packet through the real Nic (bench/net.ts), the least preempted message's. */
export function labNet(messages: number): { cmNapi: number; cmSend: number; ixNapi: number; ixSend: number } {
  perPacket('ipoib-cm', 2); // warm the JIT
  perPacket('ixgbe', 2);
  // IPoIB CM's 1 MiB message is 17 packets: more of them, for one that ran unpreempted.
  const cm = perPacket('ipoib-cm', 5 * messages).best;
  const ix = perPacket('ixgbe', messages).best;
  return { cmNapi: cm.napi, cmSend: cm.send, ixNapi: ix.napi, ixSend: ix.send };
}

/** A machine run (worker threads, `workqueue`): queue_work_on's hand-off, the hard IRQ, the
 *  calibration's switches; and the mix and the switch as the run paid them (their stages' p50). */
export async function labMachine(quick: boolean): Promise<{
  queueWork?: number;
  hardirq?: number;
  sameSwitch?: number;
  /** The same switch with the run's --switch-cost floor charged (absent: no floor). */
  sameSwitchCharged?: number;
  crossSwitch?: number;
  /** As the run paid them: the mix (the `work` stage: the kworker's mix_interrupt_randomness) and a switch (`ctx_switch`), p50. */
  mixRun?: number;
  switchRun?: number;
}> {
  const config = resolveConfig({
    flags: { strategies: ['workqueue'], trials: 1, trialMs: quick ? 300 : 1000, warmupMs: 200, outDir: null },
    cwd: process.cwd(),
  });
  const r = await runExperiment(config, {});
  const s = r.points[0]?.strategies[0]?.merged;
  const cal = r.meta.calibration;
  return {
    queueWork: s?.handoff_call?.summary.p50,
    hardirq: s?.hardirq?.summary.p50,
    sameSwitch: cal?.sameThreadSwitchNs,
    sameSwitchCharged: cal?.sameThreadSwitchChargedNs,
    crossSwitch: cal?.handoffP50Ns,
    mixRun: s?.work?.summary.p50,
    switchRun: s?.ctx_switch?.summary.p50,
  };
}
