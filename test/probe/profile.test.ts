/**
 * `shardlens profile` end to end on CPU: probe/profile_sweep.py under torchrun with the .venv torch (2 gloo ranks),
 * a profile written where --out says, an estimate with --profile that names it, the --trust requirement, and the
 * cluster lines (--cluster) that launch nothing. The numbers are meaningless on CPU; the plumbing is what is tested.
 * Skipped with a message without a torch ≥ 2 in .venv; fails instead when CI=true.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runCli, tempTree } from '../cli/helpers';

const ci = process.env.CI === 'true';
const VENV = resolve('.venv/bin/python');
const hasTorch2 = existsSync(VENV) && spawnSync(VENV, ['-c', 'import torch, sys; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)'], { stdio: 'ignore', timeout: 120_000 }).status === 0;
const missing = `no torch >= 2 in ${VENV} (bash scripts/setup-python.sh)`;
if (!hasTorch2 && !ci) console.log(`# profile tests skipped: ${missing}`);

// A Megatron launch of a small model on 2 GPUs: data-parallel all-reduces the sweep can measure on 2 ranks.
const SCRIPT = `#!/bin/bash
torchrun --nproc_per_node 2 pretrain_gpt.py \\
  --num-layers 2 --hidden-size 256 --num-attention-heads 4 --ffn-hidden-size 1024 --seq-length 128 \\
  --max-position-embeddings 128 --micro-batch-size 2 --global-batch-size 4 --bf16 --vocab-size 1024
`;

describe('shardlens profile on CPU (gloo)', { skip: ci || hasTorch2 ? false : missing }, () => {
  test('the sweep writes a profile, and estimates with --profile name it in their provenance', () => {
    assert.ok(hasTorch2, `CI=true but ${missing}`);
    const { dir, cleanup } = tempTree({ 'train.sh': SCRIPT, '.git/HEAD': '' });
    try {
      const out = join(dir, 'profile.json');
      const r = runCli(['profile', 'train.sh', '--trust', '--gpus', '2xH100', '--ranks', '2', '--quick', '--python', VENV, '--out', out, '--json'], { cwd: dir, timeoutMs: 300_000 });
      assert.equal(r.status, 0, r.stderr);
      const reported = JSON.parse(r.stdout) as { path: string; argv: string[]; profile: { backend: string; worldSize: number } };
      assert.equal(reported.path, out);
      // An argument array with a loopback rendezvous: nothing listens on the network.
      assert.ok(reported.argv.includes('127.0.0.1:0') && reported.argv.some((a) => a.endsWith('profile_sweep.py')));
      const written = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown[] | string | number>;
      assert.equal(written.kind, 'shardlens-profile');
      assert.equal(written.backend, 'gloo');
      assert.equal(written.worldSize, 2);
      // --quick shrinks every shape to at most 256, so the config's GEMMs collapse to a few distinct ones.
      const gemms = written.gemm as { dtype: string; m: number; seconds: number }[];
      assert.ok(gemms.length >= 1 && gemms.every((g) => g.dtype === 'bf16' && g.m <= 256 && g.seconds > 0), JSON.stringify(gemms));
      assert.ok((written.collectives as { kind: string; groupSize: number }[]).some((c) => c.kind === 'all-reduce' && c.groupSize === 2), 'the data-parallel all-reduce');
      assert.ok((written.warnings as string[]).some((w) => /CPU/.test(w)), 'a CPU profile says its numbers describe no GPU');

      const sim = runCli(['simulate', 'train.sh', '--gpus', '2xH100', '--profile', out, '--json'], { cwd: dir });
      assert.equal(sim.status, 0, sim.stderr);
      const json = JSON.parse(sim.stdout) as { provenance: string[]; operatorTerms: { name: string; provenance: string }[]; problems: { code: string }[] };
      assert.ok(json.provenance.some((p) => p.startsWith('GEMM: measured profile') && p.includes(out)), json.provenance.join('\n'));
      assert.match(json.operatorTerms.find((t) => t.name === 'gemm')?.provenance ?? '', /measured profile/);
      assert.ok(json.problems.some((p) => p.code === 'profile-device'), 'measured on cpu, used for an H100 plan: a warning');
    } finally {
      cleanup();
    }
  });

  test('without --trust nothing is launched; --cluster prints the lines and launches nothing', () => {
    const { dir, cleanup } = tempTree({ 'train.sh': SCRIPT, '.git/HEAD': '' });
    try {
      const refused = runCli(['profile', 'train.sh', '--ranks', '2', '--python', VENV], { cwd: dir });
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /--trust/);
      const noFolder = runCli(['profile', 'train.sh', '--trust', '--out', join(dir, 'missing', 'p.json')], { cwd: dir });
      assert.equal(noFolder.status, 2);
      assert.match(noFolder.stderr, /does not exist/);
      const lines = runCli(['profile', 'train.sh', '--cluster', '2x8', '--out', join(dir, 'p.json'), '--json'], { cwd: dir });
      assert.equal(lines.status, 0, lines.stderr);
      const json = JSON.parse(lines.stdout) as { request: string; nodes: { node: number; line: string }[]; slurmScript: string };
      assert.equal(json.nodes.length, 2);
      assert.match(json.nodes[1].line, /--nnodes 2 .*--node_rank 1/);
      assert.match(json.slurmScript, /#SBATCH --nodes=2/);
      assert.ok(existsSync(json.request));
    } finally {
      cleanup();
    }
  });
});
