/**
 * The network path (issue #13): what a packet costs the emulated CPUs, and tcp_lat's one-way
 * latency for 4K..1M over each NIC profile, side by side in one run.
 *
 * Run: npm run bench:net   (npm run build && node dist/bench/net.js [--quick] [--tdf N|auto])
 *
 * 1. Per packet, on one thread (a machine's memory, no worker started, CPU 1 entered as its idle
 *    task): the sender's work (header, payload written, sealed and published), NAPI's (the
 *    receive path net_rx_action runs per packet: the software checksum where the profile has one,
 *    the cursor, the ACK, the send completions), and the reader's copy-out. The highest packet
 *    rate one emulated CPU sustains receiving is 1e9 / (NAPI + copy) ns.
 * 2. tcp_lat one-way, `inline`, no background interrupts, msg_size 4K..1M by ×2 over each
 *    profile (one short trial a point): what a message of each size costs end to end, wire model
 *    included, beside the message's wire time (the model's serialisation of its segments, one
 *    after another: what the one-way would be with a kernel that cost nothing). `--tdf` dilates
 *    the machine's clock (src/harness/tdf.ts); the per-packet table is host time either way.
 * Never asserts: figures for reading, with the host's load beside them.
 */
import { loadavg } from 'node:os';
import { nowNs } from '../src/clock.js';
import { tcpLatOptions } from '../src/config/defaults.js';
import { resolveConfig } from '../src/config/schema.js';
import { runExperiment } from '../src/harness/run.js';
import { TaskState } from '../src/hw/layout.js';
import { T_STATE } from '../src/kernel/sched/rq.js';
import { MachineMemory } from '../src/machine/memory.js';
import { Runtime } from '../src/machine/runtime.js';
import { dataRegion, L_POLLED, linkRegion, P_WORDS, PACKET_HEADER_WORDS } from '../src/net/layout.js';
import { payloadWords } from '../src/net/links.js';
import { copyOut, fillPayload, patternSum, sealPacket, writeHeader } from '../src/net/packet.js';
import {
  mss,
  NIC_PROFILES,
  type NicProfileName,
  nicOptions,
  segmentsPerMessage,
  TCP_IP_HEADER_BYTES,
  wireNs,
} from '../src/net/profiles.js';
import { SpscRing } from '../src/shm/ring.js';
import { workloadOf } from '../src/workloads/index.js';
import { recvBufRegion } from '../src/workloads/tcp-lat.js';
import { type BenchUsage, benchArgs, refuse } from './cli.js';
import { isMain, machineOptions, table } from './lib.js';

const MiB = 1 << 20;

