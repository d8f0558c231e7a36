import { InputPool, INPUT_POOL_WORDS } from './dist/src/random/inputpool.js';
import { FastPool, initFastPool, fastPoolBase, fastPoolRegionWords } from './dist/src/random/fastpool.js';
import { Tracer, initHistograms } from './dist/src/hw/trace.js';
import { nowNs } from './dist/src/clock.js';
await initHistograms();
const region = INPUT_POOL_WORDS;
const i32 = new Int32Array(new SharedArrayBuffer(4 * (INPUT_POOL_WORDS + fastPoolRegionWords(1) + 64)));
InputPool.init(i32, 0);
const pool = new InputPool(i32, 0);
initFastPool(i32, fastPoolBase(region, 0), '64', 0);
const fp = new FastPool(i32, fastPoolBase(region, 0), '64');
const tr = new Tracer(true); tr.on = true;
const word = new Int32Array(new SharedArrayBuffer(4));
const bytes = new Uint8Array(16);
function med(f, sleepMs, n = 301) {
  const t = [];
  for (let k = 0; k < n; k++) {
    if (sleepMs > 0) Atomics.wait(word, 0, 0, sleepMs);
    const a = nowNs();
    f(k);
    t.push(nowNs() - a);
  }
  t.sort((x, y) => x - y);
  return [t[n >> 1], t[Math.floor(n * 0.9)]];
}
const cases = {
  empty: () => {},
  clock: () => nowNs(),
  histRecord: (k) => tr.record(3, 1000 + k),
  poolMix: () => pool.mix(bytes),
  fastPoolMix: (k) => { fp.randomOnlineCpu(); fp.mixInterruptRandomness(0, k, pool, 1e9 + k); },
  kworkerPath: (k) => { const t0 = nowNs(); tr.record(3, 1000 + k); fp.randomOnlineCpu(); fp.mixInterruptRandomness(0, k, pool, t0); nowNs(); },
};
for (const [name, f] of Object.entries(cases)) for (let i = 0; i < 5000; i++) f(i);
for (const sleep of [0, 1, 3, 10]) {
  console.log(`sleep ${String(sleep).padStart(2)} ms: ` + Object.entries(cases).map(([name, f]) => { const [m, p] = med(f, sleep); return `${name} ${m.toFixed(0)}/${p.toFixed(0)}`; }).join('  '));
}
