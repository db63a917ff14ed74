/**
 * Published runs ShardLens is never fitted on (data/calibration/checks/): llm-foundry's MPT throughput tables, every
 * row written as the llm-foundry YAML its benchmark sweep wrote, and launch files of published rows from other
 * sources. Each is read through the CLI's own path and predicted with the shipped parameters, so the error is out of
 * sample by construction. Rows that data/calibration/measured-runs.json fits on are skipped.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import tables from '../../data/calibration/checks/llm-foundry-tables.json';
import checkCases from '../../data/calibration/checks/cases.json';
import { loadConfig } from '../../cli/load';
import type { Plan } from '../../shared/plan/types';
import { CASES } from './runs';

/** One row of llm-foundry's tables, named by its columns. */
export interface FoundryRow {
  readonly table: string;
  readonly gpu: string;
  readonly model: string;
  readonly seqLen: number;
  readonly gpus: number;
  readonly microBatch: number;
  readonly gradAccum: number;
  readonly globalBatch: number;
  readonly tokensPerSecondPerGpu: number;
  readonly precision: string;
  readonly mpMode: string;
  readonly sharding: string;
  readonly activationCheckpointing: boolean;
  readonly numParams: number;
}

/** A check row with its plan, or the reason the pipeline could not read it. */
export interface CheckRun {
  readonly id: string;
  readonly group: string;
  readonly seqLen: number;
  readonly measured: number;
  readonly plan?: Plan;
  readonly failure?: string;
}

/** `--gpus` names of the tables' GPU column. */
const GPU_FLAG: Readonly<Record<string, string>> = { H100: 'h100-sxm', 'A100-80GB': 'a100-80gb', 'A100-40GB': 'a100-40gb' };

/** Every row of the tables, as published. */
export function foundryRows(): FoundryRow[] {
  const cols = tables.columns;
  return tables.tables.flatMap((t) => t.rows.map((r) => {
    const o = Object.fromEntries(cols.map((c, i) => [c, r[i]])) as Record<string, unknown>;
    return { table: t.table, gpu: t.gpu, ...o } as FoundryRow;
  }));
}

/** A stable id for a row: table GPU, model, sequence length, GPU count, precision. */
export function foundryRowId(r: FoundryRow): string {
  return `mpt-${r.model}-s${r.seqLen}-${r.gpus}x${r.gpu.toLowerCase()}${r.precision === 'amp_fp8' ? '-fp8' : ''}`;
}

/** Whether the calibration set fits on this row (its H100 bf16 rows, source llm-foundry-mpt). */
function fitted(r: FoundryRow): boolean {
  if (r.gpu !== 'H100' || r.precision !== 'amp_bf16') return false;
  return CASES.some((c) => c.source === 'llm-foundry-mpt' && c.id === `mpt-${r.model}-s${r.seqLen}-${r.gpus}gpu`);
}

/**
 * The llm-foundry YAML of a row: scripts/train/yamls/pretrain/mpt-<size>.yaml's model block (d_model, n_heads,
 * n_layers of the table's `models`; expansion_ratio 4, vocab 50368, decoupled_adamw) with what
 * scripts/train/benchmarking/submit_benchmarks.py `mod_parameters` sets per run: max_seq_len (top level and model),
 * attn_config.attn_impl (the sweep's default, triton), norm_type low_precision_layernorm, global_train_batch_size,
 * device_train_microbatch_size, precision, fsdp_config mixed_precision, activation_checkpointing and
 * sharding_strategy; `fc_type: te` for FP8 on H100 (the same script).
 */
export function foundryYaml(r: FoundryRow): string {
  const m = (tables.models as Record<string, number[]>)[r.model];
  if (!m) throw new Error(`no model dimensions for ${r.model}`);
  const [d, heads, layers] = m;
  return [
    `# llm-foundry benchmark row: ${r.table}, MPT-${r.model}, seq ${r.seqLen}, ${r.gpus} GPUs (${tables.origin.repo} ${tables.origin.path}).`,
    `max_seq_len: ${r.seqLen}`,
    'model:',
    '  name: mpt_causal_lm',
    `  d_model: ${d}`,
    `  n_heads: ${heads}`,
    `  n_layers: ${layers}`,
    '  expansion_ratio: 4',
    `  max_seq_len: ${r.seqLen}`,
    '  vocab_size: 50368',
    '  norm_type: low_precision_layernorm',
    ...(r.precision === 'amp_fp8' ? ['  fc_type: te'] : []),
    '  attn_config:',
    '    attn_impl: triton',
    'optimizer:',
    '  name: decoupled_adamw',
    '  lr: 1.0e-4',
    `precision: ${r.precision}`,
    `global_train_batch_size: ${r.globalBatch}`,
    `device_train_microbatch_size: ${r.microBatch}`,
    'fsdp_config:',
    `  sharding_strategy: ${r.sharding}`,
    `  mixed_precision: ${r.mpMode}`,
    `  activation_checkpointing: ${r.activationCheckpointing}`,
    '  activation_cpu_offload: false',
    '',
  ].join('\n');
}

/** The launch files of data/calibration/checks/cases.json, resolved against that folder. */
interface CheckCase { readonly id: string; readonly source: string; readonly file: string; readonly gpus: string; readonly measured: number; readonly seqLen: number }
const CHECK_ROOT = resolve(__dirname, '../../data/calibration/checks');

/** Every check row read through the CLI's pipeline (llm-foundry rows from a temporary folder, removed afterwards). */
export async function loadCheckRuns(): Promise<CheckRun[]> {
  const out: CheckRun[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-checks-'));
  try {
    for (const r of foundryRows()) {
      if (fitted(r)) continue;
      const id = foundryRowId(r);
      const file = join(dir, `${id}.yaml`);
      writeFileSync(file, foundryYaml(r));
      out.push(await loadOne(id, `llm-foundry ${r.table}`, r.seqLen, r.tokensPerSecondPerGpu, file, `${r.gpus}x${GPU_FLAG[r.gpu]}`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const c of checkCases.cases as CheckCase[]) {
    out.push(await loadOne(c.id, c.source, c.seqLen, c.measured, resolve(CHECK_ROOT, c.file), c.gpus));
  }
  return out;
}

async function loadOne(id: string, group: string, seqLen: number, measured: number, file: string, gpus: string): Promise<CheckRun> {
  try {
    const loaded = await loadConfig(file, { gpus });
    const plan = loaded.resolved.plan;
    if (plan) return { id, group, seqLen, measured, plan };
    return { id, group, seqLen, measured, failure: loaded.resolved.problems.map((p) => p.message).join('; ') || 'no plan' };
  } catch (e) {
    return { id, group, seqLen, measured, failure: (e as Error).message };
  }
}
