/**
 * A stand-in for the `vscode` module, enough for the extension's probe commands to run under Node: the workspace is
 * trusted, input boxes and quick picks answer with given values, progress runs its task at once.
 */
import Module from 'node:module';

export interface StubAnswers {
  inputBox: string;
  quickPick: string;
  /** Paths the open dialog returns (none: it is cancelled). */
  openDialog?: readonly string[];
  /** The button an information message answers with. */
  infoPick?: string;
  /** What `workspace.getConfiguration().get(key)` returns. */
  settings?: Readonly<Record<string, unknown>>;
}

/** What the commands did through the stub: settings written and information messages shown. */
export const stubRecord: { updates: { key: string; value: unknown }[]; infos: string[] } = { updates: [], infos: [] };

/** Routes `require('vscode')` to the stub; returns the registered commands by id. */
export function installVscodeStub(answers: StubAnswers): Map<string, (arg?: unknown) => unknown> {
  const commands = new Map<string, (arg?: unknown) => unknown>();
  class Uri { constructor(readonly fsPath: string) {} }
  const stub = {
    Uri,
    ProgressLocation: { Notification: 15 },
    ViewColumn: { Beside: -2 },
    ConfigurationTarget: { Workspace: 2 },
    workspace: {
      isTrusted: true,
      getConfiguration: () => ({
        get: (key: string) => answers.settings?.[key],
        update: async (key: string, value: unknown) => { stubRecord.updates.push({ key, value }); },
      }),
    },
    extensions: { getExtension: () => undefined },
    commands: {
      registerCommand: (id: string, fn: (arg?: unknown) => unknown) => { commands.set(id, fn); return { dispose() { commands.delete(id); } }; },
      executeCommand: async () => undefined,
    },
    window: {
      showInputBox: async () => answers.inputBox,
      showQuickPick: async (items: { label: string }[]) => items.find((i) => i.label === answers.quickPick),
      withProgress: async (_o: unknown, task: (p: unknown, t: unknown) => Promise<unknown>) => task({ report() {} }, { onCancellationRequested() {} }),
      showErrorMessage: async () => undefined,
      showWarningMessage: async () => undefined,
      showInformationMessage: async (message: string) => { stubRecord.infos.push(message); return answers.infoPick; },
      showOpenDialog: async () => answers.openDialog?.map((p) => new Uri(p)),
    },
  };
  const m = Module as unknown as { _resolveFilename: (r: string, ...rest: unknown[]) => string; _cache?: unknown };
  const resolve = m._resolveFilename;
  m._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? 'vscode-stub' : resolve.call(this, request, ...rest);
  };
  (Module as unknown as { _cache: Record<string, unknown> })._cache['vscode-stub'] = { id: 'vscode-stub', filename: 'vscode-stub', loaded: true, exports: stub };
  return commands;
}
