/**
 * Shell structure of launch scripts, read as the script runs without arguments: decidable tests pick their branch,
 * sourced files and `cd` folders are followed, template placeholders do not break the parse, Slurm directives feed
 * `$SLURM_*`, and a script ShardLens cannot place says so at the top. Expected values are the ones bash would use
 * (bash(1): positional parameters of a script run without arguments are empty; `[ a == b ]` compares strings).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost, rangeOf } from '../formats/helpers';

const URI = 'file:///ws/run.sh';
const read = (text: string) => parseConfig(URI, text, 'megatron-script');
const value = (text: string, path: string) => (read(text).facts as Record<string, { value: unknown } | undefined>)[path]?.value;

describe('launch scripts: shell structure', () => {
  before(async () => { await initFormats(); });

  test('a default for an empty positional parameter is taken (DeepSpeed-Chat: ZERO_STAGE=$2)', () => {
    const text = 'ZERO_STAGE=$2\nif [ "$ZERO_STAGE" == "" ]; then\n    ZERO_STAGE=3\nfi\ndeepspeed main.py --zero_stage $ZERO_STAGE --per_device_train_batch_size 4 --deepspeed\n';
    const f = read(text).facts['parallel.sharding.stage'];
    assert.equal(f?.value, 3);
    // The position is the "3" the user wrote, where a rewriter changes it.
    assert.deepEqual(f?.source.range, rangeOf(text, '3', 0));
  });

  test('if/elif picks the arm whose string test holds, not the last one', () => {
    const text = 'MODEL_SIZE=1.7B\nif [ ${MODEL_SIZE} == "1.7B" ]; then\n  TP=1\nelif [ ${MODEL_SIZE} == "1T" ]; then\n  TP=8\nfi\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n';
    assert.equal(value(text, 'parallel.tp'), 1);
  });

  test('an undecidable test reads both branches in order (the later wins)', () => {
    const text = 'if [ -f /etc/cluster ]; then TP=2; else TP=4; fi\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n';
    assert.equal(value(text, 'parallel.tp'), 4);
  });

  test('numeric tests and case on an empty $1 (no arm runs)', () => {
    const text = 'PP=2\nif [[ $PP -gt 1 ]]; then MBS=1; else MBS=8; fi\ncase $1 in\n  big) MBS=16 ;;\nesac\ntorchrun pretrain_gpt.py --micro-batch-size $MBS --pipeline-model-parallel-size $PP\n';
    assert.equal(value(text, 'training.microBatch'), 1);
  });

  test('a glob that would backtrack for long is left undecided (both arms read)', () => {
    const text = `X=${'a'.repeat(3000)}b\ncase $X in\n  *a*a*a*a*a*a*a*a*a*a*c) TP=2 ;;\n  *) TP=4 ;;\nesac\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n`;
    assert.equal(value(text, 'parallel.tp'), 4);
  });

  test('a for loop over layouts is read once with its first item; read -r A B <<< "$X" splits on IFS', () => {
    // bash(1): `for name in word …` binds name to each word in turn; `read` splits a here-string on IFS.
    const text = 'CONFIGS=("2,4" "8,1")\nfor C in "${CONFIGS[@]}"; do\n  IFS=\',\' read -r TP PP <<< "$C"\n  torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP --num-layers 2\ndone\n';
    assert.equal(value(text, 'parallel.tp'), 2);
    assert.equal(value(text, 'parallel.pp'), 4);
    // Without IFS, read splits on whitespace and the last name takes the rest of the line.
    const ws = 'read -r MBS REST <<< "4 5 6"\ntorchrun pretrain_gpt.py --micro-batch-size $MBS --num-layers 2\n';
    assert.equal(value(ws, 'training.microBatch'), 4);
    // A loop over nothing runs nothing.
    assert.equal(value('NONE=()\nfor x in "${NONE[@]}"; do torchrun pretrain_gpt.py --micro-batch-size 3; done\n', 'training.microBatch'), undefined);
  });

  test('$(echo "$ARGS" | tr \'\\n\' \' \' | sed \'s/  \\+/ /g\') is the echoed text; other pipelines stay unresolved', () => {
    const text = 'ARGS="--micro-batch-size 2\n --num-layers 4"\nCMD="torchrun pretrain_gpt.py $(echo "$ARGS" | tr \'\\n\' \' \' | sed \'s/  \\+/ /g\')"\n$CMD\n';
    assert.equal(value(text, 'training.microBatch'), 2);
    assert.equal(value(text, 'model.layers'), 4);
    const other = 'CMD="torchrun pretrain_gpt.py $(echo --micro-batch-size 2 | sed \'s/2/8/\')"\n$CMD\n';
    assert.equal(value(other, 'training.microBatch'), undefined);
  });

  test('export, ${VAR:-default}, arrays and $(expr …) arithmetic', () => {
    const text = 'export TP=${TP:-2}\nN=4\nARGS=(\n  --tensor-model-parallel-size $TP\n  # a comment inside the array\n  --micro-batch-size $(expr 16 / $N / 2)\n)\ntorchrun pretrain_gpt.py ${ARGS[@]}\n';
    assert.equal(value(text, 'parallel.tp'), 2);
    assert.equal(value(text, 'training.microBatch'), 2);
  });

  test('a sourced file is evaluated in place; its values keep their own file', () => {
    const files = {
      '/ws/models/m.sh': 'MODEL_ARGS=(--num-layers 36 --hidden-size 2560 --num-attention-heads 32)\n',
      '/ws/run.sh': 'SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"\nsource "${SCRIPT_DIR}/models/m.sh"\npython3 train.py ${MODEL_ARGS[@]} --tensor-model-parallel-size 2\n',
    };
    const g = loadConfigGraph('/ws/run.sh', memoryHost(files));
    const layers = g.primary.facts['model.layers'];
    assert.equal(layers?.value, 36);
    assert.equal(layers?.source.uri, '/ws/models/m.sh');
    assert.equal(layers?.keyRange, undefined, 'no range in the script itself');
    assert.ok(g.dependencies.includes('/ws/models/m.sh'));
  });

  // Megatron-LM examples/rl/model_configs/qwen3_32b.sh: the script's path in a variable, its folder by dirname.
  test('SCRIPT_PATH="${BASH_SOURCE[0]}"; source $(dirname $SCRIPT_PATH)/common.sh evaluates the sibling file', () => {
    const files = {
      '/ws/cfg/common.sh': 'COMMON="--tensor-model-parallel-size $TP --${PRECISION:-bf16}"\n',
      '/ws/cfg/model.sh': 'TP=${TP:-4}\nSCRIPT_PATH="${BASH_SOURCE[0]}"\nsource $(dirname $SCRIPT_PATH)/common.sh\nMODEL="--num-layers 64 --hidden-size 5120 --num-attention-heads 64 --micro-batch-size 1"\n',
    };
    const g = loadConfigGraph('/ws/cfg/model.sh', memoryHost(files));
    assert.equal(g.primary.facts['parallel.tp']?.value, 4);
    assert.equal(g.primary.facts['training.precision']?.value, 'bf16-mixed');
  });

  test('a reference is found from the folder the launcher cd-ed into', () => {
    const files = {
      '/ws/scripts/run.sh': 'cd ../train\ndeepspeed main.py --deepspeed ds.json --per_device_train_batch_size 2\n',
      '/ws/train/ds.json': '{ "zero_optimization": { "stage": 2 }, "train_micro_batch_size_per_gpu": "auto" }',
    };
    const g = loadConfigGraph('/ws/scripts/run.sh', memoryHost(files));
    assert.equal(g.resolved.plan?.parallel.sharding.stage, 2);
  });

  test('template placeholders are masked and reported; the rest still reads', () => {
    const text = 'DATA=<path to the data>\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --data-path $DATA --num-layers 2\n';
    const f = read(text);
    assert.equal(f.facts['parallel.tp']?.value, 2);
    const d = f.diagnostics.find((x) => x.code === 'template-placeholders');
    assert.equal(d?.severity, 'info');
    assert.deepEqual(d?.range, rangeOf(text, '<path to the data>'));
  });

  test('Slurm: #SBATCH nodes feed $SLURM_NNODES and --gres names the GPU', () => {
    const text = '#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gres=gpu:a100:8\nsrun torchrun --nnodes $SLURM_NNODES --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8\n';
    const f = read(text);
    assert.equal(f.facts['cluster.nodes']?.value, 4);
    assert.equal(f.facts['cluster.gpusPerNode']?.value, 8);
    assert.equal(f.facts['cluster.gpuName']?.value, 'a100');
  });

  test('Slurm: srun starting python once per task gives one GPU per task', () => {
    const text = '#SBATCH -N 2 --ntasks-per-node=8\nsrun python pretrain_gpt.py --tensor-model-parallel-size 8 --num-layers 2\n';
    const f = read(text);
    assert.equal(f.facts['cluster.gpusPerNode']?.value, 8);
    assert.equal(f.facts['cluster.nodes']?.value, 2);
  });

  test('an unknown trainer gets an information diagnostic at the top, not silent defaults', () => {
    const f = read('torchrun --nproc_per_node 8 my_trainer.py --foo 1 --bar 2\n');
    const d = f.diagnostics.find((x) => x.code === 'unknown-trainer');
    assert.equal(d?.severity, 'info');
    assert.equal(d?.range.start.line, 0);
    assert.match(d!.message, /my_trainer\.py/);
  });

  test('a script that sources itself (or a cycle of files) stops after a bounded depth', () => {
    const files = {
      '/ws/a.sh': 'TP=2\nsource ./b.sh\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n',
      '/ws/b.sh': 'source ./a.sh\nsource ./b.sh\n',
    };
    const g = loadConfigGraph('/ws/a.sh', memoryHost(files));
    assert.equal(g.primary.facts['parallel.tp']?.value, 2);
    assert.ok(g.dependencies.length <= 32, `${g.dependencies.length} files read`);
  });

  test('a script with no training command says so', () => {
    const f = read('#SBATCH -N 1\necho starting\n');
    assert.ok(f.diagnostics.some((x) => x.code === 'no-training-command' && x.severity === 'info'));
  });
});
