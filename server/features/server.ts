/**
 * Registers every ShardLens handler on an LSP connection. Handlers stay thin: they look up the document's analysis
 * and hand it to a pure builder. main.ts calls this with a process connection; tests with an in-memory one.
 */
import {
  CodeActionKind, CodeLensRefreshRequest, DidChangeConfigurationNotification, DidChangeWatchedFilesNotification, FileChangeType, WatchKind,
  TextDocumentSyncKind, TextDocuments, type ClientCapabilities, type Connection,
} from 'vscode-languageserver';
import { dirname } from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  AnalysisChangedNotification, AnalysisRequest, PlanLayoutsRequest, PROTOCOL_VERSION, ReadyNotification, ServerExecutedCommands, SimulateRequest,
  configurationSelection, trainsNothing, type AnalysisChangedParams,
} from '../../shared/protocol';
import { analyzeDocument, withWhatIf, type AnalyzeInput, type DocumentAnalysis } from '../analysis/analyze';
import { AnalysisPool } from '../analysis/pool';
import { core, initCore } from '../analysis/core';
import { createHost, toPath } from '../analysis/host';
import { DEFAULT_TOP_K, MAX_TOP_K, PlannerCache } from '../analysis/plannerCache';
import { AnalysisScheduler } from '../analysis/scheduler';
import { SettingsStore } from '../settings';
import { buildAnalysisResult, simulationOf } from './analysisResult';
import { buildCodeActions } from './codeActions';
import { buildCodeLenses } from './codeLens';
import { buildCompletion } from './completion';
import { buildDiagnostics } from './diagnostics';
import { peakBytes } from './figures';
import { buildHover } from './hover';
import { buildInlayHints } from './inlayHints';
import { verdictOf, verdictText } from './verdict';
import { LAYOUT_ACTIONS, LAYOUT_ACTION_KIND, buildLayoutActions, wantsLayoutActions } from './layoutActions';

export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  /** Debounce delay after an edit, ms (default 50). */
  readonly debounceMs?: number;
  /**
   * Analysis worker threads (default 0: analyse on the main thread, as tests with a swapped core need). The server
   * process uses 2, so an expensive document never delays requests for another.
   */
  readonly analysisWorkers?: number;
}

interface Capabilities {
  configuration: boolean;
  inlayRefresh: boolean;
  lensRefresh: boolean;
  watchedFilesDynamic: boolean;
  configurationDynamic: boolean;
}

function readCapabilities(c: ClientCapabilities): Capabilities {
  return {
    configuration: !!c.workspace?.configuration,
    inlayRefresh: !!c.workspace?.inlayHint?.refreshSupport,
    lensRefresh: !!c.workspace?.codeLens?.refreshSupport,
    watchedFilesDynamic: !!c.workspace?.didChangeWatchedFiles?.dynamicRegistration,
    configurationDynamic: !!c.workspace?.didChangeConfiguration?.dynamicRegistration,
  };
}

function summary(a: DocumentAnalysis): AnalysisChangedParams {
  return {
    uri: a.uri, version: a.version, fits: verdictOf(a) && a.memory ? a.memory.fits : null, peakBytes: peakBytes(a.memory) ?? null,
    gpuMemoryBytes: a.memory?.gpuMemoryBytes ?? null, gpuName: a.plan?.cluster.gpu.name ?? null,
    stepSeconds: a.stepTime?.stepSeconds ?? null, verdict: verdictText(a) ?? null,
    ...(trainsNothing(a.plan, a.fileDiagnostics) ? { noTraining: true } : {}),
  };
}

/** Wires the server onto `connection` and starts listening. */
/**
 * Sends something to the client unless it has gone: a closed connection throws synchronously (vscode-jsonrpc
 * `throwIfClosedOrDisposed`) and a failed send rejects, and neither may escape from a timer or a worker's callback as an
 * uncaught exception. There is nothing to tell a client that is no longer there.
 */
function tell(send: () => Promise<unknown>): void {
  try {
    void send().catch(() => undefined);
  } catch {
    // The connection is closed or disposed.
  }
}

