/**
 * Step time of the multi-token-prediction modules beyond their transformer layers (shared/model/mtp.ts; the layers are
 * timed as the last stage's layers), per micro-batch on the last stage. Each of the D modules
 * (megatron/core/transformer/multi_token_prediction.py):
 * - looks up the next tokens' embedding and normalises it and the incoming hidden state (enorm, hnorm), concatenates
 *   them and projects 2h → h (eh_proj: 2·T·2h·h/t FLOPs forward, twice that backward), normalises the layer's output
 *   (final_layernorm): memory-bound, 12·T·h·B bytes forward (embedding read and write, three norms, the concatenation)
 *   and 14·T·h·B + 8·T·h backward (the norms' and concatenation's gradients, the embedding's fp32 scatter), over t_sp;
 * - passes its output through the shared output layer and its own loss: the head's GEMMs and loss once more;
 * - under TP gathers eh_proj's input (2h wide) and output (h wide; gather_from_tensor_model_parallel_region) forward,
 *   and reduce-scatters (SP) or all-reduces its input gradient backward, plus the gathered output's return under SP
 *   (scatter_to_sequence_parallel_region's backward is an all-gather). Exposed: nothing runs beside them.
 */
import type { GroupLink } from '../comm/links';
import { linkSeconds } from '../comm/links';
import { tpMessageBytes } from '../comm/volumes';
import { mtpModules } from '../model/mtp';
import { embeddingWeightTrains } from '../model/params';
import { activationBytesOf } from '../memory/dtypes';
import type { Plan } from '../plan/types';
import type { EdgeUnit } from './context';
import type { KernelTimers } from './layerCost';
import { addParts, emptyParts, partsTotal } from './parts';
import { posInt } from './shape';

/** Kernels one module launches beside its head pass: lookup, two norms, concatenation, eh_proj, final norm (forward). */
const MTP_KERNELS_FWD = 6;
const MTP_KERNELS_BWD = 9;

/**
 * The head unit with the D modules' work added: D more head passes, D projections, their memory-bound kernels and TP
 * collectives (see the file comment). The head unit itself when the model has no MTP.
 */
export function withMtpModules(plan: Plan, head: EdgeUnit, tokens: number, t: KernelTimers, tpLink: GroupLink): EdgeUnit {
  const D = mtpModules(plan.model);
  if (D === 0) return head;
  const h = plan.model.hiddenSize;
  const tp = posInt(plan.parallel.tp);
  const sp = plan.parallel.sp && tp > 1;
  const B = activationBytesOf(plan.training.precision);
  const local = tokens / (sp ? tp : 1);
  const one = emptyParts(), back = emptyParts();
  one.gemm = t.gemm16(tokens, h / tp, 2 * h);
  back.gemm = t.gemm16(tokens, 2 * h, h / tp) + t.gemm16(h / tp, 2 * h, tokens);
  one.elementwise = t.hbm(12 * local * h * B);
  back.elementwise = t.hbm(14 * local * h * B + (embeddingWeightTrains(plan.model, plan.lora) ? 8 * local * h : 0));
  one.launch = MTP_KERNELS_FWD * t.params.kernelGap;
  back.launch = MTP_KERNELS_BWD * t.params.kernelGap;
  if (tp > 1) {
    const gather = (width: number) => linkSeconds('all-gather', tpMessageBytes(tokens, width, B), tpLink);
    one.comm = (sp ? gather(2 * h) : 0) + gather(h);
    back.comm = sp ? linkSeconds('reduce-scatter', tpMessageBytes(tokens, 2 * h, B), tpLink) + gather(h)
      : linkSeconds('all-reduce', tpMessageBytes(tokens, 2 * h, B), tpLink);
  }
  const fwd = addParts(addParts(addParts(emptyParts(), head.fwd), head.fwd, D), one, D);
  const bwd = addParts(addParts(addParts(emptyParts(), head.bwd), head.bwd, D), back, D);
  return { fwd, bwd, fwdTotal: partsTotal(fwd), bwdTotal: partsTotal(bwd) };
}