/** ns per packet: send, NAPI, copy-out; over `messages` 1 MiB messages. */
export function perPacket(
  profile: NicProfileName,
  messages: number,
): {
  send: number;
  napi: number;
  copy: number;
  packets: number;
  /** The least per-packet cost of any one message (bench:scale: on a loaded host, the least preempted). */
  best: { send: number; napi: number; copy: number };
} {
  const nic = nicOptions(profile);
  const opts = machineOptions({
    irq: { rate: 0, pattern: 'constant', burstSize: 1, cpus: [] },
    workload: tcpLatOptions({ msgSize: MiB, nic }),
    strategies: [],
    fastPool: { trigger: 65_535, variant: '64' },
    tracing: false,
  });
  const mem = MachineMemory.build(opts);
  const rt = new Runtime(mem.sab, mem.R, mem.plan, opts, 1, nowNs);
  rt.enterCpu(1, 1);
  rt.workload = workloadOf(opts).attach(rt);
  const reader = mem.plan.tasks.find((t) => t.app?.kind === 'tcp_server')?.id ?? -1;
  Atomics.store(mem.i32, rt.sched.rqs.tw(reader, T_STATE), TaskState.Runnable); // busy: no wakeups
  const i32 = mem.i32;
  const ring = new SpscRing(i32, mem.R.workload[dataRegion(0, 0)]);
  const link = mem.R.workload[linkRegion(0, 0)];
  const nicModel = rt.workload.nic;
  if (!nicModel) throw new Error('tcp_lat without a NIC');
  const words = MiB / 4;
  const pw = payloadWords(nic);
  const userBase = mem.R.workload[recvBufRegion(0, 0)];
  const user = i32.subarray(userBase, userBase + words); // recv's buffer (copyOut needs the same memory)
  let send = 0;
  let napi = 0;
  let copy = 0;
  let packets = 0;
  let sink = 0;
  const best = { send: Number.POSITIVE_INFINITY, napi: Number.POSITIVE_INFINITY, copy: Number.POSITIVE_INFINITY };
  for (let m = 1; m <= messages; m++) {
    const p0 = packets;
    const s0 = send;
    const n0 = napi;
    const c0 = copy;
    let t0 = nowNs();
    for (let off = 0; off < words; off += pw) {
      const idx = ring.claim();
      const n = writeHeader(i32, idx, m, off, pw, words, MiB);
      sealPacket(i32, idx, fillPayload(i32, idx, 0, n, 0), 0); // arrived long ago
      ring.publish();
      packets++;
    }
    send += nowNs() - t0;
    t0 = nowNs();
    nicModel.recompute(1);
    rt.ctx.hardirq++;
    nicModel.takeIrq(1, nowNs());
    rt.ctx.hardirq--;
    rt.ctx.softirq++;
    while (Atomics.load(i32, link + L_POLLED) !== ring.produced()) nicModel.netRx(1);
    rt.ctx.softirq--;
    napi += nowNs() - t0;
    t0 = nowNs();
    let o = 0;
    let sum = 0;
    for (let idx = ring.peek(); idx >= 0; idx = ring.peek()) {
      const n = i32[idx + P_WORDS];
      sum = copyOut(i32, user, idx + PACKET_HEADER_WORDS, o, 0, n, m, sum); // tcp_lat's recv copy
      o += n;
      ring.release();
    }
    if (sum !== patternSum(m, words)) throw new Error(`bench:net: message ${m} arrived wrong`);
    copy += nowNs() - t0;
    sink ^= user[o - 1];
    // Drop the send completions and ACK records the poll left for CPU 0 / the next round.
    nicModel.recompute(1);
    const k = packets - p0;
    best.send = Math.min(best.send, (send - s0) / k);
    best.napi = Math.min(best.napi, (napi - n0) / k);
    best.copy = Math.min(best.copy, (copy - c0) / k);
  }
  if (sink === 0.5) console.log(sink);
  return { send: send / packets, napi: napi / packets, copy: copy / packets, packets: packets / messages, best };
}

/** A message's wire time (ns): its segments serialised back to back at the link's rate. */
export function messageWireNs(profile: NicProfileName, bytes: number): number {
  const o = nicOptions(profile);
  const segs = segmentsPerMessage(o, bytes);
  const full = mss(o);
  const last = bytes - (segs - 1) * full;
  return (segs - 1) * wireNs(o, full + TCP_IP_HEADER_BYTES) + wireNs(o, last + TCP_IP_HEADER_BYTES);
}

interface OneWay {
  points: Map<string, { mean: number; p50: number }>;
  tdf: string;
}

async function oneWay(profile: NicProfileName, quick: boolean, tdf: number | 'auto' | undefined): Promise<OneWay> {
  const config = resolveConfig({
    flags: {
      ...(tdf === undefined ? {} : { tdf }),
      strategies: ['inline'],
      trials: 1,
      trialMs: quick ? 200 : 500,
      warmupMs: 100,
      irq: { rate: 0 },
      workload: { nic: profile },
      sweep: quick ? 'msg_size:4K:1024K:*16' : 'msg_size:4K:1024K:*2',
      outDir: null,
    },
    cwd: process.cwd(),
  });
  const r = await runExperiment(config, {});
  const out = new Map<string, { mean: number; p50: number }>();
  for (const p of r.points) {
    const s = p.strategies[0]?.merged.one_way?.summary;
    out.set(String(p.params.msg_size), { mean: s?.mean ?? Number.NaN, p50: s?.p50 ?? Number.NaN });
  }
  const t = r.meta.tdf;
  return { points: out, tdf: t ? `TDF ${t.tdf} (${t.how})` : 'TDF 1 (no dilation)' };
}

