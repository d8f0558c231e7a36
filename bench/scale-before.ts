/**
 * The code bench/scale.ts's "before" column runs: the copy, checksum and mix exactly as the lab
 * ran them before issue 25 (commit 1f9d960), kept so that one run measures before and after side
 * by side on the same loaded host. Not used by the lab.
 */
import { blake2s } from '@noble/hashes/blake2.js';
import { INPUT_POOL_WORDS, InputPoolWord as W } from '../src/random/inputpool.js';
import { ShmLock } from '../src/shm/lock.js';

/** tcp_lat's recv copy before: word by word into the user buffer, summing for the reader's check. */
export function copyLoopBefore(i32: Int32Array, dst: number, src: number, n: number, sum: number): number {
  let s = sum;
  for (let k = 0; k < n; k++) {
    const v = i32[src + k];
    i32[dst + k] = v;
    s = (s + v) | 0;
  }
  return s;
}

/** NET_RX's software checksum before: a plain 32-bit word sum, in Nic.receive. */
export function csumLoopBefore(i32: Int32Array, p: number, n: number): number {
  let sum = 0;
  for (let k = 0; k < n; k++) sum = (sum + i32[p + k]) | 0;
  return sum;
}

interface Hasher {
  v0: number;
  v1: number;
  v2: number;
  v3: number;
  v4: number;
  v5: number;
  v6: number;
  v7: number;
  buffer32: Uint32Array;
  pos: number;
  length: number;
  update(d: Uint8Array): unknown;
}

/** mix_pool_bytes before: @noble/hashes' BLAKE2s with the shared state loaded and stored around it. */
export class MixBefore {
  private readonly lock: ShmLock;
  private readonly h = blake2s.create() as unknown as Hasher;
  constructor(
    private readonly i32: Int32Array,
    private readonly b: number,
  ) {
    this.lock = new ShmLock(i32, b + W.LOCK);
  }
  static words = INPUT_POOL_WORDS;
  mix(bytes: Uint8Array): void {
    const i32 = this.i32;
    const b = this.b;
    const h = this.h;
    this.lock.lock();
    try {
      const H = b + W.H;
      h.v0 = i32[H];
      h.v1 = i32[H + 1];
      h.v2 = i32[H + 2];
      h.v3 = i32[H + 3];
      h.v4 = i32[H + 4];
      h.v5 = i32[H + 5];
      h.v6 = i32[H + 6];
      h.v7 = i32[H + 7];
      const buf32 = h.buffer32;
      for (let i = 0; i < 16; i++) buf32[i] = i32[b + W.BUF + i];
      h.pos = i32[b + W.POS];
      h.length = (i32[b + W.LEN_HI] >>> 0) * 4294967296 + (i32[b + W.LEN_LO] >>> 0);
      h.update(bytes);
      i32[H] = h.v0;
      i32[H + 1] = h.v1;
      i32[H + 2] = h.v2;
      i32[H + 3] = h.v3;
      i32[H + 4] = h.v4;
      i32[H + 5] = h.v5;
      i32[H + 6] = h.v6;
      i32[H + 7] = h.v7;
      for (let i = 0; i < 16; i++) i32[b + W.BUF + i] = buf32[i];
      i32[b + W.POS] = h.pos;
      i32[b + W.LEN_LO] = h.length >>> 0;
      i32[b + W.LEN_HI] = Math.floor(h.length / 4294967296);
      i32[b + W.MIXES]++;
    } finally {
      this.lock.unlock();
    }
  }
}
