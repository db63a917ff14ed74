/** `shardlens params <preset|config.json>` and `shardlens gpus`: catalog look-ups. */
import { existsSync } from 'node:fs';
import { readTextFile } from '../../server/io/read';
import { listGpus } from '../../shared/hardware/gpus';
import { countParams } from '../../shared/model/params';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { findPreset, listPresets, presetKey } from '../../shared/model/presets';
import type { ModelSpec } from '../../shared/plan/types';
import type { ParsedArgs } from '../args';
import { InputError } from '../load';

/** Resolves a preset name or a config.json path (or a folder holding one) to a model. */
function modelOf(ref: string): ModelSpec {
  const file = existsSync(ref) && !ref.endsWith('.json') ? `${ref.replace(/\/$/, '')}/config.json` : ref;
  if (existsSync(file)) {
    // The user named this file: it is read wherever it is, but only as a bounded regular file.
    const read = readTextFile(file);
    if (!read.ok) throw new InputError(read.detail);
    let obj: unknown;
    try {
      obj = JSON.parse(read.text);
    } catch (err) {
      throw new InputError(`${file}: not valid JSON (${(err as Error).message})`);
    }
    const res = modelFromHfConfig(obj, file.replace(/\/config\.json$/, '').replace(/^.*\//, ''));
    if (!res.model) throw new InputError(`${file}: ${res.problems.map((p) => p.message).join('; ') || 'not a Hugging Face model config'}`);
    return res.model;
  }
  const p = findPreset(ref);
  if (!p) {
    const k = presetKey(ref);
    const near = listPresets().filter((x) => presetKey(x.name).includes(k.slice(0, 5))).slice(0, 5).map((x) => x.name);
    throw new InputError(`unknown model "${ref}": not a file and not a bundled preset.${near.length ? ` Did you mean ${near.join(', ')}?` : ''} Presets: shardlens params --list`);
  }
  return p.model;
}

const int = (n: number) => n.toLocaleString('en-US');

export function paramsCommand(args: ParsedArgs): number {
  if (args.flags.list) {
    for (const p of listPresets()) console.log(`${p.name.padEnd(28)} ${p.source}`);
    return 0;
  }
  const ref = args.positionals[0];
  if (!ref) throw new InputError('usage: shardlens params <preset | config.json> [--json] (presets: shardlens params --list)');
  const model = modelOf(ref);
  const c = countParams(model);
  // A count that is not a finite whole number comes from absurd sizes in the file: bad input, not an answer.
  const bad = Object.entries(c).find(([, v]) => typeof v === 'number' && !(Number.isSafeInteger(v) && v >= 0));
  if (bad) throw new InputError(`${ref}: the model's sizes give ${bad[0]} = ${String(bad[1])}; check hidden_size, num_hidden_layers, vocab_size and the other dimensions`);
  if (args.flags.json) {
    console.log(JSON.stringify({ model: model.name, ...c }, null, 2));
    return 0;
  }
  console.log(`${model.name}`);
  console.log(`  total parameters      ${int(c.parameters)}`);
  console.log(`  trainable             ${int(c.trainableParameters)}`);
  if (model.moe) console.log(`  active per token      ${int(c.activeParameters)}  (top-${model.moe.topK} of ${model.moe.experts} experts${model.moe.sharedExperts ? ` + ${model.moe.sharedExperts} shared` : ''})`);
  console.log(`  embedding             ${int(c.embedding)}${c.positions ? `  + positions ${int(c.positions)}` : ''}`);
  console.log(`  layers                ${model.layers} (${c.denseLayers} dense${c.moeLayers ? `, ${c.moeLayers} MoE` : ''})`);
  console.log(`  LM head               ${c.lmHead ? int(c.lmHead) : 'tied to the embedding'}`);
  if (c.mtp) console.log(`  MTP modules           ${int(c.mtp)}  (${model.mtpLayers}: a layer, a projection and three norms each)`);
  return 0;
}

export function gpusCommand(args: ParsedArgs): number {
  const gpus = listGpus();
  if (args.flags.json) {
    console.log(JSON.stringify(gpus, null, 2));
    return 0;
  }
  const t = (x: number | undefined) => (x ? `${Math.round(x / 1e12)}` : '—');
  // Columns are as wide as their longest entry, so long catalog names (the 500 W H100, GH200 144GB) stay aligned.
  const idWidth = Math.max(2, ...gpus.map((g) => g.id.length));
  const nameWidth = Math.max(4, ...gpus.map((g) => g.name.length));
  console.log(`${'id'.padEnd(idWidth)}  ${'name'.padEnd(nameWidth)} ${'memory'.padStart(8)} ${'bf16 TF/s'.padStart(9)} ${'fp8 TF/s'.padStart(9)} ${'HBM TB/s'.padStart(8)} ${'intra GB/s'.padStart(10)} ${'inter GB/s'.padStart(10)}`);
  for (const g of gpus) {
    console.log(`${g.id.padEnd(idWidth)}  ${g.name.padEnd(nameWidth)} ${`${Math.round(g.memoryBytes / 2 ** 30)} GiB`.padStart(8)} ${t(g.peakFlops.bf16 ?? g.peakFlops.fp16).padStart(9)} ${t(g.peakFlops.fp8).padStart(9)} ${(g.hbmBandwidth / 1e12).toFixed(2).padStart(8)} ${String(Math.round(g.intraNodeBandwidth / 1e9)).padStart(10)} ${String(Math.round(g.interNodeBandwidth / 1e9)).padStart(10)}`);
  }
  console.log('\nNames match forgivingly: A100-80GB, a100_80g, H100, h100-sxm5-80gb, mi300x …');
  return 0;
}