/** `--tdf N|auto` from argv (absent: none given). One clear line and exit 2 on a bad value. */
function tdfArg(argv: string[]): number | 'auto' | undefined {
  const i = argv.indexOf('--tdf');
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === 'auto') return 'auto';
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n) || n < 1 || n > 16) {
    refuse(
      'bench:net',
      `--tdf must be auto or a number from 1 to 16, as deferlab run takes it (got ${v ?? 'nothing'})`,
    );
  }
  return n;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const quick = argv.includes('--quick');
  const tdf = tdfArg(argv);
  const l0 = loadavg()[0];
  console.log(`net bench: Node ${process.version}; host load average ${l0.toFixed(2)} (1 min) at start`);
  console.log('\n1. per packet on one thread (1 MiB messages, every packet already arrived)');
  const rows: string[][] = [];
  for (const p of NIC_PROFILES) perPacket(p, 2); // warm the JIT: the first messages compile the path
  for (const p of NIC_PROFILES) {
    const r = perPacket(p, quick ? 4 : 16);
    const recv = r.napi + r.copy;
    rows.push([
      p,
      String(Math.round(r.packets)),
      r.send.toFixed(0),
      r.napi.toFixed(0),
      r.copy.toFixed(0),
      (1e9 / recv / 1e3).toFixed(0),
      (((1e9 / recv) * (MiB / r.packets) * 8) / 1e9).toFixed(1),
    ]);
  }
  for (const line of table(
    ['NIC', 'packets/MiB', 'send ns/pkt', 'NAPI ns/pkt', 'copy-out ns/pkt', 'max rx kpkt/s/CPU', 'as Gb/s'],
    rows,
  ))
    console.log(line);
  console.log(
    '\n2. tcp_lat one-way, inline, no background interrupts, one trial a point (µs: mean / p50, and wire time)',
  );
  const results = new Map<NicProfileName, OneWay>();
  for (const p of NIC_PROFILES) results.set(p, await oneWay(p, quick, tdf));
  console.log(
    `   ${results.get(NIC_PROFILES[0])?.tdf}; wire: the message's segments serialised at the link's rate (the model)`,
  );
  const sizes = [...(results.get(NIC_PROFILES[0])?.points.keys() ?? [])];
  const cell = (x: { mean: number; p50: number } | undefined) =>
    x ? `${(x.mean / 1000).toFixed(1)} / ${(x.p50 / 1000).toFixed(1)}` : 'n/a';
  const wire = (p: NicProfileName, size: string) => (messageWireNs(p, Number(size)) / 1000).toFixed(1);
  for (const line of table(
    ['msg_size', ...NIC_PROFILES.flatMap((p) => [p, 'wire'])],
    sizes.map((s) => [s, ...NIC_PROFILES.flatMap((p) => [cell(results.get(p)?.points.get(s)), wire(p, s)])]),
  ))
    console.log(line);
  console.log(`host load average ${l0.toFixed(2)} → ${loadavg()[0].toFixed(2)} (1 min)`);
}

export const USAGE: BenchUsage = {
  script: 'bench:net',
  about:
    "The network path: what a packet costs the emulated CPUs (sender, NAPI, the reader's copy-out) per NIC profile, and tcp_lat's one-way latency for 4K..1M over each profile beside the wire time of the message. About 1.5 minutes (--quick: fewer sizes and shorter trials).",
  flags: [
    { flag: '--quick', help: 'sizes 4K, 64K, 1M and 200 ms trials' },
    { flag: '--tdf', value: 'N|auto', help: "the one-way sweep at this time dilation factor (deferlab run's --tdf)" },
  ],
};

if (isMain(import.meta.url)) await main(benchArgs(USAGE));
