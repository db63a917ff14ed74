/**
 * A change in a referenced file updates the files that reference it: the Axolotl YAML names a DeepSpeed JSON; editing
 * that JSON in the editor (unsaved) re-analyses the YAML and asks the client to refresh hints and lenses. Run on the
 * server's main thread and with an analysis worker (as the server process runs), whose reads and dependencies must be
 * the same. The other way round too: a torchtitan TOML runs on the GPUs of the launch script that names it, and
 * editing that script re-analyses the TOML.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InlayHint } from 'vscode-languageserver';
import { startClient, type Client } from './harness';

const DIR = resolve('test/server/fixtures');
const label = (h: InlayHint) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join(''));

for (const workers of [0, 1]) describe(workers ? 'with an analysis worker' : 'on the main thread', () => {
  let c: Client;
  before(async () => {
    c = await startClient({}, { workers });
  });
  after(() => c.dispose());

  test('editing the referenced DeepSpeed JSON re-analyses the YAML that names it', async () => {
    const yamlUri = pathToFileURL(`${DIR}/axolotl.yaml`).toString();
    const dsUri = pathToFileURL(`${DIR}/ds_zero3_auto.json`).toString();
    const yaml = readFileSync(`${DIR}/axolotl.yaml`, 'utf8');
    const ds = readFileSync(`${DIR}/ds_zero3_auto.json`, 'utf8');
    let d = c.diagnostics(yamlUri);
    await c.open(yamlUri, yaml);
    await d;
    const before = (await c.hints(yamlUri)).map(label).find((l) => l.startsWith('states ≈'));
    // ZeRO-3 with both offloads keeps almost no model state on the GPU; ZeRO-0 keeps all 16Ψ (ZeRO paper §3).
    await c.open(dsUri, ds);
    const refreshesBefore = c.refreshes;
    d = c.diagnostics(yamlUri);
    await c.change(dsUri, ds.replace('"stage": 3', '"stage": 0').replace(/"offload_(optimizer|param)": \{[^}]*\},/g, ''));
    await d;
    const afterHints = (await c.hints(yamlUri)).map(label).find((l) => l.startsWith('states ≈'));
    assert.ok(before && afterHints, 'no model-state hint at the deepspeed key');
    assert.notEqual(afterHints, before);
    const parse = (s: string) => {
      const m = /states ≈([\d.]+) (GiB|MiB)/.exec(s);
      return Number(m?.[1]) / (m?.[2] === 'MiB' ? 1024 : 1);
    };
    assert.ok(parse(afterHints) > 10 * parse(before), `${before} → ${afterHints}`);
    const t0 = Date.now();
    while (c.refreshes === refreshesBefore && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 5));
    assert.ok(c.refreshes > refreshesBefore, 'no workspace/inlayHint/refresh');
  });
});

/** A temporary workspace folder holding `files` (relative path → text) and a client opened on it. */
async function workspaceClient(files: Readonly<Record<string, string>>): Promise<{ c: Client; ws: string }> {
  const ws = mkdtempSync(join(tmpdir(), 'shardlens-ws-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), text);
  }
  return { c: await startClient({}, { folder: ws }), ws };
}

describe('a torchtitan TOML and the launch script that runs it', () => {
  let c: Client;
  let ws: string;
  before(async () => {
    // torchtitan's run_train.sh, abridged: torchrun over NGPU GPUs of one node with the job TOML.
    ({ c, ws } = await workspaceClient({
      'train_configs/llama3_8b.toml': '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = -1\n',
      'run_train.sh': 'NGPU=${NGPU:-"8"}\ntorchrun --nproc_per_node=${NGPU} -m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml\n',
    }));
  });
  after(() => { c.dispose(); rmSync(ws, { recursive: true, force: true }); });

  test('the TOML runs on the script\'s GPUs, and editing NGPU in the script re-analyses the TOML', async () => {
    const toml = pathToFileURL(join(ws, 'train_configs/llama3_8b.toml')).toString();
    const sh = pathToFileURL(join(ws, 'run_train.sh')).toString();
    let d = c.diagnostics(toml);
    await c.open(toml, readFileSync(join(ws, 'train_configs/llama3_8b.toml'), 'utf8'));
    await d;
    const first = await c.analysis(toml);
    assert.equal(first?.plan?.parallel.dp, 8);
    assert.match(first?.plan?.sources['cluster.gpusPerNode']?.detail ?? '', /run_train\.sh/);
    const text = readFileSync(join(ws, 'run_train.sh'), 'utf8');
    await c.open(sh, text);
    d = c.diagnostics(toml);
    await c.change(sh, text.replace(':-"8"', ':-"4"'));
    await d;
    // data_parallel_shard_degree = -1: FSDP over the world the script launches.
    assert.equal((await c.analysis(toml))?.plan?.parallel.dp, 4);
  });
});

describe('a module of torchtitan configurations and the launch script that runs one of them', () => {
  let c: Client;
  let ws: string;
  // Two configurations; the first is what the module would open on with no launcher (Llama 3 8B: 32 layers, 70B: 80).
  const MODULE = 'from torchtitan.trainer import Trainer\nfrom torchtitan.models.llama3 import model_registry\nfrom torchtitan.config import ParallelismConfig\n\n\n'
    + 'def llama3_8b() -> Trainer.Config:\n    return Trainer.Config(model_spec=model_registry("8B"), parallelism=ParallelismConfig(data_parallel_shard_degree=-1))\n\n\n'
    + 'def llama3_70b() -> Trainer.Config:\n    return Trainer.Config(model_spec=model_registry("70B"), parallelism=ParallelismConfig(data_parallel_shard_degree=-1, tensor_parallel_degree=8))\n';
  before(async () => {
    // torchtitan's multinode_trainer.slurm, abridged: MODULE and CONFIG name the function, 2 nodes of 8 GPUs.
    ({ c, ws } = await workspaceClient({
      'recipes/llama3.py': MODULE,
      'train.slurm': 'MODULE=recipes.llama3\nCONFIG=llama3_70b\nsrun torchrun --nnodes 2 --nproc_per_node 8 -m torchtitan.train --module ${MODULE} --config ${CONFIG}\n',
    }));
  });
  after(() => { c.dispose(); rmSync(ws, { recursive: true, force: true }); });

  test('the module opens on the function the script runs, says so, and follows an edit of the script', async () => {
    const py = pathToFileURL(join(ws, 'recipes/llama3.py')).toString();
    const slurm = pathToFileURL(join(ws, 'train.slurm')).toString();
    let d = c.diagnostics(py);
    await c.open(py, MODULE, 'python');
    const diags = await d;
    const a = await c.analysis(py);
    assert.equal(a?.symbol, 'llama3_70b');
    assert.equal(a?.plan?.model.layers, 80);
    assert.equal(a?.plan?.parallel.dp, 2, 'TP 8 on the 16 GPUs the script launches');
    assert.ok(diags.some((x) => x.code === 'configuration-from-launcher' && /train\.slurm runs it/.test(String(x.message))), JSON.stringify(diags.map((x) => x.code)));
    const text = readFileSync(join(ws, 'train.slurm'), 'utf8');
    await c.open(slurm, text);
    d = c.diagnostics(py);
    await c.change(slurm, text.replace('CONFIG=llama3_70b', 'CONFIG=llama3_8b'));
    await d;
    const b = await c.analysis(py);
    assert.equal(b?.symbol, 'llama3_8b');
    assert.equal(b?.plan?.model.layers, 32);
  });
});
