// What the warning moe-fp32-experts rests on (shared/time/moeHost.ts expertsGetFp32Inputs), asked of the pinned torch
// and transformers (probe/oracle/grouped_mm_dtypes.py): torch's CUDA grouped GEMM takes bf16 operands and refuses fp32
// (its meta function mirrors the CUDA kernel's checks; run on fake CUDA tensors), and transformers' grouped GEMM casts
// its input to the weights' dtype, so fp32 weights make fp32 operands. Expected values: torch's and transformers'
// behaviour as documented (torch.nn.functional.grouped_mm: bf16 inputs on CUDA; transformers integrations/moe.py
// _grouped_mm: input.to(weight.dtype)). If a release changes either, this fails and the warning needs revisiting.
// Skipped with a message when no Python with torch ≥ 2.4 and transformers exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, oracleMissing, oraclePython, runOracle } from './fixtures/python';

const python = oraclePython;
if (!python && !ci) console.log(`# grouped GEMM dtypes skipped: ${oracleMissing}`);

type Answer = { cuda: { bfloat16: string; float32: string }; transformers_output: string };

describe("grouped GEMM dtypes (torch ≥ 2.10, transformers 5)", { skip: ci ? false : !python }, () => {
  test("torch's CUDA grouped GEMM refuses fp32 operands, and transformers hands it the weights' dtype", () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const a = runOracle<Answer>(python, 'grouped_mm_dtypes', []);
    assert.equal(a.cuda.bfloat16, 'ok');
    assert.match(a.cuda.float32, /Expected inputs of BF16 type/);
    assert.equal(a.transformers_output, 'float32');
  });
});
