/**
 * Where tcp_lat's pairs run and interrupt when the machine places them: the CPUs qperf's
 * processes start on under `--app-cpus` (fork placement), and each connection's two links with
 * the NIC vectors `--nic-irq-cpus` gives them (src/net/vectors.ts).
 * Context: main thread (the plan) and every machine thread (attach); pure.
 */
import type { LinkSpec } from '../net/links.js';
import type { NicOptions } from '../net/profiles.js';
import { flowVectors } from '../net/vectors.js';
import type { AppTaskSpec } from './workload.js';

/** What placement reads of a tcp_lat workload. */
interface PairPlacement {
  nic: NicOptions;
  clientCpu: number;
  serverCpu: number;
  appCpus?: readonly number[];
  nicIrqCpus?: readonly number[];
  /** The boot's RSS key (src/net/vectors.ts). */
  rssKey?: number;
}

/**
 * Where pair `i`'s processes start under `--app-cpus`: qperf's processes forked one after the
 * other (client i, then server i), each placed on the least loaded allowed CPU
 * (select_task_rq_fair's SD_BALANCE_FORK path, find_idlest_cpu), ties to the next CPU in the list:
 * client i on allowed[2i mod k], server i on allowed[(2i + 1) mod k]. One allowed CPU: both pinned
 * there.
 */
export function forkCpus(allowed: readonly number[], i: number): { client: number; server: number } {
  const k = allowed.length;
  return { client: allowed[(2 * i) % k], server: allowed[(2 * i + 1) % k] };
}

/** The CPUs pair `i` starts on: forked onto `--app-cpus`, else `--client-cpu`/`--server-cpu` + i. */
export function pairCpus(w: PairPlacement, cpus: number, i: number): { client: number; server: number } {
  if (w.appCpus) return forkCpus(w.appCpus, i);
  return { client: (w.clientCpu + i) % cpus, server: (w.serverCpu + i) % cpus };
}

/**
 * Pair `i`'s client and server tasks: where they start, the CPUs they may be placed on
 * (`--app-cpus` of more than one CPU: at each wakeup, src/kernel/sched/select.ts), and where the
 * flow each receives interrupts (`rxCpu`, its link's toCpu: read by --explain).
 */
export function pairTasks(w: PairPlacement, cpus: number, i: number): [AppTaskSpec, AppTaskSpec] {
  const p = pairCpus(w, cpus, i);
  const allowed = w.appCpus && w.appCpus.length > 1 ? { allowed: [...w.appCpus] } : {};
  const [toServer, toClient] = pairLinks(w, i, { id: -1, cpu: p.client }, { id: -1, cpu: p.server });
  return [
    { kind: 'tcp_client', cpu: p.client, peerCpu: p.server, instance: i, rxCpu: toClient.toCpu, ...allowed },
    { kind: 'tcp_server', cpu: p.server, peerCpu: p.client, instance: i, rxCpu: toServer.toCpu, ...allowed },
  ];
}

/**
 * Pair `i`'s two links (direction 0: client → server, 1: back), each received on its flow's
 * receive vector; its ACKs are packets of the reverse flow and take that flow's vectors.
 */
export function pairLinks(
  w: Pick<PairPlacement, 'nic' | 'nicIrqCpus' | 'rssKey'>,
  i: number,
  client: { id: number; cpu: number },
  server: { id: number; cpu: number },
): [LinkSpec, LinkSpec] {
  const v0 = flowVectors(w.nic.profile, w.nicIrqCpus, i, 0, server.cpu, w.rssKey);
  const v1 = flowVectors(w.nic.profile, w.nicIrqCpus, i, 1, client.cpu, w.rssKey);
  return [
    {
      instance: i,
      dir: 0,
      fromCpu: client.cpu,
      toCpu: v0.rxCpu,
      receiver: server.id,
      ackRxCpu: v1.rxCpu,
      ackTxCpu: v1.txCpu,
    },
    {
      instance: i,
      dir: 1,
      fromCpu: server.cpu,
      toCpu: v1.rxCpu,
      receiver: client.id,
      ackRxCpu: v0.rxCpu,
      ackTxCpu: v0.txCpu,
    },
  ];
}
