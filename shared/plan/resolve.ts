/**
 * Facts from a config file (and the files it references or that reference it) → a Plan.
 * Merges facts by priority, fills DeepSpeed "auto" from the referencing file or HF Trainer defaults,
 * derives the batch identity as DeepSpeed does (runtime/config.py `_set_batch_related_parameters`),
 * and turns everything still unknown into an explicit Assumption. Pure: no I/O, never throws.
 */
import { findPreset, suggestPresets } from '../model/presets';
import { SLIDING_WINDOW_CODE } from '../model/hfConfig';
import type { ServerCommand, SettingId } from '../protocol/commands';
import type { ClusterCorrection } from './calibration';
import type { ClusterProfile } from '../hardware/profile';
import { derivePlan } from './derive';
import { factEntries, givesPlanValue, type ConfigFacts, type Fact, type FactValue } from './facts';
import { fromSetting, Gathered, gatherInput, num, str, type Facts } from './gather';
import { runTimeNote, unresolvedSettings } from './runTime';
import type { PlanPath } from './paths';
import { hasInlineModel, modelFromFacts, sameShapePreset } from './resolveModel';
import type { GpuSpec, InputSource, ModelSpec, Plan, Problem } from './types';

export interface ResolveSettings {
  /** GPU name from settings (forgiving match). */
  readonly gpu?: string;
  readonly gpusPerNode?: number;
  readonly nodes?: number;
  /** Network bandwidth of one node, Gbit/s (`shardlens.cluster.networkGbps`): replaces the GPU's inter-node figure. */
  readonly networkGbps?: number;
  /** GPUs one NVLink fabric joins across nodes (`shardlens.cluster.nvlinkDomain`): replaces the GPU's own figure. */
  readonly nvlinkDomain?: number;
  /** Overrides the world size from the file when > 0. */
  readonly worldSize?: number;
  /** Model to use when the files name none (preset id, HF id). */
  readonly model?: string;
  /** Sequence length when the files do not say. */
  readonly seqLen?: number;
  /** Micro batch when the files do not say. */
  readonly microBatch?: number;
  /** Mean tokens per sample of packed sequences with per-sample attention (`shardlens.sampleTokens`). */
  readonly sampleTokens?: number;
  readonly cudaContextBytes?: number;
  readonly allocatorFragmentation?: number;
  /** Per-cluster corrections from "Calibrate" (`shardlens.calibration`), applied when the plan's GPU matches. */
  readonly calibration?: Readonly<Record<string, ClusterCorrection>>;
  /** A measured cluster profile (`shardlens profile`, `--profile`, `shardlens.profile`): its curves replace the catalog's. */
  readonly profile?: ClusterProfile;
  /** The `shardlens.profile` setting: a profile file, relative to the workspace root; the loader reads it into `profile`. */
  readonly profileFile?: string;
}

export interface ModelLookup {
  readonly model: ModelSpec;
  readonly source: InputSource;
  /** What reading the model's config says to the plan (its sliding window, layers read as attention). */
  readonly notes?: readonly Problem[];
}

/** " Bundled presets with a close name: …" for a model name that is not bundled, or nothing. */
function closePresets(named: string): string {
  const near = suggestPresets(named);
  return near.length ? ` Bundled presets with a close name: ${near.join(', ')} (the same shape only if its config.json says so).` : '';
}

/** A reference whose config.json exists but is not a usable model config: said as an error, never replaced by a guess. */
export interface ModelLookupInvalid {
  readonly invalid: string;
}

export interface ResolveContext {
  readonly settings?: ResolveSettings;
  /** Model for a reference as written (HF id, path to a config.json, "llama3:8B"); the server reads files. Pure. */
  readonly lookupModel?: (ref: string, fromUri: string) => ModelLookup | ModelLookupInvalid | undefined;
  readonly lookupGpu?: (name: string) => GpuSpec | undefined;
}

/** A value nothing said; the user should confirm it (setting or code-lens command). */
export interface Assumption {
  readonly path: PlanPath;
  readonly value: string;
  readonly detail: string;
  /** The setting that replaces the assumption. */
  readonly setting?: SettingId;
  /** The command that changes it. */
  readonly command?: ServerCommand;
}

