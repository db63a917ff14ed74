/**
 * Hydra `key.path=value` overrides on a launch line (verl's `python -m verl.trainer.main_ppo a.b=c …`), read with
 * the key table data/formats/dialects/verl.json. `+key=` / `++key=` add or force a key; quotes around values are
 * dropped. The actor's FSDP or Megatron settings are the training layout; the rollout engine's TP is not.
 */
import verl from './keys.json';
import { applyTable, type DialectTable, type Found } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import type { SourceMap } from '../common/shell/commandLine';
import { unresolved, type SV } from '../common/shell/sval';
import { recomputeModulesFromText } from '../megatron/recomputeModules';

const TABLE = verl as DialectTable;
const OVERRIDE = /^\+{0,2}([A-Za-z_][\w.]*)=(.*)$/s;

/** The overrides among `words`, by key (a later override wins). */
export function overrides(words: readonly SV[], map: SourceMap): Map<string, Found> {
  const out = new Map<string, Found>();
  for (const w of words) {
    const m = OVERRIDE.exec(w.t);
    if (!m) continue;
    const eq = w.t.indexOf('=');
    const key = m[1]!;
    const kw: SV = { t: w.t.slice(0, eq), o: w.o.slice(0, eq), e: w.e.slice(0, eq), s: [], u: [] };
    const vw: SV = { t: w.t.slice(eq + 1), o: w.o.slice(eq + 1), e: w.e.slice(eq + 1), s: [], u: w.u.slice(eq + 1) };
    const k = map.of(kw);
    out.set(key, { value: m[2]!.replace(/^['"]|['"]$/g, ''), keyRange: k.range, valueRange: map.of(vw).range, unresolved: unresolved(vw), uri: k.uri });
  }
  return out;
}

/** True when the words hold Hydra overrides (at least two `a.b=c` words). */
export function hasOverrides(words: readonly SV[]): boolean {
  return words.filter((w) => OVERRIDE.test(w.t) && w.t.split('=')[0]!.includes('.')).length >= 2;
}

type At = (k: string) => { key: string; keyRange?: Found['keyRange']; valueRange?: Found['valueRange']; uri?: string } | undefined;

/** verl's SFT trainer (verl/trainer/fsdp_sft_trainer.py, config sft_trainer.yaml): model.* and data.* at the top. */
function sft(found: Map<string, Found>, program: string): boolean {
  return /sft/.test(program) || found.has('model.partial_pretrain');
}

/**
 * The SFT trainer: data.train_batch_size is the global batch (fsdp_sft_trainer.py divides it by the data-parallel
 * size, then by micro_batch_size_per_gpu for the accumulation), model.strategy fsdp / fsdp2 shards fully,
 * model.enable_gradient_checkpointing recomputes each layer.
 */
function applySft(s: FactSink, found: Map<string, Found>, at: At): void {
  const gb = found.get('data.train_batch_size');
  const n = gb && !gb.unresolved ? Number(gb.value) : NaN;
  if (Number.isInteger(n) && n > 0) s.explicit('training.globalBatch', n, at('data.train_batch_size')!);
  const strategy = found.get('model.strategy');
  const style = strategy?.value === 'fsdp2' ? 'fsdp2' : 'fsdp';
  const why = 'verl SFT trainer: FSDP FULL_SHARD (verl/trainer/fsdp_sft_trainer.py)';
  if (strategy && /^fsdp2?$/.test(String(strategy.value))) { s.explicit('parallel.sharding.style', style, at('model.strategy')!); s.explicit('parallel.sharding.stage', 3, at('model.strategy')!); }
  else { s.derived('parallel.sharding.style', style, why); s.derived('parallel.sharding.stage', 3, why); }
  s.derived('engine', style === 'fsdp2' ? 'fsdp2' : 'fsdp1', why);
  const gc = found.get('model.enable_gradient_checkpointing');
  if (gc && !gc.unresolved && /^(true|false)$/i.test(String(gc.value))) s.explicit('training.recompute', /^true$/i.test(String(gc.value)) ? 'full' : 'none', at('model.enable_gradient_checkpointing')!);
  if (!s.has('parallel.tp')) s.default('parallel.tp', 1, 'verl SFT trainer: no tensor parallelism');
}

/**
 * Older verl (and its forks: TinyZero, simpleRL-reason) writes the actor's micro batch over all GPUs,
 * `actor.ppo_micro_batch_size`; each GPU runs ppo_micro_batch_size / (world / ulysses_sequence_parallel_size)
 * (verl/workers/fsdp_workers.py: `ppo_micro_batch_size //= device_mesh.size() // ulysses_sequence_parallel_size`).
 */
function legacyMicroBatch(s: FactSink, found: Map<string, Found>, at: At): void {
  const key = 'actor_rollout_ref.actor.ppo_micro_batch_size';
  const f = found.get(key);
  if (!f || f.unresolved || s.has('training.microBatch')) return;
  const total = Number(f.value);
  const world = (s.num('cluster.nodes') ?? NaN) * (s.num('cluster.gpusPerNode') ?? NaN);
  const sp = Number(found.get('actor_rollout_ref.actor.ulysses_sequence_parallel_size')?.value ?? 1);
  const per = total / (world / sp);
  if (!Number.isInteger(per) || per < 1) return;
  s.derived('training.microBatch', per, `verl: actor.ppo_micro_batch_size ${total} over ${world / sp} data-parallel ranks (fsdp_workers.py)`, at(key));
}

/** Reads verl overrides into facts; `program` and `configName` tell the FSDP and Megatron workers apart. */
export function applyHydra(s: FactSink, found: Map<string, Found>, program: string, configName: string | undefined): void {
  applyTable(s, TABLE, (k) => found.get(k));
  const megatron = [...found.keys()].some((k) => k.startsWith('actor_rollout_ref.actor.megatron.')) || /megatron/.test(configName ?? '');
  const fsdp = [...found.keys()].some((k) => k.startsWith('actor_rollout_ref.actor.fsdp_config.')) || /fsdp/.test(program);
  const strategy = found.get('actor_rollout_ref.actor.strategy');
  const at: At = (k) => { const f = found.get(k); return f ? { key: k, keyRange: f.keyRange, valueRange: f.valueRange, uri: f.uri } : undefined; };
  if (sft(found, program)) { applySft(s, found, at); return; }
  legacyMicroBatch(s, found, at);
  if (megatron) {
    s.derived('engine', 'megatron', 'verl Megatron actor (actor_rollout_ref.actor.megatron.*)');
    const modules = 'actor_rollout_ref.actor.megatron.override_transformer_config.recompute_modules';
    const mods = found.get(modules);
    if (mods && typeof mods.value === 'string' && !mods.unresolved) recomputeModulesFromText(s, mods.value, at(modules)!, mods.valueRange, modules);
  } else {
    const key = strategy ? 'actor_rollout_ref.actor.strategy' : [...found.keys()].find((k) => k.startsWith('actor_rollout_ref.actor.fsdp_config.'));
    const loc = key ? at(key) : undefined;
    const style = s.value('parallel.sharding.style') === 'fsdp2' ? 'fsdp2' : 'fsdp';
    const why = `verl FSDP actor: FULL_SHARD over the data-parallel ranks (verl/workers/fsdp_workers.py)`;
    if (loc) { s.explicit('parallel.sharding.style', style, loc); s.explicit('parallel.sharding.stage', 3, loc); }
    else if (fsdp) { s.derived('parallel.sharding.style', style, why); s.derived('parallel.sharding.stage', 3, why); }
    else {
      // Nothing on the line names the actor's strategy: the default config (ppo_trainer.yaml, actor/dp_actor.yaml) is FSDP.
      s.default('parallel.sharding.style', style, `verl default actor strategy fsdp (verl/trainer/config/actor/dp_actor.yaml); ${why}`);
      s.default('parallel.sharding.stage', 3, `verl default actor strategy fsdp (verl/trainer/config/actor/dp_actor.yaml); ${why}`);
    }
    s.derived('engine', style === 'fsdp2' ? 'fsdp2' : 'fsdp1', why);
    // fsdp_size below the world size builds a (ddp, fsdp) mesh: HYBRID_SHARD (verl/workers/fsdp_workers.py, create_device_mesh).
    const size = found.get('actor_rollout_ref.actor.fsdp_config.fsdp_size');
    const n = size && !size.unresolved ? Number(size.value) : NaN;
    const world = (s.num('cluster.nodes') ?? 1) * (s.num('cluster.gpusPerNode') ?? NaN);
    if (Number.isInteger(n) && n > 0 && n < world) {
      const l = at('actor_rollout_ref.actor.fsdp_config.fsdp_size')!;
      s.explicit('parallel.sharding.fsdpStrategy', 'HYBRID_SHARD', l);
      s.explicit('parallel.sharding.shardGroupSize', n, l);
    }
    // An FSDP actor has no tensor parallelism; the rollout TP next to it is generation only.
    if (!s.has('parallel.tp')) s.default('parallel.tp', 1, 'verl FSDP actor: no tensor parallelism (rollout.tensor_model_parallel_size is the generation engine)');
  }
}
