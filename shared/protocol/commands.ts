/**
 * The names the extension contributes in package.json (`contributes.commands`, `contributes.configuration`), typed
 * once. The server may only point users at these (code lenses, assumptions, source details); a manifest test checks
 * both directions: every name here is contributed and registered, and everything contributed is listed here (settings:
 * every DEFAULT_SETTINGS field).
 */
import type { ShardLensSettings } from './settings';

/** Every command the extension contributes and registers. */
export const Commands = {
  simulateStep: 'shardlens.simulateStep',
  openDashboard: 'shardlens.openDashboard',
  runValidation: 'shardlens.runValidation',
  runProbe: 'shardlens.runProbe',
  cancelValidation: 'shardlens.cancelValidation',
  selectCluster: 'shardlens.selectCluster',
  selectModel: 'shardlens.selectModel',
  selectConfiguration: 'shardlens.selectConfiguration',
  showOutput: 'shardlens.showOutput',
  applyLayout: 'shardlens.applyLayout',
  probeRunLocal: 'shardlens.probe.runLocal',
  probeClusterCommands: 'shardlens.probe.clusterCommands',
  probeImportReport: 'shardlens.probe.importReport',
  probeCalibrate: 'shardlens.probe.calibrate',
  probeFake: 'shardlens.probe.fake',
  profileCluster: 'shardlens.profileCluster',
  calibrateFromLog: 'shardlens.calibrateFromLog',
  showAssumptions: 'shardlens.showAssumptions',
  showDerivation: 'shardlens.showDerivation',
} as const;

/** A contributed command id. */
export type CommandId = (typeof Commands)[keyof typeof Commands];

/** Commands the server's code lenses and assumptions invoke; the extension registers them. Each takes the document URI. */
export const ClientCommands = {
  simulateStep: Commands.simulateStep,
  openDashboard: Commands.openDashboard,
  selectCluster: Commands.selectCluster,
  selectModel: Commands.selectModel,
  /** The verdict's assumed inputs (code lens, status bar, quick fixes). */
  showAssumptions: Commands.showAssumptions,
  /** A hover's "More" link: the derivation in the dashboard. */
  showDerivation: Commands.showDerivation,
} as const satisfies Readonly<Record<string, CommandId>>;

/**
 * Commands the server executes itself (`workspace/executeCommand`, declared in its executeCommandProvider), so that
 * every LSP client runs them from the code lenses that carry them: VS Code's language client registers them (the
 * extension does not), Neovim's `vim.lsp.codelens.run()` sends them to the server.
 */
export const ServerExecutedCommands = {
  /** A code lens of a module of configuration functions: analyse this one (arguments: the document URI and its name). */
  selectConfiguration: Commands.selectConfiguration,
} as const satisfies Readonly<Record<string, CommandId>>;

/** A command the server may name in a code lens or an assumption. */
export type ServerCommand = (typeof ClientCommands)[keyof typeof ClientCommands] | (typeof ServerExecutedCommands)[keyof typeof ServerExecutedCommands];

type Leaf = string | number | boolean | readonly unknown[];
/** Dotted keys of the settings object; `calibration` is one setting (a table keyed by cluster), not a group. */
type SettingKeys<T, P extends string> = {
  [K in keyof T & string]-?: K extends 'calibration' ? `${P}.${K}` : T[K] extends Leaf ? `${P}.${K}` : SettingKeys<T[K], `${P}.${K}`>;
}[keyof T & string];

/** A contributed setting: one per ShardLensSettings leaf, plus the language client's trace setting. */
export type SettingId = SettingKeys<ShardLensSettings, 'shardlens'> | 'shardlens.trace.server';
