/** The named scenarios: `deferlab scenario NAME`, listed by `deferlab list`. */
import type { ScenarioPreset } from '../cli/main.js';
import type { PartialConfig } from '../config/schema.js';
import type { ScenarioContext } from './common.js';
import { cpuHogPreset, runCpuHog } from './cpu-hog.js';
import { entropyPreset, runEntropy } from './entropy.js';
import { ipiStormPreset, runIpiStorm } from './ipi-storm.js';
import { randomRegressionPreset, runRandomRegression } from './random-regression.js';
import { runSeedMachine, seedMachinePreset } from './seed-machine.js';

export interface Scenario extends ScenarioPreset {
  run(ctx: ScenarioContext): Promise<number>;
}

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'random-regression': {
    ...randomRegressionPreset,
    config: randomRegressionPreset.config as PartialConfig,
    run: (ctx) => runRandomRegression(ctx),
  },
  'ipi-storm': { ...ipiStormPreset, config: ipiStormPreset.config as PartialConfig, run: (ctx) => runIpiStorm(ctx) },
  'cpu-hog': { ...cpuHogPreset, config: cpuHogPreset.config as PartialConfig, run: (ctx) => runCpuHog(ctx) },
  'seed-machine': {
    ...seedMachinePreset,
    config: seedMachinePreset.config as PartialConfig,
    run: (ctx) => runSeedMachine(ctx),
  },
  entropy: { ...entropyPreset, config: entropyPreset.config as PartialConfig, run: (ctx) => runEntropy(ctx) },
};

export type { ScenarioContext };
