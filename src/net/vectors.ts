/**
 * Where the NIC's interrupt vectors fire (`--nic-irq-cpus`), per profile as the driver creates
 * its vectors; the CPUs are the vectors' smp_affinity, as an administrator (or irqbalance, or
 * the vendor's set_irq_affinity script) sets them.
 *
 * - IPoIB (ipoib-cm, ipoib-ud): one receive CQ and one send CQ per interface, each on its own
 *   completion vector (drivers/infiniband/ulp/ipoib/ipoib_verbs.c, ipoib_transport_dev_init:
 *   recv_cq `comp_vector = req_vec`, send_cq `comp_vector = (req_vec + 1)`; docs/research/net.md),
 *   shared by every flow of the interface. Here the receive vector fires on the first listed CPU
 *   and the send vector on the second (on the first too when only one is listed).
 * - ixgbe: one TxRx queue pair and MSI-X vector per queue (drivers/net/ethernet/intel/ixgbe/
 *   ixgbe_lib.c, ixgbe_alloc_q_vectors / ixgbe_alloc_q_vector), here one per listed CPU; a flow's
 *   receive queue is chosen by RSS: the Toeplitz hash of its 4-tuple indexes the 128-entry
 *   redirection table, filled round-robin over the queues (ixgbe_main.c, ixgbe_setup_reta:
 *   `reta[i] = j; j = (j + 1) % rss_i`). The driver's hash key is random at every boot
 *   (ixgbe_init_rss_key → netdev_rss_key_fill: net_get_random_once, one key per boot for every
 *   device), so the hash is a model: an integer hash of the flow's (instance, direction) mixed
 *   with the boot's key (`rssKey`: each machine boot of a run draws one from the run's seed,
 *   src/harness/run.ts; 0 where none is given). Its send completions are cleaned in the same TxRx
 *   vector: the flow's transmit queue is taken to be its receive queue (XPS and Flow Director's
 *   ATR, which steer the two together, are not modelled).
 *
 * Without `--nic-irq-cpus` each flow interrupts on its receiver's CPU and each send completes on
 * the sender's CPU, as before (a NIC per CPU).
 * Context: main thread and every machine thread, when the workload attaches; pure.
 */
import type { NicProfileName } from './profiles.js';

/** ixgbe's RSS redirection table: 128 entries (IXGBE_MAX_RETA_ENTRIES for 82599). */
export const RETA_ENTRIES = 128;

/** A flow's vectors: the CPU its packets interrupt, and the CPU its sender's completions do (-1: the sender's own). */
export interface FlowVectors {
  rxCpu: number;
  txCpu: number;
}

/** A 32-bit mix of a flow's identity under the boot's RSS key (standing for the Toeplitz hash with that key). */
export function flowHash(instance: number, dir: number, key = 0): number {
  let h = Math.imul(((instance << 1) | dir) ^ key, 0x9e3779b1) ^ 0x85ebca6b;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Boot `boot`'s RSS key, drawn from the run's seed (a 32-bit mix: the same seed gives the same
 * keys, so `--seed` replays the placement), standing for netdev_rss_key_fill's random key.
 */
export function bootRssKey(seed: number, boot: number): number {
  let h = Math.imul(seed ^ Math.imul(boot + 1, 0x9e3779b1), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The RSS queue of a flow over `queues` queues: reta[hash % 128], reta filled round-robin. */
export function rssQueue(instance: number, dir: number, queues: number, key = 0): number {
  return (flowHash(instance, dir, key) % RETA_ENTRIES) % queues;
}

/**
 * The vectors of flow (`instance`, `dir`) whose receiver runs on `receiverCpu`, given the
 * listed vector CPUs (undefined: no placement given).
 */
export function flowVectors(
  profile: NicProfileName,
  irqCpus: readonly number[] | undefined,
  instance: number,
  dir: number,
  receiverCpu: number,
  /** The boot's RSS key (ixgbe only). */
  rssKey = 0,
): FlowVectors {
  if (!irqCpus || irqCpus.length === 0) return { rxCpu: receiverCpu, txCpu: -1 };
  if (profile === 'ixgbe') {
    const q = irqCpus[rssQueue(instance, dir, irqCpus.length, rssKey)];
    return { rxCpu: q, txCpu: q };
  }
  return { rxCpu: irqCpus[0], txCpu: irqCpus[Math.min(1, irqCpus.length - 1)] };
}

/** `vectors on CPU 0 (rx) and 0 (send)`, `4 queue pairs on CPUs 0-3`: for the setup text. */
export function describeVectors(profile: NicProfileName, irqCpus: readonly number[] | undefined): string {
  if (!irqCpus || irqCpus.length === 0) return "vectors on each receiver's CPU";
  if (profile === 'ixgbe')
    return `${irqCpus.length} queue pair${irqCpus.length === 1 ? '' : 's'} on CPU${irqCpus.length === 1 ? '' : 's'} ${irqCpus.join(',')} (RSS)`;
  return `receive vector on CPU ${irqCpus[0]}, send vector on CPU ${irqCpus[Math.min(1, irqCpus.length - 1)]}`;
}
