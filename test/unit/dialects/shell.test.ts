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
    // The flag is in common.sh, its value is model.sh's "4": the fact points at the value, in model.sh.
    assert.deepEqual(g.primary.facts['parallel.tp']?.source.range, rangeOf(files['/ws/cfg/model.sh'], '4'));
    assert.notEqual(g.primary.facts['parallel.tp']?.source.uri, '/ws/cfg/common.sh');
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

  /** The primary file's facts of a workspace of files (path → text) opened at `entry`. */
  const factsOf = (entry: string, files: Record<string, string>) => loadConfigGraph(entry, memoryHost(files)).primary.facts;

  // A script run with arguments by another (DeepSpeedExamples benchmarks/deepcompile: `bash ./run.sh --zero-stage 3 …`,
  // run.sh parses them with `while [[ $# -gt 0 ]]; case $1 in --zero-stage) ZERO_STAGE="$2"; shift 2;; …`). Expected
  // values are bash's (bash(1): positional parameters, `shift n`, `"$@"`; a child process sees exported variables only).
  describe('scripts run with arguments', () => {
    const parser = 'ZERO_STAGE=1\nMBS=8\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    --zero-stage) ZERO_STAGE="$2"; shift 2 ;;\n    --batch-size) MBS="$2"; shift 2 ;;\n    --fp16) PREC=--fp16; shift ;;\n    *) echo "unknown option $1"; exit 1 ;;\n  esac\ndone\ndeepspeed main.py --zero_stage $ZERO_STAGE --per_device_train_batch_size $MBS $PREC --deepspeed\n';

    test('bash ./run.sh --zero-stage 3 …: the argument loop reads each, and the value is where the caller wrote it', () => {
      const wrapper = 'for SEQ in 1024 2048; do\n  bash ./run.sh --bogus x --zero-stage 3 --batch-size 2\ndone\n';
      const g = loadConfigGraph('/ws/bench.sh', memoryHost({ '/ws/run.sh': parser, '/ws/bench.sh': wrapper }));
      const stage = g.primary.facts['parallel.sharding.stage'];
      assert.equal(stage?.value, 3);
      assert.equal(g.primary.facts['training.microBatch']?.value, 2);
      // The "3" of the wrapper, not run.sh's default: editing it there changes the estimate.
      assert.equal(stage?.source.uri, '/ws/bench.sh');
      assert.deepEqual(stage?.source.range, rangeOf(wrapper, '3'));
      assert.ok(g.dependencies.includes('/ws/run.sh'), 'editing run.sh re-analyses the wrapper');
      // Opened alone, run.sh runs without arguments: its own defaults.
      const alone = factsOf('/ws/run.sh', { '/ws/run.sh': parser });
      assert.equal(alone['parallel.sharding.stage']?.value, 1);
      assert.equal(alone['training.microBatch']?.value, 8);
    });

    test('for a in "$@" with ${a#*=}, and while (( "$#" )) with shift, in scripts run by path', () => {
      const eq = 'for a in "$@"; do\n  case $a in\n    --tp=*) TP="${a#*=}" ;;\n    --pp=*) PP="${a##*=}" ;;\n  esac\ndone\ntorchrun pretrain_gpt.py --tensor-model-parallel-size ${TP:-1} --pipeline-model-parallel-size ${PP:-1} --num-layers 8\n';
      const g = factsOf('/ws/go.sh', { '/ws/scripts/train.sh': eq, '/ws/go.sh': './scripts/train.sh --tp=4 --pp=2\n' });
      assert.equal(g['parallel.tp']?.value, 4);
      assert.equal(g['parallel.pp']?.value, 2);
      const arith = 'while (( "$#" )); do\n  if [ "$1" == "--tp" ]; then TP=$2; shift; fi\n  shift\ndone\ntorchrun pretrain_gpt.py --tensor-model-parallel-size ${TP:-1} --num-layers 8\n';
      const h = factsOf('/ws/go.sh', { '/ws/t.sh': arith, '/ws/go.sh': 'sh t.sh --x --tp 8\n' });
      assert.equal(h['parallel.tp']?.value, 8);
    });

    test('the called script sees exported variables and the command\'s prefixes, not the others; its own stay its own', () => {
      const child = 'TP=${TP:-8}\nPP=${PP:-1}\nCP=${CP:-1}\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP --context-parallel-size $CP --num-layers 8\n';
      const wrapper = 'TP=2\nexport PP=4\nCP=2 bash train.sh --go\n';
      const g = factsOf('/ws/go.sh', { '/ws/train.sh': child, '/ws/go.sh': wrapper });
      assert.equal(g['parallel.tp']?.value, 8, 'TP=2 was not exported');
      assert.equal(g['parallel.pp']?.value, 4);
      assert.equal(g['parallel.cp']?.value, 2);
      // What a called script assigns does not come back: the wrapper's own launch keeps its MBS=1.
      const setup = 'MBS=4\nTP=8\n';
      const back = 'MBS=1\nbash setup.sh --x\ntorchrun pretrain_gpt.py --micro-batch-size $MBS --tensor-model-parallel-size ${TP:-2} --num-layers 8\n';
      const h = factsOf('/ws/go.sh', { '/ws/setup.sh': setup, '/ws/go.sh': back });
      assert.equal(h['training.microBatch']?.value, 1);
      assert.equal(h['parallel.tp']?.value, 2);
    });

    test('a script called without arguments is read as run without them; one that calls itself stops', () => {
      const child = 'ZERO_STAGE=$2\nif [ "$ZERO_STAGE" == "" ]; then\n  ZERO_STAGE=3\nfi\ndeepspeed main.py --zero_stage $ZERO_STAGE --per_device_train_batch_size 4 --deepspeed\n';
      const g = factsOf('/ws/go.sh', { '/ws/train.sh': child, '/ws/go.sh': 'bash train.sh\n' });
      assert.equal(g['parallel.sharding.stage']?.value, 3);
      const loop = 'bash ./a.sh --zero-stage 2 --zero-stage 3\nbash ./a.sh x\n' + parser;
      const h = loadConfigGraph('/ws/a.sh', memoryHost({ '/ws/a.sh': loop }));
      assert.equal(h.primary.facts['parallel.sharding.stage']?.value, 1, 'the file itself, run without arguments, launches last');
      assert.ok(h.dependencies.length <= 32);
    });

    test('sbatch job.sh ARGS and source f.sh ARGS give the file those arguments as $1…', () => {
      const job = '#SBATCH -N 2\nMODEL_TP=${1:-1}\nsrun torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $MODEL_TP --num-layers 8\n';
      const g = factsOf('/ws/submit.sh', { '/ws/job.slurm': job, '/ws/submit.sh': 'sbatch --nodes 2 job.slurm 4\n' });
      assert.equal(g['parallel.tp']?.value, 4);
      const cfg = 'case $1 in\n  8B) TP=1 ;;\n  70B) TP=8 ;;\nesac\n';
      const h = factsOf('/ws/run.sh', { '/ws/cfg.sh': cfg, '/ws/run.sh': 'source ./cfg.sh 70B\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 8 --micro-batch-size ${1:-2}\n' });
      assert.equal(h['parallel.tp']?.value, 8);
      // After the sourced file, $1 is this script's again (none given: the default).
      assert.equal(h['training.microBatch']?.value, 2);
    });

    // bash(1), getopts: "-t4" and "-t 4" both give t with OPTARG 4 when the letter is followed by ":"; OPTIND is the
    // index of the next argument to read, so `shift $((OPTIND-1))` leaves the operands.
    test('while getopts "n:t:v" opt with OPTARG, then shift $((OPTIND-1)) for the operands', () => {
      const train = 'NODES=1\nTP=1\nwhile getopts "n:t:v" opt; do\n  case $opt in\n    n) NODES=$OPTARG ;;\n    t) TP=$OPTARG ;;\n    v) VERBOSE=1 ;;\n    *) exit 1 ;;\n  esac\ndone\nshift $((OPTIND-1))\n'
        + 'torchrun --nnodes $NODES --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 8 --micro-batch-size ${1:-1}\n';
      const g = factsOf('/ws/go.sh', { '/ws/train.sh': train, '/ws/go.sh': 'bash train.sh -n 2 -t4 -v 2\n' });
      assert.equal(g['cluster.nodes']?.value, 2);
      assert.equal(g['parallel.tp']?.value, 4);
      assert.equal(g['training.microBatch']?.value, 2);
      // Opened alone (no arguments): the defaults.
      const alone = factsOf('/ws/train.sh', { '/ws/train.sh': train });
      assert.equal(alone['parallel.tp']?.value, 1);
    });

    test('${X#pat} ${X##pat} ${X%pat} ${X%%pat} with globs, here as in any script; other operators stay unresolved', () => {
      const text = 'A=--tp=4\nB=x/y/8\nC=2.b.c\nD=16-a-b\ntorchrun pretrain_gpt.py --tensor-model-parallel-size ${A#*=} --pipeline-model-parallel-size ${B##*/} --context-parallel-size ${C%%.*} --micro-batch-size ${D%-*} --num-layers 8\n';
      const f = read(text);
      assert.equal(f.facts['parallel.tp']?.value, 4);
      assert.equal(f.facts['parallel.pp']?.value, 8);
      assert.equal(f.facts['parallel.cp']?.value, 2);
      // ${D%-*} removes the shortest suffix "-b": "16-a" is no number, so the micro batch is not read from it.
      assert.notEqual(f.facts['training.microBatch']?.source.kind, 'explicit');
      // The "4" of A: its place in the file.
      assert.deepEqual(f.facts['parallel.tp']?.source.range, rangeOf(text, '4'));
      // A substitution is not evaluated: the flag is unresolved, never read as the whole "abc".
      const sub = read('X=abc\ntorchrun pretrain_gpt.py --tensor-model-parallel-size ${X/abc/2} --num-layers 8\n').facts['parallel.tp'];
      assert.notEqual(sub?.source.kind, 'explicit');
    });
  });

  // bash(1), FUNCTIONS: a function runs in the current shell where it is called, with the call's arguments as $1…;
  // its assignments are global unless declared `local`; it must be defined before it is called.
  describe('shell functions', () => {
    test('a launch inside a function is read where the function is called, with its arguments', () => {
      const text = 'TP=2\nrun() {\n  torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 8 --micro-batch-size $1\n}\nrun 4\n';
      assert.equal(value(text, 'parallel.tp'), 2);
      assert.equal(value(text, 'training.microBatch'), 4);
      // The "4" of the call is where the micro batch is written.
      assert.deepEqual(read(text).facts['training.microBatch']?.source.range, rangeOf(text, '4'));
      // Also when its output goes to a pipe or a file.
      assert.equal(value(text.replace('run 4\n', 'run 4 2>&1 | tee log.txt\n'), 'training.microBatch'), 4);
      // Called before it is defined, it is not found (bash: command not found).
      assert.notEqual(read('run 4\nrun() {\n  torchrun pretrain_gpt.py --micro-batch-size $1 --num-layers 8\n}\n').facts['training.microBatch']?.source.kind, 'explicit');
    });

    test('main "$@" in a script run with arguments parses them; local values stay the function\'s', () => {
      const train = 'main() {\n  local TP=1\n  while [[ $# -gt 0 ]]; do\n    case $1 in --tp) TP=$2; shift 2 ;; *) shift ;; esac\n  done\n  torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 8\n}\nmain "$@"\n';
      const g = factsOf('/ws/go.sh', { '/ws/train.sh': train, '/ws/go.sh': 'bash train.sh --tp 4\n' });
      assert.equal(g['parallel.tp']?.value, 4);
      const scoped = 'TP=2\nMBS=1\nf() {\n  local TP=8\n  MBS=4\n}\nf\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --micro-batch-size $MBS --num-layers 8\n';
      assert.equal(value(scoped, 'parallel.tp'), 2, 'local TP=8 ends with the function');
      assert.equal(value(scoped, 'training.microBatch'), 4, 'MBS=4 is global');
    });

    test('a function that calls itself stops', () => {
      const text = 'TP=2\nf() {\n  f\n  f\n}\nf\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 8\n';
      assert.equal(value(text, 'parallel.tp'), 2);
    });
  });

  test('a script with no training command says so', () => {
    const f = read('#SBATCH -N 1\necho starting\n');
    assert.ok(f.diagnostics.some((x) => x.code === 'no-training-command' && x.severity === 'info'));
  });
});
