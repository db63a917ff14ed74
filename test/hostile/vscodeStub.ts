/**
 * A stand-in for the `vscode` module, enough for the extension's probe commands to run under Node: the workspace is
 * trusted, input boxes and quick picks answer with given values, progress runs its task at once.
 */
import Module from 'node:module';

export interface StubAnswers {
  inputBox: string;
  quickPick: string;
}

/** Routes `require('vscode')` to the stub; returns the registered commands by id. */
export function installVscodeStub(answers: StubAnswers): Map<string, (arg?: unknown) => unknown> {
  const commands = new Map<string, (arg?: unknown) => unknown>();
  class Uri { constructor(readonly fsPath: string) {} }
  const stub = {
    Uri,
    ProgressLocation: { Notification: 15 },
    ViewColumn: { Beside: -2 },
    ConfigurationTarget: { Workspace: 2 },
    workspace: { isTrusted: true, getConfiguration: () => ({ get: () => undefined, update: async () => undefined }) },
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
      showInformationMessage: async () => undefined,
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
