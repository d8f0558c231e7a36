/**
 * mulberry32: a small, fast, seedable 32-bit PRNG (uniform in [0, 1)), for simulations with a
 * known answer (calibration.ts) and the tests' synthetic results (test/fixtures/synthetic.ts).
 * Not for anything measured.
 */
/**
 * Standard normal draws from `rnd` by Box-Muller, which makes them in pairs: the second of each
 * pair is kept for the next call. Context: a simulation's own thread; never allocates per call.
 */
export function normalOf(rnd: () => number): () => number {
  let spare = Number.NaN;
  return () => {
    if (!Number.isNaN(spare)) {
      const z = spare;
      spare = Number.NaN;
      return z;
    }
    const r = Math.sqrt(-2 * Math.log(1 - rnd()));
    const a = 2 * Math.PI * rnd();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
