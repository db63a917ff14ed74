/**
 * torchtitan's `model.norm_type` (before 2025-04; torchtitan/models/norms.py at 85f685329): "rmsnorm" built
 * torchtitan's own RMSNorm, `self._norm(x.float()).type_as(x) * self.weight`, which keeps an fp32 copy of its input
 * for backward in eager mode; "fused_rmsnorm" was a Triton kernel and "compiled_rmsnorm" a compiled one. The memory
 * model reads the upcast from `training.normUpcast`; a file that does not say runs today's torch.nn.RMSNorm.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const toml = (norm: string) =>
  `[model]\nname = "llama3"\nflavor = "8B"\n${norm}[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n[activation_checkpoint]\nmode = "none"\n`;
const facts = (text: string) => parseConfig('/ws/train_configs/llama3_8b.toml', text);
const value = (f: ReturnType<typeof facts>, k: string) => (f.facts as Record<string, { value: unknown } | undefined>)[k]?.value;

before(() => initFormats());

describe('torchtitan model.norm_type', () => {
  test('"rmsnorm" is the upcasting class; the Triton and compiled norms are not; no key leaves it unset', () => {
    assert.equal(value(facts(toml('norm_type = "rmsnorm"\n')), 'training.normUpcast'), true);
    assert.equal(value(facts(toml('norm_type = "fused_rmsnorm"\n')), 'training.normUpcast'), false);
    assert.equal(value(facts(toml('norm_type = "compiled_rmsnorm"\n')), 'training.normUpcast'), false);
    assert.equal(value(facts(toml('')), 'training.normUpcast'), undefined);
  });

  test('an unknown norm is a warning at the key, and nothing is read from it', () => {
    const f = facts(toml('norm_type = "rms"\n'));
    const d = f.diagnostics.find((x) => x.code === 'invalid-value' && /norm_type/.test(x.message));
    assert.ok(d, JSON.stringify(f.diagnostics));
    assert.equal(d.severity, 'warning');
    assert.equal(d.range.start.line, 3);
    assert.equal(value(f, 'training.normUpcast'), undefined);
  });
});
