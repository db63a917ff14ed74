/**
 * Every command of the extension as a factory over the client context, by the id package.json contributes
 * (rust-analyzer's `createCommands`). main.ts registers them once through `Ctx.register`.
 */
import { listPresets } from '../../shared/model/presets';
import type { CommandFactory } from '../ctx';
import { PROBE_COMMANDS, probeCommands } from '../probe/commands';
import { showAssumptions } from './assumptions';
import { selectCluster } from './cluster';
import { openDashboardCmd, showDerivation, simulateStep } from './dashboard';
import { applyLayoutCmd } from './layout';
import { selectModel } from './model';
import { cancelValidationCmd, runValidationCmd } from './validate';

export function createCommands(): Readonly<Record<string, CommandFactory>> {
  return {
    'shardlens.simulateStep': simulateStep,
    'shardlens.openDashboard': openDashboardCmd,
    'shardlens.showDerivation': showDerivation,
    'shardlens.showAssumptions': showAssumptions,
    'shardlens.runValidation': runValidationCmd,
    // "Run on PyTorch" is the probe's local run: mode and interpreter pick, progress, cancel, comparison with the estimate.
    'shardlens.runProbe': (ctx) => (arg) => probeCommands[PROBE_COMMANDS.runLocal](ctx)(ctx.targetUri(arg)),
    'shardlens.cancelValidation': cancelValidationCmd,
    'shardlens.selectCluster': () => () => selectCluster(),
    'shardlens.selectModel': () => () => selectModel(listPresets().map((p) => ({ id: p.id, name: p.name }))),
    'shardlens.showOutput': (ctx) => () => ctx.log.show(),
    'shardlens.applyLayout': applyLayoutCmd,
    ...probeCommands,
  };
}
