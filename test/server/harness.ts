/**
 * Runs the ShardLens language server in this process over a pair of in-memory streams and drives it with a plain
 * JSON-RPC client, as an editor would (tailwindcss-intellisense's in-band connection pattern).
 */
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { createConnection } from 'vscode-languageserver/node';
import type {
  CodeAction, CodeLens, CompletionItem, Diagnostic, Hover, InlayHint, Position, PublishDiagnosticsParams, TextEdit,
} from 'vscode-languageserver';
import { LspMethods, type AnalysisResult } from '../../shared/protocol';
import { startServer } from '../../server/features/server';
import { applyEdits } from '../../server/features/edits';

export interface Client {
  readonly rpc: MessageConnection;
  /** Settings the fake client answers workspace/configuration with (mutable). */
  settings: Record<string, unknown>;
  /** What the server declared in its initialize result. */
  capabilities: { executeCommandProvider?: { commands: string[] } } & Record<string, unknown>;
  /** Called with each scope URI the server asks settings for (before the answer is sent). */
  onConfiguration?: (scopeUri: string | undefined) => void;
  open(uri: string, text: string, languageId?: string): Promise<void>;
  change(uri: string, text: string): Promise<void>;
  close(uri: string): Promise<void>;
  /** Resolves with the next published diagnostics for `uri` (after `open`/`change`). */
  diagnostics(uri: string): Promise<Diagnostic[]>;
  hints(uri: string): Promise<InlayHint[]>;
  hover(uri: string, pos: Position): Promise<Hover | null>;
  lenses(uri: string): Promise<CodeLens[]>;
  actions(uri: string, diagnostics: Diagnostic[]): Promise<CodeAction[]>;
  completion(uri: string, pos: Position): Promise<CompletionItem[]>;
  analysis(uri: string): Promise<AnalysisResult | null>;
  /** Text of `uri` after applying a code action's edit. */
  applied(uri: string, action: CodeAction): string;
  /** Notifications the server sent, by method. */
  readonly notifications: { method: string; params: unknown }[];
  refreshes: number;
  dispose(): void;
}

export interface ClientOptions {
  /** Workspace folder the client opens (default: none, as for single files). */
  readonly folder?: string;
  /** Analysis worker threads of the server (default 0: in the server's thread). */
  readonly workers?: number;
}

/** Starts a server and an initialized client; the promise resolves after `shardlens/ready`. */
export async function startClient(settings: Record<string, unknown> = {}, options: ClientOptions = {}): Promise<Client> {
  const up = new PassThrough();
  const down = new PassThrough();
  startServer(createConnection(new StreamMessageReader(up), new StreamMessageWriter(down)), { debounceMs: 5, analysisWorkers: options.workers ?? 0 });
  const rpc = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const texts = new Map<string, { text: string; version: number }>();
  const waiters = new Map<string, ((d: Diagnostic[]) => void)[]>();
  const notifications: { method: string; params: unknown }[] = [];
  const client: Client = {
    rpc, settings, notifications, refreshes: 0, capabilities: {},
    async open(uri, text, languageId = 'plaintext') {
      texts.set(uri, { text, version: 1 });
      await rpc.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    },
    async change(uri, text) {
      const v = (texts.get(uri)?.version ?? 0) + 1;
      texts.set(uri, { text, version: v });
      await rpc.sendNotification('textDocument/didChange', { textDocument: { uri, version: v }, contentChanges: [{ text }] });
    },
    async close(uri) {
      texts.delete(uri);
      await rpc.sendNotification('textDocument/didClose', { textDocument: { uri } });
    },
    diagnostics(uri) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no diagnostics for ${uri} within 30 s`)), 30_000);
        waiters.set(uri, [...(waiters.get(uri) ?? []), (d) => {
          clearTimeout(timer);
          resolve(d);
        }]);
      });
    },
    hints: (uri) => rpc.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 100000, character: 0 } } }),
    hover: (uri, position) => rpc.sendRequest('textDocument/hover', { textDocument: { uri }, position }),
    lenses: (uri) => rpc.sendRequest('textDocument/codeLens', { textDocument: { uri } }),
    actions: (uri, diagnostics) => rpc.sendRequest('textDocument/codeAction', {
      textDocument: { uri }, range: diagnostics[0]?.range ?? { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics },
    }),
    completion: async (uri, position) => {
      const r = await rpc.sendRequest<CompletionItem[] | { items: CompletionItem[] } | null>('textDocument/completion', { textDocument: { uri }, position });
      return Array.isArray(r) ? r : r?.items ?? [];
    },
    analysis: (uri) => rpc.sendRequest(LspMethods.analysis, { uri }),
    applied(uri, action) {
      const edits = (action.edit?.changes?.[uri] ?? []) as TextEdit[];
      return applyEdits(texts.get(uri)?.text ?? '', edits);
    },
    dispose() {
      void rpc.sendRequest('shutdown').catch(() => undefined);
      rpc.dispose();
      up.end();
      down.end();
    },
  };
  rpc.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
    const list = waiters.get(p.uri);
    if (list?.length) {
      waiters.set(p.uri, []);
      for (const w of list) w(p.diagnostics);
    }
  });
  rpc.onNotification((method: string, params: unknown) => {
    notifications.push({ method, params });
  });
  rpc.onRequest('workspace/configuration', (p: { items: { section?: string; scopeUri?: string }[] }) => {
    for (const i of p.items) client.onConfiguration?.(i.scopeUri);
    return p.items.map(() => client.settings);
  });
  rpc.onRequest('workspace/inlayHint/refresh', () => {
    client.refreshes++;
    return null;
  });
  rpc.onRequest('workspace/codeLens/refresh', () => null);
  rpc.onRequest('client/registerCapability', () => null);
  const ready = new Promise<void>((resolve) => rpc.onNotification(LspMethods.ready, () => resolve()));
  rpc.listen();
  const init: { capabilities: Client['capabilities'] } = await rpc.sendRequest('initialize', {
    processId: null, rootUri: options.folder ? pathToFileURL(options.folder).toString() : null,
    workspaceFolders: options.folder ? [{ uri: pathToFileURL(options.folder).toString(), name: 'workspace' }] : null,
    capabilities: { workspace: { configuration: true, inlayHint: { refreshSupport: true }, codeLens: { refreshSupport: true }, didChangeWatchedFiles: { dynamicRegistration: true } } },
  });
  client.capabilities = init.capabilities;
  await rpc.sendNotification('initialized', {});
  await ready;
  return client;
}

/** Position of the first occurrence of `needle` in `text` (plus `delta` characters). */
export function posOf(text: string, needle: string, delta = 1): Position {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`fixture lacks ${needle}`);
  const before = text.slice(0, i + delta);
  const line = before.split('\n').length - 1;
  return { line, character: before.length - (before.lastIndexOf('\n') + 1) };
}
