/**
 * DeepSpeed configs that frameworks ship under a fixed path (data/deepspeed-bundled.json): axolotl's
 * `deepspeed_configs/*.json` (fetched into the working folder by `axolotl fetch deepspeed_configs`) and LLaMA-Factory's
 * `examples/deepspeed/*.json` (its examples run from its checkout). A training YAML that names one is common in a
 * workspace that does not hold the file; then the values that decide memory (ZeRO stage, offload, AutoTP, a fixed
 * precision) are read from the table as assumptions that say where they come from, instead of no ZeRO at all.
 */
import data from '../../data/deepspeed-bundled.json';
import type { ConfigFacts, Fact } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';
import type { Problem } from '../../shared/plan/types';
import { keyForPath } from '../../formats/keyTables';

interface BundledFile {
  readonly framework: string;
  readonly path: string;
  readonly stage: number;
  readonly offloadOptimizer?: string;
  readonly offloadParams?: string;
  readonly precision?: 'bf16' | 'fp16';
  readonly tp?: number;
}

const FILES: readonly BundledFile[] = data.files as BundledFile[];
const SOURCES: Readonly<Record<string, { readonly repo: string; readonly commit: string; readonly folder: string }>> = data.sources;

/** Code of the warning that a named DeepSpeed file was read from the framework's bundled copy. */
export const REFERENCE_BUNDLED = 'reference-bundled';

/** The bundled file a reference names: its last two path segments equal the file's folder and name. */
export function bundledDeepSpeedFile(target: string): BundledFile | undefined {
  const parts = target.replace(/\\/g, '/').split('/').filter((p) => p && p !== '.');
  if (parts.length < 2) return undefined;
  const tail = parts.slice(-2).join('/');
  return FILES.find((f) => f.path.split('/').slice(-2).join('/') === tail);
}

/** "ZeRO-3, parameters offloaded to CPU, bf16". */
function describe(f: BundledFile): string {
  const off = f.offloadOptimizer && f.offloadParams ? `optimizer and parameters offloaded to ${f.offloadParams.toUpperCase()}`
    : f.offloadOptimizer ? `optimizer offloaded to ${f.offloadOptimizer.toUpperCase()}` : f.offloadParams ? `parameters offloaded to ${f.offloadParams.toUpperCase()}` : '';
  return [`ZeRO-${f.stage}`, off, f.tp ? `AutoTP ${f.tp}` : '', f.precision ?? ''].filter(Boolean).join(', ');
}

/**
 * The facts the framework's copy of `target` gives, each an assumption naming the framework file and commit, and the
 * warning to show at the reference; undefined when `target` is no bundled file. `parse` reads DeepSpeed JSON text
 * (the DeepSpeed reader, so the facts mean what a real file's would).
 */
export function bundledDeepSpeedFacts(target: string, parse: (text: string) => ConfigFacts): { facts: ConfigFacts; problem: Problem } | undefined {
  const f = bundledDeepSpeedFile(target);
  if (!f) return undefined;
  const src = SOURCES[f.framework];
  const json = {
    zero_optimization: {
      stage: f.stage,
      ...(f.offloadOptimizer ? { offload_optimizer: { device: f.offloadOptimizer } } : {}),
      ...(f.offloadParams ? { offload_param: { device: f.offloadParams } } : {}),
    },
    ...(f.precision ? { [f.precision]: { enabled: true } } : {}),
    ...(f.tp ? { tensor_parallel: { autotp_size: f.tp } } : {}),
  };
  const read = parse(JSON.stringify(json));
  const detail = `${f.framework}'s ${f.path} (${describe(f)}; ${src ? `${src.repo} at ${src.commit}` : 'as shipped'}): "${target}" is not in the workspace; add the file to use its own values`;
  const facts: Partial<Record<PlanPath, Fact>> = {};
  // What the table states is assumed; the reader's defaults for keys the file leaves out stay defaults.
  for (const [path, fact] of Object.entries(read.facts) as [PlanPath, Fact][]) {
    facts[path] = fact.source.kind === 'explicit'
      ? { value: fact.value, source: { kind: 'assumed', detail: `${keyForPath('deepspeed', path) ?? fact.key ?? path} = ${String(fact.value)} from ${detail}` } }
      : { value: fact.value, source: fact.source };
  }
  return {
    facts: { ...read, facts, diagnostics: [], references: [] },
    problem: {
      code: REFERENCE_BUNDLED, severity: 'warning', paths: [],
      message: `DeepSpeed config "${target}" was not found next to the file or in the workspace; it is read as ${f.framework}'s file of that name (${describe(f)}). Add the file to use its own values.`,
    },
  };
}
