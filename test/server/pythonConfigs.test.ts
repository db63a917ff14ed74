/**
 * A torchtitan Python configuration module opened on its own (torchtitan ≥ 2026-02, pytorch/torchtitan#2386): each
 * function returning a `Trainer.Config` is a configuration. Expected from first principles of the feature: a code lens
 * row at each function's name; the analysed function (the first by default) gets the document's lenses, every other
 * its verdict with a click that analyses it; the analysis follows the choice; Python files that are not
 * configurations get nothing at all. Plans are checked against what each function writes (degrees) and the model it
 * names (Llama 3 8B: 32 layers, 70B: 80 layers; Meta's config.json files).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CodeLens } from 'vscode-languageserver';
import { ServerExecutedCommands } from '../../shared/protocol';
import { startClient, type Client } from './harness';

const MODULE = `from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.distributed.activation_checkpoint import FullAC
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer


def llama3_8b() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=8192, max_context_length=8192),
        parallelism=ParallelismConfig(data_parallel_shard_degree=8),
    )


def _helper() -> ParallelismConfig:
    return ParallelismConfig(tensor_parallel_degree=2)


def llama3_70b() -> Trainer.Config:
    config = llama3_8b()
    config.model_spec = model_registry("70B")
    config.parallelism.data_parallel_shard_degree = 2
    config.parallelism.tensor_parallel_degree = 4
    config.activation_checkpoint = FullAC.Config()
    return config
`;

const URI = 'file:///work/recipes/torchtitan_recipes/llama3.py';
const line = (needle: string) => MODULE.split('\n').findIndex((l) => l.includes(needle));
const at = (lenses: CodeLens[], l: number) => lenses.filter((x) => x.range.start.line === l);
const titles = (lenses: CodeLens[]) => lenses.map((x) => x.command?.title ?? '');

let c: Client;
before(async () => {
  c = await startClient({ cluster: { gpu: 'H100-SXM' } });
  const d = c.diagnostics(URI);
  await c.open(URI, MODULE, 'python');
  await d;
});
after(() => c.dispose());

/** Runs the server's command as a client runs a lens's command (VS Code's language client, Neovim's codelens.run). */
const select = (uri: string, symbol: string) =>
  c.rpc.sendRequest('workspace/executeCommand', { command: ServerExecutedCommands.selectConfiguration, arguments: [uri, symbol] });

describe('a module of torchtitan configuration functions', () => {
  test('each configuration gets its lenses at its name; the helper returning a part gets none', async () => {
    const lenses = await c.lenses(URI);
    const first = at(lenses, line('def llama3_8b'));
    const second = at(lenses, line('def llama3_70b'));
    assert.ok(titles(first).includes('Dashboard'), titles(first).join(' | '));
    assert.ok(titles(first).some((t) => t.startsWith('step ≈')), titles(first).join(' | '));
    assert.deepEqual(at(lenses, line('def _helper')), []);
    assert.ok(titles(second).includes('Analyse this one'), titles(second).join(' | '));
    for (const l of second) {
      assert.equal(l.command?.command, 'shardlens.selectConfiguration');
      // The server executes it (any client can run the lens), so it declares it.
      assert.ok(c.capabilities.executeCommandProvider?.commands.includes('shardlens.selectConfiguration'), JSON.stringify(c.capabilities));
      assert.deepEqual(l.command?.arguments, [URI, 'llama3_70b']);
    }
    // The other configuration is estimated too: its verdict and step time are in its lens.
    assert.match(titles(second)[0] ?? '', /step ≈/);
    // Nothing sits at the top of the module.
    assert.deepEqual(at(lenses, 0), []);
  });

  test('the first configuration is analysed by default', async () => {
    const a = await c.analysis(URI);
    assert.equal(a?.format, 'torchtitan');
    assert.equal(a?.symbol, 'llama3_8b');
    assert.equal(a?.plan?.model.layers, 32);
    assert.equal(a?.plan?.parallel.dp, 8);
    assert.equal(a?.plan?.parallel.tp, 1);
  });

  test('a key of the analysed configuration has its hover, with the field it is', async () => {
    const lines = MODULE.split('\n');
    const l = line('data_parallel_shard_degree=8');
    const h = await c.hover(URI, { line: l, character: lines[l]!.indexOf('data_parallel') + 3 });
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? String(h.contents.value) : '';
    assert.match(md, /data_parallel_shard_degree/);
    assert.match(md, /step ≈/);
  });

  test('a configuration that does not fit says so at its name, named, without being analysed', async () => {
    // Llama 3 70B (70.6 B parameters) sharded over FSDP 2 × TP 4 keeps 70.6 B / 8 ≈ 8.8 B parameters per GPU; with
    // fp32 parameters, gradients and Adam's two moments (16 bytes each, torchtitan's FSDP2 default) that is ≈ 131 GiB
    // before activations: above an 80 GB H100 whatever the rest.
    const d = c.diagnostics(URI);
    await c.change(URI, MODULE);
    const diags = await d;
    const fit = diags.find((x) => x.code === 'does-not-fit');
    assert.ok(fit, JSON.stringify(diags.map((x) => x.message)));
    assert.equal(fit.range.start.line, line('def llama3_70b'));
    assert.match(String(fit.message), /^llama3_70b: /);
  });

  test('choosing another analyses it: plan, lenses and diagnostics follow', async () => {
    const d = c.diagnostics(URI);
    await select(URI, 'llama3_70b');
    await d;
    const a = await c.analysis(URI);
    assert.equal(a?.symbol, 'llama3_70b');
    assert.equal(a?.plan?.model.layers, 80);
    assert.equal(a?.plan?.parallel.tp, 4);
    assert.equal(a?.plan?.parallel.dp, 2);
    assert.equal(a?.plan?.training.recompute, 'full');
    const lenses = await c.lenses(URI);
    assert.ok(titles(at(lenses, line('def llama3_70b'))).includes('Dashboard'));
    assert.ok(titles(at(lenses, line('def llama3_8b'))).includes('Analyse this one'));
  });

  test('a name that is not a Python identifier is ignored; a function that is gone falls back to the first', async () => {
    await select(URI, 'x; rm -rf /');
    // Another command name, or arguments in another shape, do nothing either.
    await c.rpc.sendRequest('workspace/executeCommand', { command: 'shardlens.simulateStep', arguments: [URI, 'llama3_8b'] });
    await c.rpc.sendRequest('workspace/executeCommand', { command: ServerExecutedCommands.selectConfiguration, arguments: [{ uri: URI, symbol: 'llama3_8b' }] });
    assert.equal((await c.analysis(URI))?.symbol, 'llama3_70b');
    const d = c.diagnostics(URI);
    await select(URI, 'llama3_405b');
    await d;
    assert.equal((await c.analysis(URI))?.symbol, 'llama3_8b');
  });

  test('a Python file that is not a configuration gets no lenses, hints or diagnostics', async () => {
    const uri = 'file:///work/recipes/train_utils.py';
    const text = 'import torch\n\n\nclass Config:\n    lr = 3e-4\n\n\ndef build(cfg: Config) -> torch.nn.Module:\n    return torch.nn.Linear(8, 8)\n';
    const d = c.diagnostics(uri);
    await c.open(uri, text, 'python');
    assert.deepEqual(await d, []);
    assert.deepEqual(await c.lenses(uri), []);
    assert.deepEqual(await c.hints(uri), []);
    assert.equal((await c.analysis(uri))?.format ?? null, null);
  });
});
