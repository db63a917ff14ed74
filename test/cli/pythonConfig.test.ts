/**
 * `shardlens estimate` on a torchtitan Python configuration module: the first configuration function by default, the
 * one `--config` names otherwise (torchtitan's own run_train.sh spelling), the module's others listed; a name that is
 * not a configuration of the module is a usage error (exit 2) that lists them; a folder estimate picks the module up
 * and leaves other Python files alone. Expected plans: what each function writes (Llama 3 8B: 32 layers; TP 2 at 32K).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, tempTree } from './helpers';

/** The example workspace's module (examples/torchtitan/torchtitan_recipes/llama3.py): three configurations. */
const MODULE = readFileSync(join(ROOT, 'examples/torchtitan/torchtitan_recipes/llama3.py'), 'utf8');

test('estimate reads the first configuration, or the one --config names, and lists the others', () => {
  const t = tempTree({ '.git/HEAD': 'ref: x\n', 'recipes/llama3.py': MODULE, 'recipes/utils.py': 'def helper():\n    return Config()\n' });
  try {
    const first = runCli(['estimate', 'recipes/llama3.py', '--gpus', '8xH100', '--json'], { cwd: t.dir });
    assert.notEqual(first.status, 2, first.stderr);
    const j = JSON.parse(first.stdout);
    assert.equal(j.format, 'torchtitan');
    assert.equal(j.configuration, 'llama3_8b_fsdp');
    assert.deepEqual(j.configurations, ['llama3_8b_fsdp', 'llama3_8b_tp2_32k', 'llama3_70b_fsdp']);
    assert.equal(j.model.layers.value, 32);
    assert.equal(j.layout.dp, 8);
    const named = JSON.parse(runCli(['estimate', 'recipes/llama3.py', '--gpus', '8xH100', '--config', 'llama3_8b_tp2_32k', '--json'], { cwd: t.dir }).stdout);
    assert.equal(named.configuration, 'llama3_8b_tp2_32k');
    assert.equal(named.layout.tp, 2);
    assert.equal(named.layout.dp, 4);
    assert.equal(named.training.seqLen.value, 32768);
    const text = runCli(['estimate', 'recipes/llama3.py', '--gpus', '8xH100'], { cwd: t.dir }).stdout;
    assert.match(text, /llama3\.py → llama3_8b_fsdp\(\)/);
    assert.match(text, /Other configurations in this module \(--config <name>\): llama3_8b_tp2_32k, llama3_70b_fsdp/);
    const bad = runCli(['estimate', 'recipes/llama3.py', '--config', 'llama3_405b'], { cwd: t.dir });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /no such configuration \(it has llama3_8b_fsdp, llama3_8b_tp2_32k, llama3_70b_fsdp\)/);
    assert.equal(runCli(['estimate', 'recipes/llama3.py', '--config', 'a;b'], { cwd: t.dir }).status, 2);
    // A folder: the module is estimated, the helper module is not a config.
    const folder = runCli(['estimate', 'recipes', '--gpus', '8xH100'], { cwd: t.dir });
    assert.match(folder.stdout, /llama3\.py → llama3_8b_fsdp\(\)/);
    assert.doesNotMatch(folder.stdout + folder.stderr, /utils\.py/);
  } finally {
    t.cleanup();
  }
});

test('a module opens on the configuration a launch script of the workspace runs, and says which script', () => {
  // torchtitan's launch spelling (run_train.sh: python -m torchtitan.train --module M --config F): the script runs the
  // module's third function on 2 nodes of 8 GPUs, so that function (Llama 3 70B: 80 layers) is the one estimated.
  const run = 'torchrun --nnodes 2 --nproc_per_node 8 -m torchtitan.train --module recipes.llama3 --config llama3_70b_fsdp\n';
  const t = tempTree({ '.git/HEAD': 'ref: x\n', 'recipes/llama3.py': MODULE, 'launch/run.sh': run });
  try {
    const j = JSON.parse(runCli(['estimate', 'recipes/llama3.py', '--json'], { cwd: t.dir }).stdout);
    assert.equal(j.configuration, 'llama3_70b_fsdp');
    assert.equal(j.model.layers.value, 80);
    assert.equal(j.worldSize, 16);
    const info = j.problems.find((p: { code: string }) => p.code === 'configuration-from-launcher');
    assert.match(info?.message ?? '', /llama3_70b_fsdp is analysed first: run\.sh runs it/);
    // --config still decides, without the info.
    const named = JSON.parse(runCli(['estimate', 'recipes/llama3.py', '--config', 'llama3_8b_fsdp', '--json'], { cwd: t.dir }).stdout);
    assert.equal(named.configuration, 'llama3_8b_fsdp');
    assert.equal(named.problems.some((p: { code: string }) => p.code === 'configuration-from-launcher'), false);
  } finally {
    t.cleanup();
  }
});

test('of several launch scripts the one in the module\'s folder decides; a function the module lacks is passed over', () => {
  const run = (config: string) => `torchrun --nnodes 1 --nproc_per_node 8 -m torchtitan.train --module recipes.llama3 --config ${config}\n`;
  const t = tempTree({
    '.git/HEAD': 'ref: x\n', 'recipes/llama3.py': MODULE,
    'a/run.sh': run('llama3_70b_fsdp'), 'recipes/tp2.sh': run('llama3_8b_tp2_32k'), 'recipes/gone.sh': run('llama3_405b'),
  });
  try {
    const j = JSON.parse(runCli(['estimate', 'recipes/llama3.py', '--json'], { cwd: t.dir }).stdout);
    assert.equal(j.configuration, 'llama3_8b_tp2_32k');
    assert.equal(j.layout.tp, 2);
    assert.match(j.problems.find((p: { code: string }) => p.code === 'configuration-from-launcher')?.message ?? '', /tp2\.sh runs it/);
  } finally {
    t.cleanup();
  }
});
