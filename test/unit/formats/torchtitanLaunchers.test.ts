/**
 * A torchtitan job configuration opened on its own (a TOML, or a function of a Python module) does not say how many
 * GPUs run it; the launch script that names it does (torchtitan's run_train.sh: NGPU → torchrun --nproc_per_node; a
 * Slurm script: --nnodes × --nproc_per_node). The estimate takes the cluster from the nearest such script, and only
 * the cluster: what the configuration file says stays what it says.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { mentionedConfigNames } from '../../../server/io/referenceIndex';
import { memoryHost } from './helpers';

const TOML = '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 1\n';
// torchtitan's run_train.sh, abridged: NGPU (default 8) GPUs of one node.
const RUN_TRAIN = (ngpu: string, config = './train_configs/llama3_8b.toml') => `#!/usr/bin/bash
NGPU=\${NGPU:-"${ngpu}"}
CONFIG_FILE=\${CONFIG_FILE:-"${config}"}
torchrun --nproc_per_node=\${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" -m torchtitan.train --job.config_file \${CONFIG_FILE} "$@"
`;
const SLURM = (nodes: number, extra = '') => `#!/bin/bash
#SBATCH --nodes=${nodes}
srun torchrun --nnodes ${nodes} --nproc_per_node 8 -m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml ${extra}
`;
const MODULE = `from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer


def llama3_8b() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        training=TrainingConfig(local_batch_size=1, seq_len=8192),
        parallelism=ParallelismConfig(data_parallel_shard_degree=-1),
    )


def llama3_8b_tp2() -> Trainer.Config:
    config = llama3_8b()
    config.parallelism.tensor_parallel_degree = 2
    return config
`;

const cluster = (files: Record<string, string>, target: string, symbol?: string) => {
  const g = loadConfigGraph(target, memoryHost(files), {}, symbol);
  const plan = g.resolved.plan;
  assert.ok(plan, JSON.stringify(g.resolved.problems));
  return { plan, g, world: plan.cluster.gpusPerNode * plan.cluster.nodes, info: g.resolved.problems.filter((p) => p.code === 'launchers-disagree') };
};

before(() => initFormats());

describe('the launch script of a torchtitan configuration', () => {
  test('alone, the TOML is assumed to run on one node of 8; with run_train.sh at NGPU 4 it runs on 4, said to come from the script', () => {
    const alone = cluster({ '/ws/train_configs/llama3_8b.toml': TOML }, '/ws/train_configs/llama3_8b.toml');
    assert.equal(alone.world, 8);
    assert.equal(alone.plan.sources['cluster.worldSize']?.kind, 'assumed');
    const r = cluster({ '/ws/train_configs/llama3_8b.toml': TOML, '/ws/run_train.sh': RUN_TRAIN('4') }, '/ws/train_configs/llama3_8b.toml');
    assert.equal(r.world, 4);
    // data_parallel_shard_degree = -1 fills the world: FSDP over the script's 4 GPUs.
    assert.equal(r.plan.parallel.dp, 4);
    assert.match(r.plan.sources['cluster.gpusPerNode']?.detail ?? '', /run_train\.sh/);
    assert.deepEqual(r.info, []);
  });

  test('a Slurm script over 4 nodes of 8: 32 GPUs; the script\'s own overrides of the TOML are not taken in the TOML\'s view', () => {
    const r = cluster({
      '/ws/train_configs/llama3_8b.toml': TOML,
      '/ws/slurm/llama3_8b.slurm': SLURM(4, '--parallelism.tensor_parallel_degree 4'),
    }, '/ws/train_configs/llama3_8b.toml');
    assert.equal(r.world, 32);
    assert.equal(r.plan.parallel.tp, 1);
    assert.equal(r.plan.parallel.dp, 32);
  });

  test('scripts that disagree: the nearest one counts (the configuration\'s folder first), and the others are named', () => {
    const r = cluster({
      '/ws/train_configs/llama3_8b.toml': TOML,
      '/ws/train_configs/run_local.sh': RUN_TRAIN('2', './llama3_8b.toml'),
      '/ws/slurm/llama3_8b.slurm': SLURM(4),
    }, '/ws/train_configs/llama3_8b.toml');
    assert.equal(r.world, 2);
    assert.equal(r.info.length, 1);
    assert.match(r.info[0]!.message, /run_local\.sh runs this configuration on 2 GPUs, which the estimate uses; llama3_8b\.slurm on 32 GPUs/);
  });

  test('a script that launches another configuration, or names this one only in a comment, does not count', () => {
    const r = cluster({
      '/ws/train_configs/llama3_8b.toml': TOML,
      '/ws/train_configs/llama3_70b.toml': TOML.replace('8B', '70B'),
      '/ws/run_70b.sh': RUN_TRAIN('16', './train_configs/llama3_70b.toml').replace('torchrun', '# also llama3_8b.toml works\ntorchrun'),
    }, '/ws/train_configs/llama3_8b.toml');
    assert.equal(r.world, 8);
    assert.equal(r.plan.sources['cluster.worldSize']?.kind, 'assumed');
  });

  test('a function of a Python module takes the cluster of the script that runs that function, not another\'s', () => {
    const files = {
      '/ws/recipes/llama3.py': MODULE,
      '/ws/tp2.sh': 'torchrun --nnodes 2 --nproc_per_node 8 -m torchtitan.train --module recipes.llama3 --config llama3_8b_tp2\n',
    };
    const tp2 = cluster(files, '/ws/recipes/llama3.py', 'llama3_8b_tp2');
    assert.equal(tp2.world, 16);
    assert.equal(tp2.plan.parallel.tp, 2);
    assert.equal(tp2.plan.parallel.dp, 8);
    const first = cluster(files, '/ws/recipes/llama3.py', 'llama3_8b');
    assert.equal(first.world, 8);
    assert.equal(first.plan.sources['cluster.worldSize']?.kind, 'assumed');
    // Without a name, the module's first function is the one analysed (and the script runs the second).
    assert.equal(cluster(files, '/ws/recipes/llama3.py').world, 8);
  });
});

describe('the reference index\'s names', () => {
  test('DeepSpeed JSONs, torchtitan TOMLs, and the file of a --module or MODULE= Python module', () => {
    assert.deepEqual(mentionedConfigNames('deepspeed --deepspeed ds_config.json --job.config_file "configs/my_run.toml"').sort(), ['ds_config.json', 'my_run.toml']);
    assert.deepEqual(mentionedConfigNames('python -m torchtitan.train --module torchtitan.experiments.recipes.llama3 --config f'), ['llama3.py']);
    assert.deepEqual(mentionedConfigNames('MODULE=${MODULE:-"torchtitan_recipes.qwen3"}\n'), ['qwen3.py']);
    assert.deepEqual(mentionedConfigNames('--module=llama4 --config x'), ['llama4.py']);
    // Neither a TOML key nor a Python import is a name of a file.
    assert.deepEqual(mentionedConfigNames('[model]\nname = "llama3"\nimport torchtitan.models\n'), []);
  });
});
