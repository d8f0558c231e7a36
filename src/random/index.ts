/**
 * random.c's interrupt-entropy path: the per-CPU fast pool (`fast_mix`, `add_interrupt_randomness`,
 * `mix_interrupt_randomness`), the shared BLAKE2s input pool, and the SipHash permutations they
 * are built on. See each module's header for its shared-memory legend and its kernel differences.
 */
export {
  addInterruptRandomness,
  DEFAULT_MIX_TRIGGER,
  FAST_POOL_WORDS,
  FastPool,
  type FastPoolVariant,
  FastPoolWord,
  fastMix32,
  fastMix64,
  fastPoolBase,
  fastPoolRegionWords,
  initFastPool,
  MIX_INFLIGHT,
  mixCreditBits,
  mixInterruptRandomness,
  swab32,
  timeAfter,
  timeIsBeforeJiffies,
} from './fastpool.js';
export {
  checkBlake2sInternals,
  INPUT_POOL_WORDS,
  InputPool,
  InputPoolWord,
  POOL_BITS,
  POOL_EARLY_BITS,
  POOL_READY_BITS,
} from './inputpool.js';
export {
  HSIPHASH_CONST,
  halfsiphash24,
  hsipPermute32,
  SIPHASH_CONST,
  SipState32,
  SipState64,
  siphash24,
  sipPermute64,
} from './siphash.js';
