import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import { readlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const tid = () => Number(readlinkSync('/proc/thread-self').split('/').pop());
if (isMainThread) {
  const pin = process.argv[2] === 'pin';
  const sab = new SharedArrayBuffer(64);
  const i32 = new Int32Array(sab); const f64 = new Float64Array(sab, 16, 4);
  const w = new Worker(new URL(import.meta.url), { workerData: { sab } });
  const wtid = await new Promise((r) => w.once('message', r));
  if (pin) { spawnSync('taskset', ['-p', '-c', '1', String(wtid)]); spawnSync('taskset', ['-p', '-c', '0', String(tid())]); }
  const lat = [];
  for (let k = 0; k < 500; k++) {
    const until = performance.now() + 2; while (performance.now() < until) {} // busy 2 ms? no: sleep
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    f64[0] = performance.now();
    Atomics.store(i32, 0, k + 1); Atomics.notify(i32, 0);
    while (Atomics.load(i32, 1) !== k + 1) Atomics.wait(i32, 1, k, 50);
    lat.push((f64[1] - f64[0]) * 1000);
  }
  Atomics.store(i32, 0, -1); Atomics.notify(i32, 0);
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.floor(p * (lat.length - 1))].toFixed(1);
  console.log(pin ? 'pinned  ' : 'unpinned', 'wake µs p50', q(0.5), 'p90', q(0.9), 'p99', q(0.99), 'max', q(1));
  await w.terminate();
} else {
  const i32 = new Int32Array(workerData.sab); const f64 = new Float64Array(workerData.sab, 16, 4);
  parentPort.postMessage(tid());
  for (let k = 0; ; k++) {
    Atomics.wait(i32, 0, k);
    const v = Atomics.load(i32, 0); if (v < 0) break;
    f64[1] = performance.now();
    Atomics.store(i32, 1, v); Atomics.notify(i32, 1);
  }
}