export interface ResolvedPlan {
  readonly plan?: Plan;
  readonly problems: Problem[];
  readonly assumptions: Assumption[];
  /** The winning fact per path after merging. */
  readonly factsUsed: Partial<Record<PlanPath, Fact>>;
  /**
   * True when the document is a script that runs no training command and no file gives a training value (a data
   * preprocessing or conversion script): there is nothing to estimate, which is not an error, and no plan.
   */
  readonly noTraining?: boolean;
}

/** Model assumed when no file names one (shown as an assumption the user can change). */
const ASSUMED_MODEL = 'Llama-3.1-8B';

/** Merges facts: explicit/derived beat defaults; the primary file beats related ones; "auto" counts as unset. */
function merge(primary: ConfigFacts, related: readonly ConfigFacts[], problems: Problem[]): Partial<Record<PlanPath, Fact>> {
  const out: Partial<Record<PlanPath, Fact>> = {};
  const files = [primary, ...related];
  const rank = (f: Fact) => (f.source.kind === 'default' ? 1 : 0);
  for (const pass of [0, 1]) {
    for (const file of files) {
      for (const [path, fact] of factEntries(file.facts)) {
        if (rank(fact) !== pass) continue;
        const cur = out[path];
        const isAuto = fact.value === 'auto';
        const fromRelated = file !== primary;
        const f: Fact = fromRelated && fact.source.kind === 'explicit' ? { ...fact, source: { ...fact.source, kind: 'referenced' } } : fact;
        if (!cur) { out[path] = f; continue; }
        if (cur.value === 'auto' && !isAuto) {
          out[path] = { ...f, keyRange: cur.keyRange, key: cur.key, source: { ...f.source, detail: `"auto" in ${cur.source.detail} ← ${f.source.detail}` } };
          continue;
        }
        if (pass === 0 && !isAuto && cur.value !== f.value && cur.source.kind === 'explicit' && f.source.kind === 'referenced' && /^training\.(microBatch|gradAccum)$/.test(path)) {
          problems.push({ code: 'hf-ds-mismatch', severity: 'warning', paths: [path],
            message: `${cur.source.detail} is ${cur.value} but ${f.source.detail} says ${f.value}; the HF Trainer stops with a mismatch error. Use "auto".` });
        }
      }
    }
  }
  return out;
}

