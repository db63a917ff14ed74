/**
 * Per-document analysis scheduling: edits are debounced, stale work is dropped, results are cached by document
 * version, and a reverse-reference map says which open documents depend on a changed file.
 */
import type { ShardLensSettings } from '../../shared/protocol';
import type { AnalyzeInput, DocumentAnalysis } from './analyze';

export interface SchedulerOptions {
  /** Debounce delay after an edit, milliseconds. */
  readonly delayMs: number;
  /** Current text and version of an open document, or undefined when it is closed. */
  readonly document: (uri: string) => { readonly text: string; readonly version: number } | undefined;
  readonly settings: (uri: string) => Promise<ShardLensSettings>;
  /** The configuration function chosen in a module of them (schedule the document again when it changes). */
  readonly symbol?: (uri: string) => string | undefined;
  /**
   * Analyses one version, here or in a worker; `stale` says when the version has been superseded (a worker then
   * drops the job before it starts and resolves undefined).
   */
  readonly analyze: (input: AnalyzeInput, stale: () => boolean) => DocumentAnalysis | Promise<DocumentAnalysis | undefined>;
  /** Called with every fresh result of a scheduled (debounced) run. */
  readonly onResult: (analysis: DocumentAnalysis) => void;
}

interface Entry {
  generation: number;
  timer?: ReturnType<typeof setTimeout>;
  cached?: DocumentAnalysis;
  /** The in-flight run for the current generation. */
  running?: Promise<DocumentAnalysis | undefined>;
}

export class AnalysisScheduler {
  private readonly entries = new Map<string, Entry>();
  /** Referenced file URI → URIs of the documents that reference it. */
  private readonly reverse = new Map<string, Set<string>>();

  constructor(private readonly opts: SchedulerOptions) {}

  private entry(uri: string): Entry {
    let e = this.entries.get(uri);
    if (!e) {
      e = { generation: 0 };
      this.entries.set(uri, e);
    }
    return e;
  }

  /** Marks a document changed: cached results become stale and a debounced run is queued. */
  schedule(uri: string): void {
    const e = this.entry(uri);
    e.generation++;
    e.cached = undefined;
    e.running = undefined;
    if (e.timer) clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = undefined;
      // A rejection here is the client gone while the settings were asked for (the connection closed): nothing to do.
      void this.get(uri).then((a) => a && this.opts.onResult(a)).catch(() => undefined);
    }, this.opts.delayMs);
  }

  /** The analysis of the document's current version: cached, in flight, or computed now. */
  get(uri: string): Promise<DocumentAnalysis | undefined> {
    const doc = this.opts.document(uri);
    if (!doc) return Promise.resolve(undefined);
    const e = this.entry(uri);
    if (e.cached && e.cached.version === doc.version) return Promise.resolve(e.cached);
    if (e.running) return e.running;
    const generation = e.generation;
    const run = this.opts.settings(uri).then(async (settings): Promise<DocumentAnalysis | undefined> => {
      const now = this.opts.document(uri);
      // A newer edit or a close arrived while the settings were fetched: this run is stale.
      if (!now || e.generation !== generation) return e.generation === generation ? undefined : this.get(uri);
      const symbol = this.opts.symbol?.(uri);
      const input = { uri, version: now.version, text: now.text, settings, ...(symbol ? { symbol } : {}) };
      const a = await this.opts.analyze(input, () => e.generation !== generation || this.entries.get(uri) !== e);
      if (!a) return this.opts.document(uri) ? this.get(uri) : undefined;
      if (e.generation === generation) {
        e.cached = a;
        e.running = undefined;
        this.track(uri, a.referenced);
      }
      return a;
    });
    e.running = run;
    return run;
  }

  /** The cached analysis without computing anything. */
  peek(uri: string): DocumentAnalysis | undefined {
    return this.entries.get(uri)?.cached;
  }

  /** Forgets a closed document. */
  close(uri: string): void {
    const e = this.entries.get(uri);
    if (e?.timer) clearTimeout(e.timer);
    if (e) e.generation++;
    this.entries.delete(uri);
    this.track(uri, []);
  }

  /** Open documents whose analysis reads `uri` (directly or through a chain of references). */
  dependents(uri: string): string[] {
    const out = new Set<string>();
    const queue = [uri];
    while (queue.length) {
      const u = queue.pop() as string;
      for (const d of this.reverse.get(u) ?? []) {
        if (!out.has(d) && d !== uri) {
          out.add(d);
          queue.push(d);
        }
      }
    }
    return [...out];
  }

  /** Re-analyses everything (settings changed). */
  invalidateAll(): void {
    for (const uri of [...this.entries.keys()]) this.schedule(uri);
  }

  private track(uri: string, referenced: readonly string[]): void {
    for (const set of this.reverse.values()) set.delete(uri);
    for (const r of referenced) {
      let set = this.reverse.get(r);
      if (!set) this.reverse.set(r, (set = new Set()));
      set.add(uri);
    }
  }
}
