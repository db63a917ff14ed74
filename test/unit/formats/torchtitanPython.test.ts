/**
 * torchtitan's Python configurations (torchtitan ≥ 2026-02, pytorch/torchtitan#2386), read statically from the module a
 * launch names with `--module M --config F`. Expected values from torchtitan's source at b5bcd76c6:
 * - torchtitan/config/configs.py: TrainingConfig.num_tokens_per_microbatch_per_dp_rank (input-token slots per DP rank
 *   in one model forward), max_context_length (default 2048), num_tokens_per_train_step; ParallelismConfig degrees,
 *   num_pp_microbatches (per DP rank and accumulation step).
 * - torchtitan/trainer.py Trainer.Config: activation_checkpoint defaults to SelectiveAC.
 * - run_train.sh: `--module ${MODULE} --config ${CONFIG}`; README: a bare module is a model's config_registry.py, a
 *   dotted one (torchtitan_recipes.llama3) a module file.
 * The fixtures are written for these tests in torchtitan's style.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig, parsePythonConfig } from '../../../formats/index';
import { detectFormat } from '../../../formats/detect';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { PyModule } from '../../../formats/common/python/static';
import { torchtitanConfigFunctions, torchtitanModulePath } from '../../../formats/torchtitan/python';
import { memoryHost } from './helpers';

const RECIPES = `# Recipes for the H100 cluster.
from torchtitan.components.optimizer import default_adamw
from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig
from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC
from torchtitan.components.quantization import Float8LinearConverter
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer

SEQ = 8192


def llama3_8b_fsdp8() -> Trainer.Config:
    """Llama 3 8B on one node: FSDP over 8 GPUs, two sequences per micro-batch."""
    model_spec = model_registry("8B", attn_backend="flex")
    return Trainer.Config(
        model_spec=model_spec,
        optimizer=default_adamw(lr=3e-4),
        training=TrainingConfig(
            num_tokens_per_microbatch_per_dp_rank=2 * SEQ,
            max_context_length=SEQ,
            steps=1_000,
        ),
        parallelism=ParallelismConfig(
            data_parallel_shard_degree=-1,
            tensor_parallel_degree=1,
        ),
        compile=CompileConfig(enable=True, components=["model", "loss"]),
    )


def llama3_70b_tp8_pp4() -> Trainer.Config:
    config = llama3_8b_fsdp8()
    config.model_spec = model_registry(
        "70B",
        converters=[Float8LinearConverter.Config(model_compile_enabled=True)],
    )
    config.parallelism.tensor_parallel_degree = 8
    config.parallelism.pipeline_parallel_degree = 4
    config.parallelism.num_pp_microbatches = 8
    config.training.num_tokens_per_microbatch_per_dp_rank = 8192
    config.activation_checkpoint = FullAC.Config()
    if config.compile.enable:
        config.training.steps = 10
    return config


def llama3_405b_tp8() -> Trainer.Config:
    compile_config = CompileConfig(enable=True, enable_async_tensor_parallel=True)
    model_spec = model_registry(
        "405B",
        converters=[
            Float8LinearConverter.Config(
                filter_fqns=["lm_head"],
                model_compile_enabled=(compile_config.enable and "model" in compile_config.components),
            ),
        ],
    )
    return Trainer.Config(
        loss=ChunkedLossWrapper.Config(loss_fn=CrossEntropyLoss.Config(global_vocab_size=decoder_vocab_size(model_spec))),
        hf_assets_path="./assets/hf/Llama-3.1-405B",
        model_spec=model_spec,
        training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=2 * 8192, max_context_length=8192, steps=3000),
        parallelism=ParallelismConfig(tensor_parallel_degree=8),
        activation_checkpoint=FullAC.Config(),
        compile=compile_config,
    )


def broken() -> Trainer.Config:
    return make_config(seq=SEQ)
`;

describe('torchtitan Python configurations', () => {
  before(async () => { await initFormats(); });

  test('module paths: a dotted module is a file, a bare one a model\'s config_registry.py', () => {
    assert.equal(torchtitanModulePath('torchtitan_recipes.llama3'), 'torchtitan_recipes/llama3.py');
    assert.equal(torchtitanModulePath('llama3'), 'torchtitan/models/llama3/config_registry.py');
  });

  test('a configuration read statically: the model, the micro batch in sequences, the degrees, compile; FSDP2', () => {
    const f = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'llama3_8b_fsdp8');
    const v = (p: string) => (f.facts as Record<string, { value: unknown } | undefined>)[p]?.value;
    assert.equal(f.format, 'torchtitan');
    assert.equal(v('model.preset'), 'llama3:8B');
    // 2 · 8192 tokens per micro-batch per DP rank at 8192-token contexts: 2 sequences.
    assert.equal(v('training.microBatch'), 2);
    assert.equal(v('training.seqLen'), 8192);
    assert.equal(v('parallel.tp'), 1);
    assert.equal(v('training.compile'), true);
    assert.equal(v('parallel.sharding.style'), 'fsdp2');
    assert.equal(v('training.steps'), 1000);
    // Located in the module, at the keyword.
    const tp = f.facts['parallel.tp'];
    const line = RECIPES.split('\n').findIndex((l) => l.includes('tensor_parallel_degree=1'));
    assert.equal(tp?.keyRange?.start.line, line);
  });

  test('a configuration derived from another: attribute assignments on a copy, FullAC, float8, PP micro-batches', () => {
    const f = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'llama3_70b_tp8_pp4');
    const v = (p: string) => (f.facts as Record<string, { value: unknown } | undefined>)[p]?.value;
    assert.equal(v('model.preset'), 'llama3:70B');
    assert.equal(v('parallel.tp'), 8);
    assert.equal(v('parallel.pp'), 4);
    // 8192 tokens at 8192-token contexts: 1 sequence per micro-batch, 8 micro-batches per step and DP rank.
    assert.equal(v('training.microBatch'), 1);
    assert.equal(v('training.deviceBatch') ?? 8, 8);
    assert.equal(v('training.recompute'), 'full');
    assert.equal(v('training.precision'), 'fp8-mixed');
    // The base configuration is not changed by the derived one's assignments.
    const base = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'llama3_8b_fsdp8');
    assert.equal((base.facts as Record<string, { value: unknown }>)['parallel.tp']?.value, 1);
    // The if-block is not followed, and says so.
    assert.ok(f.diagnostics.some((d) => d.code === 'torchtitan-python-branch'));
  });

  test('the shape of torchtitan\'s own 405B configuration: a compile variable, a conditional inside a converter, the loss wrapper', () => {
    const f = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'llama3_405b_tp8');
    const v = (p: string) => (f.facts as Record<string, { value: unknown } | undefined>)[p]?.value;
    assert.equal(v('model.preset'), 'llama3:405B');
    assert.equal(v('parallel.tp'), 8);
    assert.equal(v('parallel.tpCommOverlap'), true, 'CompileConfig.enable_async_tensor_parallel');
    assert.equal(v('training.compile'), true);
    assert.equal(v('training.precision'), 'fp8-mixed');
    assert.equal(v('training.recompute'), 'full');
    assert.equal(v('training.microBatch'), 2);
    // hf_assets_path names the folder of the model's config.json.
    assert.ok(f.references.some((r) => r.kind === 'model' && r.target === './assets/hf/Llama-3.1-405B/config.json'), JSON.stringify(f.references));
  });

  test('membership tests and conditionals inside a call\'s arguments do not end the call early', () => {
    const text = `def f() -> Trainer.Config:
    config = Trainer.Config(compile=CompileConfig(enable=True, components=["model"]))
    config.model_spec = model_registry("8B", converters=[Float8LinearConverter.Config(model_compile_enabled=config.compile.enable and "model" in config.compile.components)])
    return Trainer.Config(
        model_spec=config.model_spec,
        training=TrainingConfig(max_context_length=4096 if True else 2048, num_tokens_per_microbatch_per_dp_rank=4096),
        parallelism=ParallelismConfig(tensor_parallel_degree=4, pipeline_parallel_schedule=pick(a[0], *rest)),
    )
`;
    const f = parsePythonConfig('/ws/torchtitan/models/llama3/config_registry.py', text, 'f');
    const v = (p: string) => (f.facts as Record<string, { value: unknown } | undefined>)[p]?.value;
    assert.equal(v('model.preset'), 'llama3:8B');
    assert.equal(v('training.precision'), 'fp8-mixed');
    assert.equal(v('parallel.tp'), 4, 'the keyword after an unreadable one is still read');
    // A conditional context length is not guessed, nor the micro batch in sequences of it: both stay torchtitan's
    // defaults (seq_len 2048, local batch 8), and the info says why.
    assert.equal(v('training.seqLen'), 2048);
    assert.equal(f.facts['training.seqLen']?.source.kind, 'default');
    assert.equal(v('training.microBatch'), 8);
    assert.equal(f.facts['training.microBatch']?.source.kind, 'default');
    assert.ok(f.diagnostics.some((d) => d.code === 'torchtitan-python-unread' && /max_context_length \(a conditional expression\)/.test(d.message)), JSON.stringify(f.diagnostics));
  });

  test('what cannot be read statically is said, never guessed', () => {
    const f = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'broken');
    assert.ok(f.diagnostics.some((d) => d.code === 'torchtitan-python-config' && /make_config/.test(d.message)), JSON.stringify(f.diagnostics));
    const missing = parsePythonConfig('/ws/torchtitan_recipes/h100.py', RECIPES, 'llama3_405b');
    assert.ok(missing.diagnostics.some((d) => /No function "llama3_405b"/.test(d.message) && /llama3_8b_fsdp8/.test(d.message)));
    // Hostile text: unbalanced brackets, a huge file, recursion.
    assert.doesNotThrow(() => new PyModule('def f() -> X:\n    return Trainer.Config(training=TrainingConfig(((((\n'));
    const loop = 'def a():\n    return b()\n\ndef b():\n    return a()\n';
    assert.equal(new PyModule(loop).returnOf('a')?.t, 'unknown');
    assert.equal(new PyModule('x'.repeat(600_000)).functions.size, 0);
    // Nesting deeper than any stack: a diagnostic, not a crash.
    const deep = parsePythonConfig('/ws/deep.py', `def f():\n    return Trainer.Config(x=${'('.repeat(50_000)}1${')'.repeat(50_000)})\n`, 'f');
    assert.ok(deep.diagnostics.some((d) => d.code === 'internal' && /could not finish/.test(d.message)), JSON.stringify(deep.diagnostics));
    assert.equal(Object.keys(deep.facts).length, 0, 'nothing half-read is reported as read');
  });

  test('a launch with --module/--config follows the module in the workspace', () => {
    const script = `#!/usr/bin/bash
NGPU=\${NGPU:-"32"}
MODULE=\${MODULE:-"torchtitan_recipes.h100"}
CONFIG=\${CONFIG:-"llama3_70b_tp8_pp4"}
torchrun --nproc_per_node=8 --nnodes=4 -m torchtitan.train --module \${MODULE} --config \${CONFIG} "$@"
`;
    const host = memoryHost({ '/ws/run_train.sh': script, '/ws/torchtitan_recipes/h100.py': RECIPES });
    const g = loadConfigGraph('/ws/run_train.sh', host, { settings: {} });
    const plan = g.resolved.plan;
    assert.ok(plan, JSON.stringify(g.resolved.problems));
    assert.equal(plan.parallel.tp, 8);
    assert.equal(plan.parallel.pp, 4);
    assert.equal(plan.parallel.dp, 1, '32 GPUs / (TP 8 · PP 4)');
    assert.equal(plan.training.recompute, 'full');
    assert.equal(plan.engine, 'fsdp2');
    assert.ok(/70B/i.test(plan.model.name), plan.model.name);
    assert.ok(g.dependencies.includes('/ws/torchtitan_recipes/h100.py'));
    // What the reading skipped in the module is said with the script's plan, at its place in the module.
    const branch = g.resolved.problems.find((p) => p.code === 'torchtitan-python-branch');
    const ifLine = RECIPES.split('\n').findIndex((l) => l.includes('if config.compile.enable')) + 1;
    assert.ok(branch && branch.message.startsWith(`h100.py:${ifLine} (llama3_70b_tp8_pp4): `), JSON.stringify(g.resolved.problems));
    // Without the module's file, the reference is said missing.
    const alone = loadConfigGraph('/ws/run_train.sh', memoryHost({ '/ws/run_train.sh': script }), { settings: {} });
    assert.ok(alone.resolved.problems.some((p) => p.code === 'reference-missing' && /torchtitan_recipes\/h100\.py/.test(p.message)), JSON.stringify(alone.resolved.problems));
  });
});

test('configurations that derive from each other many times over are read once each (no blow-up)', () => {
  // Ten levels, each building on the one below ten times: 10^10 evaluations without memoization.
  const lines: string[] = ['def f0() -> Trainer.Config:', '    return Trainer.Config(parallelism=ParallelismConfig(tensor_parallel_degree=2))', ''];
  for (let i = 1; i <= 10; i++) {
    lines.push(`def f${i}() -> Trainer.Config:`);
    for (let k = 0; k < 10; k++) lines.push(`    c${k} = f${i - 1}()`);
    lines.push('    return c9', '');
  }
  const started = process.hrtime.bigint();
  const f = parsePythonConfig('/ws/deep.py', lines.join('\n'), 'f10');
  assert.equal((f.facts as Record<string, { value: unknown }>)['parallel.tp']?.value, 2);
  // A bound, not a timing target: the reading must finish at all (without memoization it would not within hours).
  assert.ok(Number(process.hrtime.bigint() - started) / 1e9 < 30);
});

describe('a torchtitan configuration module opened on its own', () => {
  test('its configuration functions, in file order: derived ones included, helpers returning parts and other Config classes left out', () => {
    const names = torchtitanConfigFunctions(RECIPES).map((f) => f.name);
    assert.deepEqual(names.slice(0, 3), ['llama3_8b_fsdp8', 'llama3_70b_tp8_pp4', 'llama3_405b_tp8']);
    const parts = 'from torchtitan.trainer import Trainer\n\ndef par() -> ParallelismConfig:\n    return ParallelismConfig(tensor_parallel_degree=2)\n\n'
      + 'def conv():\n    return Float8LinearConverter.Config(model_compile_enabled=True)\n\n'
      + 'def run() -> Trainer.Config:\n    return Trainer.Config(parallelism=par())\n';
    assert.deepEqual(torchtitanConfigFunctions(parts).map((f) => f.name), ['run']);
    // The name's place, for the code lenses: "run" on line 9.
    const run = torchtitanConfigFunctions(parts)[0]!;
    assert.equal(parts.slice(run.at.start, run.at.end), 'run');
  });

  test('detected as torchtitan only when it holds a configuration; other Python is not a config', () => {
    assert.equal(detectFormat('/ws/torchtitan_recipes/llama3.py', RECIPES), 'torchtitan');
    assert.equal(detectFormat('/ws/train.py', 'import torch\n\ndef main():\n    parser.add_argument("--tensor-model-parallel-size")\n    return Config()\n'), undefined);
    assert.equal(detectFormat('/ws/models.py', 'class Config:\n    pass\n\ndef make():\n    return Llama3Model.Config(dim=4096)\n'), undefined);
  });

  // torchtitan b5bcd76c6 torchtitan/models/kimi_k2_7/config_registry.py: its functions return `_KimiTrainerConfig(...)`,
  // a class of the module derived from Trainer.Config, with the trainer's own fields.
  test('a trainer configuration built through a subclass of Trainer.Config of the module is a configuration', () => {
    const kimi = 'from torchtitan.trainer import Trainer\n\n'
      + 'def moonlight_16b_a3b() -> Trainer.Config:\n    model_spec = model_registry("moonlight-16B-A3B", attn_backend="flex")\n'
      + '    parallelism = ParallelismConfig(\n        expert_parallel_degree=8,\n    )\n'
      + '    return _KimiTrainerConfig(\n        model_spec=model_spec,\n'
      + '        training=TrainingConfig(\n            num_tokens_per_microbatch_per_dp_rank=4 * 4096,\n            max_context_length=4096,\n        ),\n'
      + '        parallelism=parallelism,\n        activation_checkpoint=FullAC.Config(),\n    )\n\n\n'
      + 'class _KimiTrainerConfig(Trainer.Config):\n    def __post_init__(self):\n        Trainer.Config.__post_init__(self)\n';
    assert.deepEqual(torchtitanConfigFunctions(kimi).map((f) => f.name), ['moonlight_16b_a3b']);
    assert.equal(detectFormat('/ws/torchtitan/models/kimi_k2_7/config_registry.py', kimi), 'torchtitan');
    const facts = parseConfig('/ws/torchtitan/models/kimi_k2_7/config_registry.py', kimi).facts as Record<string, { value: unknown }>;
    assert.equal(facts['parallel.ep']?.value, 8);
    assert.equal(facts['training.seqLen']?.value, 4096);
    // 4 × 4096 input-token slots per DP rank at 4,096 tokens per sequence: 4 sequences per micro-batch.
    assert.equal(facts['training.microBatch']?.value, 4);
    assert.equal(facts['training.recompute']?.value, 'full');
    // model_registry("moonlight-16B-A3B") of the kimi_k2_7 family is the bundled Moonlight-16B-A3B (27 layers, 64 experts).
    const g = loadConfigGraph('/ws/torchtitan/models/kimi_k2_7/config_registry.py', memoryHost({ '/ws/torchtitan/models/kimi_k2_7/config_registry.py': kimi }));
    assert.equal(g.resolved.plan?.model.layers, 27);
    assert.equal(g.resolved.plan?.model.moe?.experts, 64);
    // A class derived from something else that is not a Config is not a trainer's configuration.
    const other = kimi.replace('class _KimiTrainerConfig(Trainer.Config)', 'class _KimiTrainerConfig(object)');
    assert.deepEqual(torchtitanConfigFunctions(other).map((f) => f.name), []);
  });

  test('read as its first configuration unless one is named', () => {
    const first = parseConfig('/ws/torchtitan_recipes/llama3.py', RECIPES);
    const named = parseConfig('/ws/torchtitan_recipes/llama3.py', RECIPES, undefined, { symbol: 'llama3_70b_tp8_pp4' });
    const facts = (f: typeof first) => f.facts as Record<string, { value: unknown }>;
    assert.equal(first.format, 'torchtitan');
    assert.equal(facts(first)['parallel.tp']?.value, 1);
    assert.equal(facts(named)['parallel.tp']?.value, 8);
    assert.equal(facts(named)['parallel.pp']?.value, 4);
  });
});