/** Spellings of a model reference to try against the presets ("llama3:8B", "llama3_3_70b", "qlora_llama3_1_8b", "org/Model"). */
export function presetCandidates(ref: string): string[] {
  const base = ref.replace(/^.*\//, '').replace(/^q?lora_/, '');
  const dotted = base.replace(/^([a-z]+)(\d)_(\d)_/i, '$1$2.$3-');
  const titan = ref.includes(':') ? [`torchtitan-${ref.replace(':', '-')}`] : [];
  // Fine-tune and re-upload decorations: "-Instruct-2507", "-chat", "-hf", a date, a storage dtype ("-fp16").
  const plainName = base.replace(/-(fp16|bf16|fp32|float16|bfloat16)$/i, '').replace(/-(instruct|chat|base|hf)(-\d+)?$/i, '').replace(/-\d{4}$/, '');
  return [...new Set([...titan, ref, base, ref.replace(':', '-'), base.replace(':', '-'), dotted, dotted.replace(/_/g, '-'), base.replace(/_/g, '-'), plainName])];
}

/**
 * Finds the model: inline facts, then references and model.preset through the lookup, then bundled presets, then
 * settings. What reading the found model's config says goes to `notes`.
 */
function findModel(facts: Facts, files: readonly ConfigFacts[], ctx: ResolveContext, sources: Partial<Record<PlanPath, InputSource>>, seqLen?: number, invalid: string[] = [], notes: Problem[] = []): ModelSpec | undefined {
  if (hasInlineModel(facts)) {
    const m = modelFromFacts(facts, sources, seqLen);
    if (m) {
      sources.model = facts['model.hiddenSize']?.source ?? { kind: 'explicit', detail: 'inline model' };
      const tied = tiedUnlikeItsShape(m, facts['model.tiedEmbeddings']);
      if (tied) notes.push(tied);
      return m;
    }
  }
  const refs: { ref: string; uri: string }[] = [];
  for (const f of files) for (const r of f.references) if (r.kind === 'model') refs.push({ ref: r.target, uri: f.uri });
  const preset = str(facts, 'model.preset');
  if (preset) refs.push({ ref: preset, uri: files[0]?.uri ?? '' });
  if (ctx.settings?.model) refs.push({ ref: ctx.settings.model, uri: '' });
  for (const { ref, uri } of refs) {
    const hit = ctx.lookupModel?.(ref, uri);
    if (hit && 'invalid' in hit) { invalid.push(hit.invalid); continue; }
    if (hit) { sources.model = hit.source; notes.push(...(hit.notes ?? [])); return withModelOverrides(hit.model, facts, sources); }
    for (const cand of presetCandidates(ref)) {
      const p = findPreset(cand);
      if (p) { sources.model = { kind: 'preset', detail: `bundled preset ${p.name} (for "${ref}"; ${p.source})` }; notes.push(...p.notes); return withModelOverrides(p.model, facts, sources); }
    }
  }
  // A fine-tune named after its base keeps the base's architecture: tried only when no name matched exactly.
  for (const { ref } of refs) {
    for (const cand of basePrefixes(ref)) {
      const p = findPreset(cand);
      if (p) { sources.model = { kind: 'preset', detail: `bundled preset ${p.name}: "${ref}" is named after it, a fine-tune keeps its architecture (${p.source})` }; notes.push(...p.notes); return withModelOverrides(p.model, facts, sources); }
    }
  }
  return undefined;
}

/**
 * An inline model whose head is tied only by the engine's default (Megatron ties unless
 * --untie-embeddings-and-output-weights) while the bundled model of its exact shape has its own output layer (Llama,
 * Mistral, Qwen2.5-7B and larger): a checkpoint of that model does not load into the tied one, and the estimate
 * counts vocabulary × hidden parameters fewer than the released model has. Said, with the flag as its quick fix.
 */
function tiedUnlikeItsShape(m: ModelSpec, tie: Fact | undefined): Problem | undefined {
  if (!m.tiedEmbeddings || tie?.source.kind !== 'default' || tie.value !== true) return undefined;
  const same = sameShapePreset(m.layers, m.hiddenSize, m.heads, m.kvHeads, m.ffnSize, m.vocabSize);
  if (!same || same.model.tiedEmbeddings) return undefined;
  const head = (m.vocabSize * m.hiddenSize) / 1e9;
  return {
    code: TIED_UNLIKE_SHAPE, severity: 'info', paths: ['model.hiddenSize', 'model.tiedEmbeddings'],
    message: `This is ${same.name}'s shape, and ${same.name} has its own output layer; here the output layer shares the input embedding `
      + `(${tie.source.detail}), so the estimate counts ${head.toFixed(2)} B parameters fewer than ${same.name} has and a ${same.name} checkpoint does not load into this model. `
      + 'Untie them to train it as released.',
  };
}

/** The code of tiedUnlikeItsShape's note (its quick fix adds the flag that unties the head). */
export const TIED_UNLIKE_SHAPE = 'tied-head-untied-shape';

/**
 * The base models a fine-tune's name starts with, longest first: each prefix of its dash-separated parts that ends in
 * a size ("Llama-3-8b" of "OpenRLHF/Llama-3-8b-sft-mixture", "Qwen3-4B" of "Qwen3-4B-Thinking-2507"). A size in the
 * middle of a name ("DeepSeek-R1-Distill-Qwen-1.5B") is not a prefix and finds nothing.
 */
function basePrefixes(ref: string): string[] {
  const parts = ref.replace(/^.*\//, '').split('-').slice(0, 12);
  const out: string[] = [];
  for (let n = parts.length - 1; n >= 2; n--) if (/^\d+(\.\d+)?[bm]$/i.test(parts[n - 1]!)) out.push(parts.slice(0, n).join('-'));
  return out;
}

/** Model sizes a file may override on the model it names (picotron's model block, a trainer's config overrides). */
const OVERRIDABLE = ['layers', 'hiddenSize', 'heads', 'kvHeads', 'headDim', 'ffnSize', 'vocabSize'] as const;

/**
 * A named model with the sizes the file states on top of it, as transformers' `AutoConfig.from_pretrained(name, **kw)`
 * applies them (and the head's tying where the reader says the engine's own model differs): each stated size replaces the model's; a head dimension that was hidden / heads follows new widths
 * (LlamaConfig computes head_dim from them unless the config states it).
 */
function withModelOverrides(m: ModelSpec, facts: Facts, sources: Partial<Record<PlanPath, InputSource>>): ModelSpec {
  const out: { -readonly [K in keyof ModelSpec]: ModelSpec[K] } = { ...m };
  let changed = false;
  for (const k of OVERRIDABLE) {
    const path = `model.${k}` as PlanPath;
    const f = facts[path];
    const v = num(facts, path);
    if (!f || f.source.kind !== 'explicit' || v === undefined || !(v > 0) || v === m[k]) continue;
    out[k] = v;
    sources[path] = f.source;
    changed = true;
  }
  // An engine that builds its own model may keep the head apart where the checkpoint ties it (LitGPT's GPT): a reader's
  // stated or derived tying replaces the named model's (a default does not).
  const tie = facts['model.tiedEmbeddings'];
  if (tie && (tie.source.kind === 'explicit' || tie.source.kind === 'derived') && typeof tie.value === 'boolean' && tie.value !== m.tiedEmbeddings) {
    out.tiedEmbeddings = tie.value;
    sources['model.tiedEmbeddings'] = tie.source;
    changed = true;
  }
  if (!changed) return m;
  const derivedHeadDim = m.headDim * m.heads === m.hiddenSize;
  if (derivedHeadDim && facts['model.headDim']?.source.kind !== 'explicit' && out.hiddenSize % out.heads === 0) out.headDim = out.hiddenSize / out.heads;
  return out;
}

/** Values a what-if puts in place of facts, by plan path; undefined removes the fact (the edited file no longer says it). */
export type FactOverrides = Readonly<Partial<Record<PlanPath, FactValue | undefined>>>;

/** Merged facts with a what-if's values in place (each keeps the key and range of the fact it replaces). */
function withOverrides(facts: Partial<Record<PlanPath, Fact>>, overrides: FactOverrides | undefined): Partial<Record<PlanPath, Fact>> {
  if (!overrides) return facts;
  const out = { ...facts };
  for (const [path, value] of Object.entries(overrides) as [PlanPath, FactValue | undefined][]) {
    const cur = facts[path];
    if (value === undefined) delete out[path];
    else out[path] = { ...cur, value, source: { ...cur?.source, kind: cur?.source.kind === 'default' ? 'default' : 'explicit', detail: `what if ${path} = ${String(value)}` } };
  }
  return out;
}

/**
 * A script in which the shell reader found no training command (formats/launch/unread.ts, `no-training-command`) and
 * from which, with every file it reads, no model, training, layout or cluster value came: a verdict there would rest on
 * nothing but assumed defaults (a data preprocessing script "does not fit"), so none is made.
 */
function runsNoTraining(primary: ConfigFacts, facts: Partial<Record<PlanPath, Fact>>): boolean {
  return primary.diagnostics.some((d) => d.code === 'no-training-command') && !givesPlanValue(facts, ['model', 'training', 'parallel', 'cluster']);
}

/**
 * Resolves facts into a Plan plus problems and assumptions. `overrides` replaces facts after merging (a what-if): the
 * plan is derived again from the changed facts, exactly as it would be from an edited file.
 */
export function resolvePlan(primary: ConfigFacts, related: readonly ConfigFacts[], ctx: ResolveContext = {}, overrides?: FactOverrides): ResolvedPlan {
  const problems: Problem[] = [];
  const assumptions: Assumption[] = [];
  try {
    return resolveInner(primary, related, ctx, problems, assumptions, overrides);
  } catch (e) {
    problems.push({ code: 'resolve-failed', severity: 'error', message: `ShardLens could not combine the inputs: ${String(e).slice(0, 200)}`, paths: [] });
    return { problems, assumptions, factsUsed: {} };
  }
}

function resolveInner(primary: ConfigFacts, related: readonly ConfigFacts[], ctx: ResolveContext, problems: Problem[], assumptions: Assumption[], overrides?: FactOverrides): ResolvedPlan {
  const facts = withOverrides(merge(primary, related, problems), overrides);
  if (runsNoTraining(primary, facts)) return { problems, assumptions, factsUsed: facts, noTraining: true };
  const g = new Gathered(facts, assumptions, problems, unresolvedSettings(primary));
  const S = ctx.settings ?? {};
  // Sequence length before the model (an inline model may default its positions to it).
  let seqLen = g.num('training.seqLen');
  const files = [primary, ...related];
  const invalid: string[] = [];
  const notes: Problem[] = [];
  let model = findModel(facts, files, ctx, g.sources, seqLen, invalid, notes);
  // A model a reader could only guess (a Megatron-Bridge override file's name) is an assumption the user can replace.
  const guessed = facts['model.preset'];
  if (model && guessed?.source.kind === 'assumed') g.assume('model', String(guessed.value), `${guessed.source.detail}: assumed ${String(guessed.value)}`, 'shardlens.model', 'shardlens.selectModel');
  const vocabGuess = g.sources['model.vocabSize'];
  if (model && vocabGuess?.kind === 'assumed' && !assumptions.some((a) => a.path === 'model.vocabSize')) assumptions.push({ path: 'model.vocabSize', value: String(model.vocabSize), detail: vocabGuess.detail });
  problems.push(...notes);
  const assumedModel = !model;
  for (const message of invalid) problems.push({ code: 'model-config-invalid', severity: 'error', paths: ['model'], message });
  if (!model && invalid.length) return { problems, assumptions, factsUsed: facts };
  if (!model) {
    const named = str(facts, 'model.preset') ?? files.flatMap((f) => f.references).find((r) => r.kind === 'model')?.target;
    const fallback = findPreset(ASSUMED_MODEL);
    problems.push({ code: 'model-unknown', severity: named ? 'warning' : 'info', paths: ['model'],
      message: named ? `Model "${named}" was not found (no config.json in the workspace and no bundled preset); the estimate uses ${fallback?.name ?? ASSUMED_MODEL} until you set shardlens.model or add its config.json.${closePresets(named)}`
        : `The file does not say which model is trained; the estimate uses ${fallback?.name ?? ASSUMED_MODEL} until you pick one (shardlens.model).` });
    if (!fallback) return { problems, assumptions, factsUsed: facts };
    model = fallback.model;
    g.assume('model', fallback.name, named ? `"${named}" is not bundled and has no config.json in the workspace: assumed ${fallback.name}` : `no model named by the file: assumed ${fallback.name}`, 'shardlens.model', 'shardlens.selectModel');
  }
  if (!seqLen && (S.seqLen ?? 0) > 0) { seqLen = S.seqLen!; g.sources['training.seqLen'] = fromSetting('shardlens.seqLen'); }
  if (!seqLen) {
    seqLen = Math.min(model.maxPositions || 2048, 2048);
    const atRun = runTimeNote(g.runTime, ['training.seqLen']);
    g.assume('training.seqLen', seqLen, `${atRun ?? 'no sequence length in the file'}: assumed ${seqLen} tokens`, 'shardlens.seqLen');
  }
  const derived = derivePlan(gatherInput(g, primary, model, seqLen, ctx));
  problems.push(...derived.problems);
  // The model's note that attention slides (or runs in chunks) says nothing about a run whose sequences fit in one
  // window: every query sees every earlier key either way. The config.json's own note, at its key, stays.
  const sw = derived.plan?.model.slidingWindow;
  if (sw && sw.window > 0 && derived.plan!.training.seqLen <= sw.window) {
    for (let i = problems.length - 1; i >= 0; i--) if (problems[i].code === SLIDING_WINDOW_CODE && notes.includes(problems[i])) problems.splice(i, 1);
  }
  // EP on a model nobody named: the assumed stand-in is dense, which says nothing about the file (ep-without-moe is
  // dropped for this one, shared/plan/problems.ts).
  const ep = derived.plan?.parallel.ep ?? 1;
  if (assumedModel && ep > 1 && !model.moe) {
    problems.push({ code: 'ep-assumed-dense-model', severity: 'info', paths: ['parallel.ep', 'model'],
      message: `EP ${ep} is set, but the model is not known and the assumed ${model.name} has no experts: name the model (shardlens.model or its config.json) to estimate its experts.` });
  }
  return { plan: derived.plan, problems, assumptions, factsUsed: facts };
}
