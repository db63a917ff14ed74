/** Collects facts, references and diagnostics while a parser walks one file. */
import type { ConfigDiagnostic, ConfigFacts, ConfigReference, Fact, FactValue, FormatId } from '../../shared/plan/facts';
import type { Severity, TextRange } from '../../shared/plan/types';
import { baseName, TOP } from './text';
import type { PlanPath } from '../../shared/plan/paths';

/** Key and value ranges of one written value. */
export interface Loc {
  readonly key: string;
  readonly keyRange?: TextRange;
  readonly valueRange?: TextRange;
  /** File the value was written in when it is not this document (a file the script sourced). */
  readonly uri?: string;
}

export class FactSink {
  readonly facts: Record<string, Fact> = {};
  readonly references: ConfigReference[] = [];
  readonly diagnostics: ConfigDiagnostic[] = [];
  readonly file: string;

  constructor(readonly format: FormatId, readonly uri: string) {
    this.file = baseName(uri);
  }

  /** Records a value written in the file; a later explicit write of the same path wins (as the frameworks do). */
  explicit(path: PlanPath, value: FactValue | undefined, loc: Loc): void {
    if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return;
    const elsewhere = loc.uri !== undefined && loc.uri !== this.uri;
    // A value from a sourced file keeps its place in that file; it has no range in this document.
    this.facts[path] = {
      value,
      key: loc.key,
      keyRange: elsewhere ? undefined : loc.keyRange,
      source: { kind: 'explicit', detail: `${elsewhere ? baseName(loc.uri!) : this.file}: ${loc.key}`, uri: elsewhere ? loc.uri : this.uri, range: loc.valueRange ?? loc.keyRange },
    };
  }

  /**
   * Records a value the script only falls back to when an environment variable is unset (`${SLURM_NNODES:-1}`): the
   * scheduler normally decides it, so it is an assumption the plan says it rests on (shared/plan/gather.ts).
   */
  fallback(path: PlanPath, value: FactValue, variable: string, loc: Loc): void {
    this.explicit(path, value, loc);
    const f = this.facts[path];
    if (f?.value !== value) return;
    const detail = `${f.source.detail} is the script's fallback ${String(value)} for ${variable}, which the scheduler normally sets`;
    this.facts[path] = { ...f, source: { ...f.source, kind: 'assumed', detail } };
  }

  /** Records a framework default unless the file already set the path. */
  default(path: PlanPath, value: FactValue, detail: string): void {
    if (this.facts[path]) return;
    this.facts[path] = { value, source: { kind: 'default', detail } };
  }

  /**
   * Records a value the file leaves to something ShardLens does not read (a recipe, a name), unless the file set the
   * path: the plan lists it with its assumptions (shared/plan/gather.ts).
   */
  assumed(path: PlanPath, value: FactValue, detail: string): void {
    if (this.facts[path]) return;
    this.facts[path] = { value, source: { kind: 'assumed', detail } };
  }

  /** Records a value derived from others in the same file. */
  derived(path: PlanPath, value: FactValue, detail: string, loc?: Loc): void {
    if (typeof value === 'number' && !Number.isFinite(value)) return;
    const elsewhere = loc?.uri !== undefined && loc.uri !== this.uri;
    this.facts[path] = {
      value,
      key: loc?.key,
      keyRange: elsewhere ? undefined : loc?.keyRange,
      source: { kind: 'derived', detail, uri: elsewhere ? loc!.uri : this.uri, range: loc?.valueRange ?? loc?.keyRange },
    };
  }

  has(path: PlanPath): boolean {
    return this.facts[path] !== undefined;
  }

  value(path: PlanPath): FactValue | undefined {
    return this.facts[path]?.value;
  }

  num(path: PlanPath): number | undefined {
    const v = this.facts[path]?.value;
    return typeof v === 'number' ? v : undefined;
  }

  ref(kind: ConfigReference['kind'], target: string, range?: TextRange, cwd?: string, symbol?: string): void {
    if (!target.trim()) return;
    this.references.push({ kind, target: target.trim(), range, ...(cwd ? { cwd } : {}), ...(symbol ? { symbol } : {}) });
  }

  diag(code: string, severity: Severity, message: string, range: TextRange | undefined, paths: readonly PlanPath[] = [], setting?: string): void {
    if (this.diagnostics.length >= 500) return;
    this.diagnostics.push({ code, severity, message, paths, range: range ?? TOP, ...(setting !== undefined ? { setting } : {}) });
  }

  /**
   * An information that `setting` (the flag or key as written) has a value only the run gives — a shell variable, an
   * OmegaConf interpolation, a placeholder — so the estimate stands in for the plan `paths` it would set and says so.
   */
  unresolved(code: string, setting: string, message: string, range: TextRange | undefined, paths: readonly PlanPath[]): void {
    this.diag(code, 'info', message, range, paths, setting);
  }

  build(): ConfigFacts {
    return { format: this.format, uri: this.uri, facts: this.facts, references: this.references, diagnostics: this.diagnostics };
  }
}
