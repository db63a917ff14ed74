/**
 * Starts the ShardLens language server (dist/server.js) over IPC and resolves once the server says it is ready
 * (`shardlens/ready`), so that callers never race the server with sleeps.
 */
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { AnalysisChangedNotification, ReadyNotification, SETTINGS_SECTION, type AnalysisChangedParams, type ReadyParams } from '../shared/protocol';

/** The documents the server annotates, one entry per format (the server decides by content among these). */
export const DOCUMENT_SELECTOR: NonNullable<LanguageClientOptions['documentSelector']> = [
  // DeepSpeed JSON by name, and Hugging Face config.json files (model sources).
  { scheme: 'file', language: 'json', pattern: '**/{ds_config*,ds_z*,zero*,*deepspeed*,config}.json' },
  { scheme: 'file', language: 'jsonc', pattern: '**/{ds_config*,ds_z*,zero*,*deepspeed*}.json' },
  // Launch scripts (Megatron-LM, DeepSpeed-Chat, OpenRLHF, verl, HF Trainer, …) and Slurm batch files, which VS Code
  // does not associate with shellscript by default.
  { scheme: 'file', language: 'shellscript' },
  { scheme: 'file', pattern: '**/*.{slurm,sbatch}' },
  // Megatron YAML, NeMo, GPT-NeoX, HF Trainer recipes, Accelerate, nanotron, Axolotl, LLaMA-Factory, Lightning, LitGPT, torchtune.
  { scheme: 'file', language: 'yaml' },
  // torchtitan TOML (VS Code has no built-in TOML language, so also match by name).
  { scheme: 'file', language: 'toml' },
  { scheme: 'file', pattern: '**/*.toml' },
  // torchtitan's Python configurations (Trainer.Config functions); the server leaves every other Python file alone.
  { scheme: 'file', language: 'python' },
];

/** How long to wait for `shardlens/ready` before reporting the server as broken (not a sleep: a deadline). */
const READY_DEADLINE_MS = 30_000;

/**
 * Starts the client; resolves with it after the server's readiness notification. Rejects with a readable error.
 * `onAnalysisChanged` is registered before the start, so no summary sent right after `initialized` is lost.
 */
export async function startClient(
  context: vscode.ExtensionContext, log: vscode.LogOutputChannel, onAnalysisChanged: (p: AnalysisChangedParams) => void,
): Promise<LanguageClient> {
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: log,
    synchronize: { configurationSection: SETTINGS_SECTION },
    initializationOptions: { workspaceTrusted: vscode.workspace.isTrusted },
    // Hovers end with a "More" link to the derivation in the dashboard: that one command, and no other, may run from them.
    markdown: { isTrusted: { enabledCommands: ['shardlens.showDerivation'] } },
  };
  const client = new LanguageClient('shardlens', 'ShardLens', serverOptions, clientOptions);
  client.onNotification(AnalysisChangedNotification, onAnalysisChanged);
  let timer: NodeJS.Timeout | undefined;
  const ready = new Promise<ReadyParams>((resolve, reject) => {
    client.onNotification(ReadyNotification, (p) => resolve(p));
    timer = setTimeout(() => reject(new Error(`the language server did not report ready within ${READY_DEADLINE_MS / 1000} s`)), READY_DEADLINE_MS);
  });
  try {
    await client.start();
    const params = await ready;
    log.info(`Language server ready (version ${params.version}, protocol ${params.protocolVersion}).`);
    return client;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
