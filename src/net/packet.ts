/**
 * A packet in a link's ring (./layout.ts): its header and its payload, written by the sender.
 * The payload of message `seq` is a counting pattern (word k = seq × 0x9e3779b1 + k) generated
 * as it is written, standing for copy_from_user; the reader checks every word against it through
 * the message's sum (src/workloads/tcp-lat.ts).
 */
import { P_BYTES, P_CSUM, P_DUE_LO, P_LAST, P_OFFSET, P_SEQ, P_WORDS, PACKET_HEADER_WORDS, putTime } from './layout.js';

/** The payload pattern's per-message stride (a golden-ratio constant). */
const PATTERN = 0x9e3779b1 | 0;

/** The 32-bit sum of message `seq`'s `words` payload words. */
export function patternSum(seq: number, words: number): number {
  const tri = ((words * (words - 1)) / 2) % 4294967296;
  return (Math.imul(words, Math.imul(seq, PATTERN)) + tri) | 0;
}

/**
 * The header of the packet at `idx` carrying words `offset`.. of message `seq` (`words` words
 * of a message of `msgWords` words and `msgBytes` bytes). Returns its payload words.
 */
export function writeHeader(
  i32: Int32Array,
  idx: number,
  seq: number,
  offset: number,
  payloadWords: number,
  msgWords: number,
  msgBytes: number,
): number {
  const n = Math.min(payloadWords, msgWords - offset);
  const last = offset + n === msgWords;
  i32[idx + P_SEQ] = seq;
  i32[idx + P_OFFSET] = offset;
  i32[idx + P_WORDS] = n;
  i32[idx + P_BYTES] = last ? msgBytes - offset * 4 : n * 4;
  i32[idx + P_LAST] = last ? 1 : 0;
  return n;
}

/**
 * Write payload words `from`..`to` of the packet at `idx` (whose header says which message and
 * offset) and return `sum` plus their sum.
 */
export function fillPayload(i32: Int32Array, idx: number, from: number, to: number, sum: number): number {
  const base = Math.imul(i32[idx + P_SEQ], PATTERN) + i32[idx + P_OFFSET];
  const p = idx + PACKET_HEADER_WORDS;
  let s = sum;
  for (let k = from; k < to; k++) {
    const v = (base + k) | 0;
    i32[p + k] = v;
    s = (s + v) | 0;
  }
  return s;
}

/** Finish the packet: its checksum (0 where the NIC computes it) and arrival time. */
export function sealPacket(i32: Int32Array, idx: number, csum: number, due: number): void {
  i32[idx + P_CSUM] = csum;
  putTime(i32, idx + P_DUE_LO, due);
}
