/**
 * Start-up of a CPU or kthread thread: attach to the shared memory, load the strategies, build
 * the hosted tasks, report ready, run the loop, and report any fault with where it happened.
 */

import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { clockCalibrationErrorNs, initClock } from '../clock.js';
import { StrategyLoadError, StrategyOptionError } from '../errors.js';
import { C_FAULT } from '../hw/layout.js';
import { initHistograms } from '../hw/trace.js';
import { KsoftirqdTask } from '../kernel/softirq.js';
import { WorkerTask } from '../kernel/worker.js';
import { attachShm } from '../shm/layout.js';
import { loadStrategies } from '../strategies/load.js';
import { workloadOf } from '../workloads/index.js';
import { readTid } from './host-threads.js';
import { IdleTask } from './idle.js';
import { DEFAULT_IDLE } from './options.js';
import type { StartupData, WorkerMessage } from './protocol.js';
import { Runtime } from './runtime.js';
import { HogTask, type HostedTask, runThreadLoop } from './tasks.js';

function post(m: WorkerMessage): void {
  parentPort?.postMessage(m);
}

export async function startTaskThread(data: StartupData): Promise<void> {
  const { sab, regions, plan, opts, threadId } = data;
  const thread = plan.threads[threadId];
  let rt: Runtime | undefined;
  let phase: 'setup' | 'run' = 'setup';
  try {
    initClock(data.epochNs, opts.tdf ?? 1);
    attachShm(sab, regions.map);
    const wasm = await initHistograms(data.histogramWasm);
    rt = new Runtime(sab, regions, plan, opts, threadId);
    const r = rt;
    const strategies = await loadStrategies(opts.strategies, data.compiled);
    strategies.forEach((s, i) => {
      r.strategies.push(s);
      r.ctx.inStrategy = i;
      post({ type: 'setup', thread: threadId, strategy: i }); // the boot watchdog names a setup that never returns
      s.setup?.(r.setupFor(i, opts.strategies[i].options));
      r.ctx.inStrategy = -1;
    });
    post({ type: 'setup', thread: threadId, strategy: -1 });
    const wl = workloadOf(opts).attach(r);
    r.workload = wl;
    const tasks: HostedTask[] = [];
    const plans = thread.tasks.map((id) => plan.tasks[id]);
    for (const t of plans) {
      if (t.kind === 'idle')
        tasks.push(new IdleTask(r, t.id, opts.idle?.policy ?? DEFAULT_IDLE.policy, opts.idle?.maxPollNs));
      else if (t.kind === 'kworker' || t.kind === 'unbound') tasks.push(new WorkerTask(r, r.workqueues, t.id, t.pool));
      else if (t.kind === 'ksoftirqd') tasks.push(new KsoftirqdTask(r, r.softirqs, t.id, t.cpu));
      else if (t.app?.kind === 'hog' || t.app?.kind === 'spinner') tasks.push(new HogTask(r, t.id));
      else {
        const h = wl.task(t.id);
        if (!h) throw new Error(`no workload task for ${t.name}`);
        tasks.push(h);
      }
    }
    r.onReport = (epoch) => {
      const h = getHeapStatistics();
      let code = 0;
      for (const s of getHeapSpaceStatistics()) if (s.space_name.startsWith('code')) code += s.space_size;
      post({
        type: 'report',
        thread: threadId,
        epoch,
        ...r.tracer.drain(),
        heap: {
          used: h.used_heap_size,
          total: h.total_heap_size,
          external: h.external_memory,
          malloced: h.malloced_memory,
          code,
        },
      });
    };
    post({
      type: 'ready',
      thread: threadId,
      // One entry per strategy (its objects in creation order), then the machine's own and the workqueues.
      objects: [
        ...opts.strategies.map((_, i) =>
          r.objects.list
            .filter((o) => o.strategy === i)
            .map((o) => `${o.kind}:${o.name}`)
            .join(','),
        ),
        `${r.objects.list
          .filter((o) => o.strategy < 0)
          .map((o) => `${o.kind}:${o.name}`)
          .join(',')}|wq:${r.workqueues.list.map((w) => w.name).join(',')}`,
      ],
      objectNames: r.objects.list.map((o) => `${o.kind} "${o.name}"`),
      wasm,
      clockErrorNs: clockCalibrationErrorNs(),
      tid: readTid(),
    });
    phase = 'run';
    r.stalls.start(); // host stalls: the /proc descriptors and the GC profile (closed below)
    runThreadLoop(r, tasks, plans);
    r.stalls.close();
    for (const s of strategies) s.teardown?.();
  } catch (e) {
    rt?.stalls.close();
    const err =
      e instanceof Error
        ? e
        : new Error(`threw ${typeof e === 'string' ? JSON.stringify(e) : String(e)} (not an Error)`);
    const badInput =
      phase === 'setup' &&
      (err instanceof StrategyLoadError || err instanceof StrategyOptionError || (rt?.ctx.inStrategy ?? -1) >= 0);
    if (rt) Atomics.compareExchange(rt.i32, regions.control + C_FAULT, 0, 1);
    // An error thrown by a strategy's setup() names the file and says it was setup, as
    // check-strategy does (load and option errors already name the file).
    const inSetup = phase === 'setup' && rt && rt.ctx.inStrategy >= 0 && !(err instanceof StrategyLoadError);
    const ref = inSetup && rt ? opts.strategies[rt.ctx.inStrategy] : undefined;
    const message = ref
      ? `${ref.url ? fileURLToPath(ref.url) : ref.label}: setup() failed: ${err.message}`
      : err.message;
    post({
      type: 'fault',
      thread: threadId,
      threadName: thread.name,
      message,
      stack: err.stack,
      cpu: rt?.ctx.faultAt?.cpu ?? rt?.cpu ?? -1,
      task: rt && rt.task >= 0 ? plan.tasks[rt.task].name : thread.name,
      context: rt
        ? (rt.ctx.faultAt?.context ?? (rt.cpu >= 0 ? rt.ctx.contextName() : phase === 'setup' ? 'setup' : 'thread'))
        : 'start-up',
      strategy: rt && rt.ctx.inStrategy >= 0 ? opts.strategies[rt.ctx.inStrategy].label : undefined,
      kind: badInput ? 'bad-input' : 'fault',
    });
  }
}
