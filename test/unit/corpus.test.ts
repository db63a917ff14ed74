/**
 * Every real config file in ../shared/corpus (SOURCES.md lists origin and commit) is read without throwing,
 * detected as the format its folder and SOURCES.md say, and training configs resolve to a plan.
 * Expected formats come from SOURCES.md ("format" column / folder); 'other' files are either formats
 * ShardLens reads (torchtune, LitGPT, GPT-NeoX, OpenRLHF launch scripts, llm-foundry and OLMo YAML).
 */
import { describe, test, before } from 'node:test';
import type { PlanPath } from '../../shared/plan/paths';
import type { InputSource } from '../../shared/plan/types';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FormatId } from '../../shared/plan/facts';
import { detectFormat, initFormats, parseConfig } from '../../formats/index';
import { loadConfigGraph } from '../../server/formats/workspace';
import { CORPUS as FOUND, corpusFiles, corpusPresent, corpusSkip } from '../support/corpus';

const CORPUS = FOUND ?? '/nonexistent/corpus';

/** Folder → expected format, with per-file exceptions (by a fragment of the saved name). */
const BY_FOLDER: Record<string, FormatId | undefined> = {
  deepspeed: 'deepspeed', accelerate: 'accelerate', axolotl: 'axolotl', llamafactory: 'llamafactory', nanotron: 'nanotron', torchtitan: 'torchtitan', 'hf-config': 'hf-config',
};
const EXCEPTIONS: [string, FormatId | undefined][] = [
  ['.sh', 'megatron-script'], ['.slurm', 'megatron-script'], ['megatron__', 'megatron-yaml'], ['gpt_config.yaml', 'megatron-yaml'], ['model_config.yaml', 'megatron-yaml'], ['Megatron-Bridge', 'megatron-yaml'],
  ['torchtune', 'torchtune'], ['litgpt', 'litgpt'], ['gpt-neox', 'gpt-neox'], ['llm-foundry', 'llm-foundry'], ['OLMo__configs', 'llm-foundry'],
];

function expected(folder: string, name: string): FormatId | undefined {
  if (folder === 'megatron' || folder === 'other') {
    for (const [frag, f] of EXCEPTIONS) if (name.includes(frag)) return f;
    return undefined;
  }
  return BY_FOLDER[folder];
}

/** Files that are models or not trainable configs: no plan expected. */
const NO_PLAN = ['clip-vit', 'bert-large', 't5-v1_1', 'config_mamba', 'test-olmo-model'];

const host = {
  readFile: (p: string) => { try { return readFileSync(p, 'utf8'); } catch { return undefined; } },
  exists: existsSync,
  listDir: (p: string) => { try { return statSync(p).isDirectory() ? readdirSync(p) : undefined; } catch { return undefined; } },
  root: CORPUS,
};

describe('real config corpus', { skip: corpusSkip }, () => {
  test('the corpus is there', () => { corpusPresent(); });
  before(async () => { await initFormats(); });
  const folders = existsSync(CORPUS) ? readdirSync(CORPUS).filter((d) => statSync(join(CORPUS, d)).isDirectory()) : [];
  for (const folder of folders) {
    for (const name of readdirSync(join(CORPUS, folder))) {
      const path = join(CORPUS, folder, name);
      test(`${folder}/${name}`, () => {
        const text = readFileSync(path, 'utf8');
        const want = expected(folder, name);
        assert.equal(detectFormat(path, text), want, 'detected format');
        if (!want) return;
        const facts = parseConfig(path, text, want);
        assert.equal(facts.format, want);
        for (const d of facts.diagnostics) assert.ok(d.range.start.line >= 0 && d.range.end.line >= d.range.start.line, `diagnostic range ${d.code}`);
        if (want === 'hf-config' || NO_PLAN.some((n) => name.includes(n))) return;
        const g = loadConfigGraph(path, host);
        const plan = g.resolved.plan;
        assert.ok(plan, `plan for ${name}: ${g.resolved.problems.map((p) => p.message).join('; ')}`);
        for (const v of [plan.training.microBatch, plan.training.globalBatch, plan.training.gradAccum, plan.training.seqLen, plan.parallel.dp, plan.parallel.tp, plan.parallel.pp]) {
          assert.ok(Number.isInteger(v) && v >= 1, `positive integer, got ${v}`);
        }
        // A setting or a command changes it, or the detail says what to write: a value for "auto", the file a
        // framework's bundled DeepSpeed values stand in for, the vocabulary size a tokenizer would have given, or the
        // override field that states a Megatron-Bridge recipe's value.
        for (const a of g.resolved.assumptions) assert.ok(a.detail.length > 0 && (a.setting || a.command || /"auto"|add the file to use its own values|write --vocab-size|write [a-z_]+(\.[a-z_]+)*=/.test(a.detail)), `assumption ${a.path} says how to change it`);
        const assumed = new Set(g.resolved.assumptions.map((a) => a.path));
        for (const [p, src] of Object.entries(plan.sources) as [PlanPath, InputSource][]) if (src.kind === 'assumed') assert.ok(assumed.has(p), `assumed ${p} is listed`);
      });
    }
  }
});

