/**
 * `unbound`: a WQ_UNBOUND workqueue (the idpf fix, seed 004). Options: `scope` (affinity scope:
 * cpu, smt, cache, numa, system; default cache, the kernel's) and `strict` (affinity_strict).
 * Trade-off: a worker is placed on an idle CPU of the scope, so a hog on this CPU cannot delay
 * it by milliseconds; but the work may run on another CPU, and random.c's mix refuses to run
 * off its own CPU (it notices and skips), so entropy suffers unless scope=cpu.
 */
import type {
  AffinityScope,
  DeferralStrategy,
  Deferred,
  Kernel,
  StrategySetup,
  Work,
  Workqueue,
} from '../api/types.js';
import { pickBool, pickOption } from './options.js';

export class UnboundStrategy implements DeferralStrategy {
  static readonly description =
    'WQ_UNBOUND workqueue: an idle worker in the affinity scope takes it (scope=cpu|smt|cache|numa|system, strict=bool)';
  static readonly claims = { cpu: 'any', context: 'task' } as const;
  private wq!: Workqueue;
  private works: Work[] = [];
  private readonly scope: AffinityScope;
  private readonly strict: boolean;

  constructor(options: Readonly<Record<string, string | number | boolean>>) {
    this.scope = pickOption(
      options,
      'scope',
      ['cpu', 'smt', 'cache', 'numa', 'system'],
      'cache',
      'unbound',
    ) as AffinityScope;
    this.strict = pickBool(options, 'strict', false, 'unbound');
  }

  setup(s: StrategySetup): void {
    this.wq = s.allocWorkqueue(`random_unbound_${this.scope}${this.strict ? '_strict' : ''}`, {
      unbound: true,
      affinityScope: this.scope,
      affinityStrict: this.strict,
    });
    for (let c = 0; c < s.nrCpus; c++) {
      const d = s.deferred(c);
      this.works.push(s.createWork(`fast_pool_mix/${c}`, (k) => d.run(k)));
    }
  }

  handoff(k: Kernel, d: Deferred): boolean {
    return k.queueWork(this.wq, this.works[d.cpu]);
  }
}