export function startServer(connection: Connection, options: ServerOptions = {}): void {
  const documents = new TextDocuments(TextDocument);
  let caps: Capabilities = { configuration: false, inlayRefresh: false, lensRefresh: false, watchedFilesDynamic: false, configurationDynamic: false };
  const settings = new SettingsStore(connection, false);
  let root: string | undefined;
  let folders: string[] = [];
  // Reads stay inside the workspace folders; with none open, inside the folders of the open documents.
  const readFolders = () => (folders.length ? folders : documents.all().map((d) => toPath(d.uri)).filter((p): p is string => !!p).map((p) => dirname(p)));
  const host = createHost((uri) => documents.get(uri)?.getText(), () => root, Date.now, readFolders);
  let ready: Promise<void> = Promise.resolve();
  // Apply Layout's check reads each layout's edited text again, with the document's settings and referenced files.
  const planner = new PlannerCache((a, text) => analyzeDocument({ uri: a.uri, version: null, text, settings: a.settings, ...(a.symbol ? { symbol: a.symbol } : {}) }, host, core()).plan);
  // The configuration function each open module of them is analysed for (a code lens chooses; the first by default).
  const chosen = new Map<string, string>();
  /** The planner's layouts for an analysis: yields once first, so a request cancelled meanwhile never starts a search. */
  const planned = async (a: DocumentAnalysis, topK: number, token: { isCancellationRequested: boolean }) => {
    const hit = planner.peek(a, topK);
    if (hit) return hit;
    await new Promise((r) => setImmediate(r));
    return token.isCancellationRequested ? undefined : planner.get(a, topK);
  };

  const inThread = (input: AnalyzeInput) => analyzeDocument(input, host, core());
  const pool = options.analysisWorkers ? new AnalysisPool(options.analysisWorkers, inThread, (a) => withWhatIf(a, host, core())) : undefined;
  const analyzeAny = (input: AnalyzeInput, stale: () => boolean = () => false) => (pool ? pool.analyze(input, stale) : inThread(input));

  const scheduler = new AnalysisScheduler({
    delayMs: options.debounceMs ?? 50,
    document: (uri) => {
      const d = documents.get(uri);
      return d ? { text: d.getText(), version: d.version } : undefined;
    },
    settings: (uri) => settings.get(uri),
    symbol: (uri) => chosen.get(uri),
    analyze: analyzeAny,
    onResult: (a) => {
      // A result can arrive from a worker after the client has gone (the connection closed): nothing to tell then.
      tell(() => connection.sendDiagnostics({ uri: a.uri, version: a.version ?? undefined, diagnostics: buildDiagnostics(a) }));
      tell(() => connection.sendNotification(AnalysisChangedNotification, summary(a)));
    },
  });

  /** Asks the client to re-request hints and lenses (after a referenced file or the settings changed). */
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  const refresh = () => {
    if (refreshTimer) clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      refreshTimer = undefined;
      if (caps.inlayRefresh) tell(() => connection.languages.inlayHint.refresh());
      if (caps.lensRefresh) tell(() => connection.sendRequest(CodeLensRefreshRequest.type));
    }, (options.debounceMs ?? 50) + 10);
  };

  /** Re-analyses the documents that read `uri`. */
  const touchDependents = (uri: string) => {
    const deps = scheduler.dependents(uri);
    for (const d of deps) scheduler.schedule(d);
    if (deps.length) refresh();
  };

  const analysis = async (uri: string) => {
    await ready;
    return scheduler.get(uri);
  };

  /** The analysis of an open document, else of the file on disk (the dashboard may ask for a closed file). */
  const anyAnalysis = async (uri: string): Promise<DocumentAnalysis | undefined> => {
    const open = await analysis(uri);
    if (open) return open;
    const text = host.readFile(uri);
    if (text === undefined) return undefined;
    return analyzeAny({ uri, version: null, text, settings: await settings.get(uri) });
  };

  connection.onInitialize((params) => {
    caps = readCapabilities(params.capabilities);
    const uris = params.workspaceFolders?.length ? params.workspaceFolders.map((f) => f.uri) : params.rootUri ? [params.rootUri] : [];
    folders = uris.map((u) => toPath(u)).filter((p): p is string => !!p);
    root = folders[0];
    pool?.broadcast({ type: 'folders', root, folders });
    settings.setSupportsConfiguration(caps.configuration);
    ready = initCore().catch((e: unknown) => connection.console.error(`ShardLens: format readers failed to start: ${String(e)}`));
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        inlayHintProvider: { resolveProvider: false },
        codeLensProvider: { resolveProvider: false },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, LAYOUT_ACTION_KIND] },
        completionProvider: { triggerCharacters: ['"', '-', '.'] },
        executeCommandProvider: { commands: Object.values(ServerExecutedCommands) },
      },
      serverInfo: { name: 'shardlens', version: SERVER_VERSION },
    };
  });

  connection.onInitialized(async () => {
    if (caps.configurationDynamic) void connection.client.register(DidChangeConfigurationNotification.type, { section: 'shardlens' }).catch(() => undefined);
    if (caps.watchedFilesDynamic) {
      // Config files in every state, and folders created or deleted (a checkout of a branch moves whole folders).
      void connection.client.register(DidChangeWatchedFilesNotification.type, {
        watchers: [{ globPattern: '**/*.{json,yaml,yml,toml,sh,bash,slurm,sbatch,py}' }, { globPattern: '**/*', kind: WatchKind.Create | WatchKind.Delete }],
      }).catch(() => undefined);
    }
    await ready;
    tell(() => connection.sendNotification(ReadyNotification, { version: SERVER_VERSION, protocolVersion: PROTOCOL_VERSION }));
  });

  documents.onDidChangeContent((e) => {
    // The buffer's references count for the index at once (a launcher being typed names its DeepSpeed JSON).
    host.fileChanged(e.document.uri, 'changed');
    pool?.broadcast({ type: 'document', uri: e.document.uri, text: e.document.getText() });
    scheduler.schedule(e.document.uri);
    touchDependents(e.document.uri);
  });
  connection.onExecuteCommand((p) => {
    if (p.command !== ServerExecutedCommands.selectConfiguration) return;
    // Only an open document and a Python name, as the function's code lens carries them; anything else does nothing.
    const sel = configurationSelection(p.arguments);
    if (!sel || !documents.get(sel.uri) || chosen.get(sel.uri) === sel.symbol) return;
    chosen.set(sel.uri, sel.symbol);
    planner.clear(sel.uri);
    scheduler.schedule(sel.uri);
    refresh();
  });
  documents.onDidClose((e) => {
    chosen.delete(e.document.uri);
    host.fileChanged(e.document.uri, 'changed');
    pool?.broadcast({ type: 'document', uri: e.document.uri, text: undefined });
    scheduler.close(e.document.uri);
    settings.clear(e.document.uri);
    planner.clear(e.document.uri);
    tell(() => connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] }));
    touchDependents(e.document.uri);
  });

  connection.onDidChangeWatchedFiles((p) => {
    for (const c of p.changes) {
      const change = c.type === FileChangeType.Created ? 'created' : c.type === FileChangeType.Deleted ? 'deleted' : 'changed';
      host.fileChanged(c.uri, change);
      pool?.broadcast({ type: 'file', uri: c.uri, change });
      touchDependents(c.uri);
      // A new or changed launcher may now name an open DeepSpeed JSON: that document is re-analysed with it.
      const text = c.type === FileChangeType.Deleted ? undefined : host.readFile(c.uri);
      if (text === undefined) continue;
      const named = documents.all().filter((d) => d.uri !== c.uri && text.includes(d.uri.slice(d.uri.lastIndexOf('/') + 1)));
      for (const d of named) scheduler.schedule(d.uri);
      if (named.length) refresh();
    }
  });
  connection.onDidChangeConfiguration((p) => {
    settings.setGlobal(p.settings);
    planner.clear();
    scheduler.invalidateAll();
    refresh();
  });

  connection.languages.inlayHint.on(async (p, token) => {
    const a = await analysis(p.textDocument.uri);
    return a && !token.isCancellationRequested ? buildInlayHints(a, p.range) : [];
  });
  connection.onHover(async (p, token) => {
    const a = await analysis(p.textDocument.uri);
    return a && !token.isCancellationRequested ? buildHover(a, p.position, core()) : null;
  });
  connection.onCodeLens(async (p, token) => {
    const a = await analysis(p.textDocument.uri);
    return a && !token.isCancellationRequested ? buildCodeLenses(a) : [];
  });
  connection.onCodeAction(async (p, token) => {
    const a = await analysis(p.textDocument.uri);
    if (!a || token.isCancellationRequested) return [];
    const fixes = buildCodeActions(a, core(), p.context.diagnostics);
    if (!a.plan || !wantsLayoutActions(p.context)) return fixes;
    const layouts = await planned(a, LAYOUT_ACTIONS, token);
    return token.isCancellationRequested ? [] : [...fixes, ...(layouts ? buildLayoutActions(layouts) : [])];
  });
  connection.onCompletion(async (p) => {
    const a = await analysis(p.textDocument.uri);
    return a ? buildCompletion(a.format, a.text, p.position) : [];
  });
  connection.onRequest(AnalysisRequest, async (p) => {
    const a = await anyAnalysis(p.uri);
    return a ? buildAnalysisResult(a) : null;
  });
  connection.onRequest(PlanLayoutsRequest, async (p, token) => {
    const a = typeof p?.uri === 'string' ? await anyAnalysis(p.uri) : undefined;
    if (!a || token.isCancellationRequested) return null;
    const topK = typeof p.topK === 'number' && Number.isFinite(p.topK) ? Math.min(MAX_TOP_K, Math.max(1, Math.floor(p.topK))) : DEFAULT_TOP_K;
    return (await planned(a, topK, token)) ?? null;
  });
  connection.onRequest(SimulateRequest, async (p) => {
    const a = await anyAnalysis(p.uri);
    return a ? simulationOf(a, core()) ?? null : null;
  });

  connection.onShutdown(() => pool?.dispose());
  documents.listen(connection);
  connection.listen();
}