/** Decisive values per file, read from the corpus files themselves (the corpus SOURCES.md says where each comes from). */
const VALUES: [string, Record<string, unknown>][] = [
  ['train_llama3_8b_h100_fp8.sh', { 'parallel.tp': 1, 'training.microBatch': 1, 'training.globalBatch': 128, 'training.seqLen': 8192, 'model.layers': 32, 'model.hiddenSize': 4096, 'model.ffnSize': 14336, 'model.kvHeads': 8, 'training.precision': 'fp8-mixed', 'parallel.sharding.style': 'megatron-distopt', 'cluster.worldSize': 8 }],
  ['train_mixtral_8x7b_distributed.sh', { 'parallel.pp': 4, 'parallel.ep': 8, 'model.moe.experts': 8, 'model.moe.topK': 2, 'training.globalBatch': 256, 'training.precision': 'bf16-mixed' }],
  ['pretrain_gpt3_175B.sh', { 'parallel.tp': 8, 'parallel.pp': 16, 'model.layers': 96, 'model.hiddenSize': 12288, 'training.precision': 'fp16-mixed', 'training.recompute': 'full' }],
  ['gpt_config.yaml', { 'model.layers': 24, 'model.hiddenSize': 1024, 'model.heads': 16, 'training.microBatch': 2, 'training.globalBatch': 128, 'model.tiedEmbeddings': false }],
  ['llama3_8b_pretrain_override_example.yaml', { 'parallel.tp': 2, 'parallel.pp': 2, 'training.globalBatch': 256, 'training.microBatch': 4 }],
  ['torchtitan__models__llama3__train_configs__llama3_8b.toml', { 'model.preset': 'llama3:8B', 'training.microBatch': 1, 'training.seqLen': 8192, 'training.recompute': 'selective' }],
  ['torchtitan__models__llama3__train_configs__llama3_405b.toml', { 'parallel.tp': 8, 'parallel.tpCommOverlap': true, 'training.recompute': 'full', 'training.precision': 'fp8-mixed' }],
  ['pytorch__torchtitan__train_configs__llama3_70b.toml', { 'training.microBatch': 8, 'parallel.tp': 8, 'training.recompute': 'full' }],
  ['tp_hsdp.yaml', { 'cluster.worldSize': 8, 'parallel.tp': 2, 'parallel.sharding.shardGroupSize': 2, 'parallel.dp': 4, 'parallel.sharding.style': 'fsdp2' }],
  ['configs__cp.yaml', { 'parallel.cp': 8, 'training.recompute': 'full' }],
  ['fsdp_config_offload.yaml', { 'parallel.sharding.offloadParams': 'cpu', 'parallel.sharding.stage': 3, 'cluster.worldSize': 2 }],
  ['config_tiny_llama.yaml', { 'parallel.dp': 4, 'parallel.tp': 2, 'parallel.sp': true, 'training.microBatch': 3, 'training.seqLen': 4096, 'model.hiddenSize': 2048, 'model.kvHeads': 2, 'model.tiedEmbeddings': true }],
  ['config_llamoe.yaml', { 'parallel.ep': 2, 'model.moe.experts': 4, 'model.moe.topK': 1, 'training.microBatch': 256, 'training.gradAccum': 2 }],
  ['llama-3_1-8b-hsdp-tp.yaml', { 'parallel.sharding.shardGroupSize': 4, 'parallel.dpReplicate': 2, 'parallel.tp': 2, 'training.seqLen': 2048 }],
  ['qlora-fsdp-70b.yaml', { 'lora.rank': 8, 'lora.baseDtype': 'nf4', 'parallel.sharding.offloadParams': 'cpu', 'training.gradAccum': 4 }],
  ['qwen3_moe_full.yaml', { 'parallel.pp': 4, 'parallel.ep': 2, 'training.recompute': 'full', 'training.gradAccum': 8 }],
  ['ds_z2_autotp_config.json', { 'parallel.tp': 2, 'parallel.sharding.stage': 2 }],
  ['ds_z3_fp8_config.json', { 'parallel.sharding.reduceBucketElems': 12845056, 'parallel.sharding.prefetchBucketElems': 11560550, 'parallel.sharding.offloadOptimizer': 'cpu' }],
  ['zero3_bf16_cpuoffload_all.json', { 'parallel.sharding.maxLiveParams': 0, 'parallel.sharding.offloadParams': 'cpu', 'training.precision': 'bf16-mixed' }],
  ['litgpt__config_hub__finetune__llama-3.1-8b__full.yaml', { 'training.globalBatch': 64, 'training.microBatch': 4, 'training.precision': 'bf16' }],
  ['70B_full_multinode.yaml', { 'parallel.tp': 8 }],
];

describe('corpus values', { skip: corpusSkip }, () => {
  before(async () => { await initFormats(); });
  for (const [frag, want] of VALUES) {
    test(frag, () => {
      const folder = readdirSync(CORPUS).find((d) => statSync(join(CORPUS, d)).isDirectory() && readdirSync(join(CORPUS, d)).some((n) => n.includes(frag) && !n.includes('@')));
      assert.ok(folder, `file ${frag} in corpus`);
      const name = readdirSync(join(CORPUS, folder)).find((n) => n.includes(frag) && !n.includes('@'))!;
      const path = join(CORPUS, folder, name);
      const facts = parseConfig(path, readFileSync(path, 'utf8')).facts;
      for (const [k, v] of Object.entries(want) as [PlanPath, unknown][]) assert.deepEqual(facts[k]?.value, v, `${k}`);
    });
  }
  // Values the file implies rather than states, derived when the plan is resolved.
  test('LitGPT: accumulation = global 64 / (4 devices × micro 4) = 4', () => {
    const [, , path] = corpusFiles().find(([, n]) => n.includes('litgpt__config_hub__finetune__llama-3.1-8b__full.yaml'))!;
    assert.equal(loadConfigGraph(path, host).resolved.plan?.training.gradAccum, 4);
  });
});
