/**
 * The host work of a MoE layer (shared/time/moeHost.ts): Megatron's dispatchers copy the tokens per expert to the host
 * every MoE layer (megatron/core/transformer/moe/token_dispatcher.py `_maybe_dtoh_and_synchronize`), so the GPU waits
 * while the host launches the rest of the layer. The step carries the fitted constant once per MoE layer forward and
 * micro-batch where the host launches the layer, and nothing where a full-iteration CUDA graph replays the pass, the
 * EP overlap keeps another micro-batch's backward queued, or dropping and padding spares the copy. Expected counts
 * are first principles: MoE layers of the stage × micro-batches per step × the constant.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';
import { TimeCache } from '../../../shared/time/cache';
import { moeHostRegime, moeHostSeconds } from '../../../shared/time/moeHost';
import { FITTED_PARAMS } from '../../../shared/time/params';
import { chargesHost, fitHost, hostErrors } from '../../../bench/measured/moeHost';
import moeHost from '../../../data/time/moeHost.json';

// 6 layers, the first dense ('([0]+[1]*5)'): 5 MoE layers; global 64 over DP 8 with micro-batch 2 is 4 micro-batches.
const MOE = '--num-layers 6 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 64 --bf16 --num-experts 16 --moe-router-topk 2 --moe-layer-freq \'([0]+[1]*5)\' --moe-ffn-hidden-size 512 --expert-model-parallel-size 8 --moe-grouped-gemm';
const planOf = (flags: string) => resolvePlan(parseConfig('/x/train.sh', `torchrun --nproc_per_node 8 pretrain_gpt.py ${flags}\n`), []).plan!;
const hostTerm = (flags: string, seconds = 0.004) => {
  const est = estimateStepTime(planOf(flags), new TimeCache({ ...FITTED_PARAMS, moeHostSeconds: seconds }));
  return est.operatorTerms?.find((t) => t.name === 'host');
};

describe('MoE host work per layer forward and micro-batch', () => {
  before(async () => { await initFormats(); });

  test('a Megatron MoE plan without graphs carries the constant once per MoE layer forward and micro-batch', () => {
    const t = hostTerm(MOE);
    assert.ok(t, 'the step lists a host term');
    assert.equal(t.backward, 0, 'the backward launches without the sync');
    assert.ok(Math.abs(t.forward - 5 * 0.004) < 1e-12, `forward ${t.forward}: 5 MoE layers × 4 ms`);
    assert.ok(Math.abs(t.stepSeconds - 5 * 4 * 0.004) < 1e-12, `step ${t.stepSeconds}: × 4 micro-batches`);
    assert.match(t.provenance, /host: 4\.00 ms per MoE layer forward/);
  });

  test('full recomputation reruns the forward, and the sync with it', () => {
    const t = hostTerm(`${MOE} --recompute-granularity full --recompute-method uniform --recompute-num-layers 1`);
    assert.ok(t && Math.abs(t.recompute - t.forward) < 1e-12 && t.recompute > 0, JSON.stringify(t));
  });

  test('nothing is charged where the host is out of the way, and the plan is told why', () => {
    const cases: [string, string, string][] = [
      ['--cuda-graph-impl full_iteration', 'graphed', 'training.cudaGraph'],
      ['--overlap-moe-expert-parallel-comm --delay-wgrad-compute', 'overlapped', 'parallel.epCommOverlap'],
      ['--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity', 'no-sync', 'model.moe.capacityFactor'],
    ];
    for (const [flags, regime, at] of cases) {
      const plan = planOf(`${MOE} ${flags}`);
      assert.equal(moeHostRegime(plan), regime, flags);
      assert.equal(moeHostSeconds(plan, { ...FITTED_PARAMS, moeHostSeconds: 0.004 }), 0, flags);
      assert.equal(hostTerm(`${MOE} ${flags}`)?.stepSeconds, 0, flags);
      const w = estimateStepTime(plan).problems.find((p) => p.code === 'moe-host-timing');
      assert.ok(w && w.severity === 'info' && w.paths[0] === at, `${flags}: ${JSON.stringify(w)}`);
    }
    // Per-layer graphs of the router and the dispatch preprocessing leave the sync on the host: still charged.
    const partial = planOf(`${MOE} --cuda-graph-impl transformer_engine --cuda-graph-modules moe_router moe_preprocess`);
    assert.equal(moeHostRegime(partial), 'eager');
  });

  test('the warning states the shipped constant; another engine is told it is left out', async () => {
    const w = estimateStepTime(planOf(MOE)).problems.find((p) => p.code === 'moe-host-timing');
    assert.ok(w && w.severity === 'warning' && w.message.includes(`${(moeHost.value * 1e3).toFixed(1)} ms`), JSON.stringify(w));
    // torchtitan's DeepSeek flavours sync on the all-to-all's split sizes too, but no published run measures it.
    const toml = '[model]\nname = "deepseek_v3"\nflavor = "16B"\n[training]\nlocal_batch_size = 2\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = 8\nexpert_parallel_degree = 8\n';
    const titan = resolvePlan(parseConfig('/x/a.toml', toml, 'torchtitan'), []).plan!;
    assert.equal(moeHostRegime(titan), 'unmeasured-engine');
    const tw = estimateStepTime(titan).problems.find((p) => p.code === 'moe-host-timing');
    assert.ok(tw && tw.severity === 'warning' && /leaves out the host work/.test(tw.message), JSON.stringify(tw));
    assert.equal(estimateStepTime(titan).operatorTerms?.find((t) => t.name === 'host')?.stepSeconds, 0);
    // Without EP torchtitan's LocalTokenDispatcher sorts on the GPU (argsort; grouped_mm offsets from a cumsum): no sync.
    const local = resolvePlan(parseConfig('/x/a.toml', toml.replace('expert_parallel_degree = 8', 'expert_parallel_degree = 1'), 'torchtitan'), []).plan!;
    assert.equal(moeHostRegime(local), 'local-dispatch');
    const li = estimateStepTime(local).problems.find((p) => p.code === 'moe-host-timing');
    assert.ok(li && li.severity === 'info' && /on the GPU/.test(li.message), JSON.stringify(li));
    // Megatron-DeepSpeed (--deepspeed) runs DeepSpeed's MoE layer, not Megatron's dispatchers: not charged either.
    const mds = planOf(`${MOE} --deepspeed --zero-stage 1`);
    assert.equal(mds.training.regime, 'deepspeed');
    assert.equal(moeHostRegime(mds), 'unmeasured-engine');
  });

  test("transformers' grouped-GEMM experts size their GEMMs on the GPU: no host term, and an info that names the code timed", () => {
    // transformers 5 integrations/moe.py grouped_mm_experts_forward: histc and cumsum give the offsets, nothing is
    // copied to the host; LLaMA-Factory loads the model through transformers.
    const yaml = 'model_name_or_path: Qwen/Qwen3-30B-A3B\nstage: sft\nfinetuning_type: full\nper_device_train_batch_size: 1\ncutoff_len: 4096\npure_bf16: true\n';
    const plan = resolvePlan(parseConfig('/x/sft.yaml', yaml, 'llamafactory'), []).plan!;
    assert.equal(plan.training.modelImpl, 'hf');
    assert.equal(moeHostRegime(plan), 'sync-free');
    const est = estimateStepTime(plan, new TimeCache({ ...FITTED_PARAMS, moeHostSeconds: 0.004 }));
    assert.equal(est.operatorTerms?.find((t) => t.name === 'host')?.stepSeconds, 0);
    const w = est.problems.find((p) => p.code === 'moe-host-timing');
    assert.ok(w && w.severity === 'info' && /grouped_mm/.test(w.message) && /transformers 4/.test(w.message), JSON.stringify(w));
  });

  test("a file that names transformers' looping experts is told they are timed as grouped GEMMs", () => {
    // Axolotl passes experts_implementation to transformers (integrations/moe.py): "eager" loops over the experts with a
    // torch.where (a host sync) each, "batched_mm" gathers each copy's expert weights; "deepgemm" is a grouped kernel.
    const axo = (v: string) => parseConfig('/x/axolotl.yaml', `base_model: Qwen/Qwen3-30B-A3B\nsequence_len: 2048\nmicro_batch_size: 1\nbf16: true\nexperts_implementation: ${v}\nfsdp_version: 2\n`);
    const warning = (v: string) => estimateStepTime(resolvePlan(axo(v), []).plan!).problems.find((p) => p.code === 'moe-host-timing');
    for (const v of ['eager', 'batched_mm']) {
      const w = warning(v);
      assert.ok(w && w.severity === 'warning' && w.paths[0] === 'training.expertsImpl', `${v}: ${JSON.stringify(w)}`);
    }
    for (const v of ['grouped_mm', 'deepgemm']) assert.equal(warning(v)?.severity, 'info', v);
    const bad = axo('fastest');
    assert.ok(bad.diagnostics.some((d) => d.code === 'invalid-value' && /experts_implementation/.test(d.message)), JSON.stringify(bad.diagnostics));
  });

  test('the simulation and the estimate charge the same host time', () => {
    const plan = planOf(MOE);
    const at = (seconds: number) => new TimeCache({ ...FITTED_PARAMS, moeHostSeconds: seconds });
    const est = estimateStepTime(plan, at(0.004)).stepSeconds - estimateStepTime(plan, at(0)).stepSeconds;
    const sim = simulateStep(plan, at(0.004)).stepSeconds - simulateStep(plan, at(0)).stepSeconds;
    // One stage, no pipeline: the step grows by the host time itself, 5 MoE layers × 4 micro-batches × 4 ms.
    assert.ok(Math.abs(est - 0.08) < 1e-6, `estimate grows by ${est}`);
    assert.ok(Math.abs(sim - est) < 1e-6, `simulation grows by ${sim}, estimate by ${est}`);
  });
});

describe('fitting the constant (bench/measured/moeHost.ts)', () => {
  before(async () => { await initFormats(); });
  test('the fit finds the constant that makes a row exact, and rows with attention sinks are not fitted on', () => {
    // A row measured as its own prediction at 3 ms: the fit of that one row must return 3 ms (its error is 0 there
    // and grows on both sides), within the search's resolution.
    const plan = planOf(MOE);
    const at3 = hostErrors([{ id: 'x', measured: 1, plan }], 0.003)[0] + 1;
    const s = fitHost([{ id: 'x', measured: at3, plan }]);
    assert.ok(Math.abs(s - 0.003) < 2e-6, `${s}`);
    assert.equal(chargesHost(plan), true);
    assert.equal(chargesHost(planOf(`${MOE} --softmax-type learnable`)), false);
    assert.equal(chargesHost(planOf(`${MOE} --cuda-graph-impl full_iteration`)), false);
  });
});

describe('the host term of a plan that is not charged', () => {
  before(async () => { await initFormats(); });
  test('says none is charged rather than naming rates it does not use', () => {
    const dense = planOf(MOE.replace(/--num-experts .*$/, ''));
    const t = estimateStepTime(dense).operatorTerms?.find((x) => x.name === 'host');
    assert.ok(t && t.stepSeconds === 0 && /none charged/.test(t.provenance), JSON.stringify(t));
    const graphed = estimateStepTime(planOf(`${MOE} --cuda-graph-impl full_iteration`)).operatorTerms?.find((x) => x.name === 'host');
    assert.ok(graphed && /none charged/.test(graphed.provenance), JSON.stringify(graphed));
  });
});
