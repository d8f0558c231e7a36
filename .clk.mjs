import { performance as perf } from 'node:perf_hooks';
const word = new Int32Array(new SharedArrayBuffer(4));
const hr = process.hrtime;
const big = process.hrtime.bigint;
const clocks = {
  perfNow: () => perf.now() * 1e6,
  hrtime: () => { const t = hr(); return t[0] * 1e9 + t[1]; },
  hrBig: () => Number(big()),
  dateNow: () => Date.now() * 1e6,
};
function med(read, sleepMs, n = 301) {
  const t = [];
  for (let k = 0; k < n; k++) {
    if (sleepMs > 0) Atomics.wait(word, 0, 0, sleepMs);
    const a = read(); const b = read();
    t.push(b - a);
  }
  t.sort((x, y) => x - y);
  return `${t[n >> 1].toFixed(0)}/${t[Math.floor(n * 0.9)].toFixed(0)}`;
}
// warm per-call cost
for (const [name, f] of Object.entries(clocks)) { for (let i = 0; i < 1e5; i++) f(); const a = process.hrtime.bigint(); for (let i = 0; i < 1e6; i++) f(); console.log(name, 'warm ns/call', (Number(process.hrtime.bigint() - a) / 1e6).toFixed(1)); }
for (const sleep of [0, 3, 10]) console.log(`sleep ${sleep}:`, Object.entries(clocks).filter(([n]) => n !== 'dateNow').map(([n, f]) => `${n} ${med(f, sleep)}`).join('  '));
