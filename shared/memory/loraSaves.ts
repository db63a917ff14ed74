/**
 * What LoRA changes in the tensors an eager block saves (docs/engine-memory.md#lora-adapters), per token on the rank.
 *
 * The frozen base: autograd saves an input of a matmul only for the gradient of the other operand (derivatives.yaml
 * `mm`: mat2's gradient needs self), so a frozen linear keeps no input for its weight. The block then no longer saves
 * the attention norm's output (q/k/v's input), the MLP norm's output (gate/up's input) and the gated product (down's
 * input); the attention output, o's input, stays saved by SDPA. bitsandbytes' 8-bit linear saves its input whatever
 * the weight, and its 4-bit linear did so up to 0.43.1 (`bitsandbytesSavesInput` below); torchao's NF4 linear
 * (torchtune's QLoRA) does not.
 *
 * The adapters (peft/tuners/lora/layer.py Linear.forward, torchtune/modules/peft/lora.py, litgpt/lora.py): B(A(dropout(x))).
 * A saves its input: with dropout (p > 0) a fresh dropped copy, B bytes per element, and dropout's 1-byte mask — one
 * per adapter (PEFT, torchtune), one for the fused q/k/v adapters (LitGPT's LoRAQKVLinear); without dropout the input
 * itself, a tensor the block keeps once however many adapters read it (q/k/v the attention norm's output, gate/up the
 * MLP norm's, o the attention output SDPA already saves, down the product). B saves A's output, r values per token.
 *
 * DoRA (peft/tuners/lora/dora.py DoraLinearLayer.forward): the output is base + (m/‖W + sBA‖ − 1)·base + (m/‖·‖)·s·B(A(x));
 * the two products with the trained magnitude scale keep their other operands, the base output and B's output, each
 * [T, out] in the activation dtype, per adapted projection (measured with PEFT: test/probe/doraSaves.test.ts).
 */
import type { LoraSpec } from '../plan/types';
import { allowedBelow, compareRelease, releaseOf } from '../versionSpec';

/** The LoRA facts a block's saves depend on. */
export interface LoraSaves {
  readonly targets: ReadonlySet<string>;
  readonly rank: number;
  /** Adapters' input dropout p > 0. */
  readonly dropout: boolean;
  readonly fusedQkv: boolean;
  /** The frozen base linears save their inputs anyway (bitsandbytes 8-bit; 4-bit up to 0.43.1). */
  readonly baseSavesInputs: boolean;
  /** DoRA: each adapted projection also keeps its base output and B's output. */
  readonly dora: boolean;
}

/**
 * Whether a bitsandbytes linear of `bits` keeps its input for the backward although its weight is frozen, in release
 * `version` (undefined: the current one). bitsandbytes/autograd/_functions.py: MatMul8bitLt.forward keeps
 * `ctx.tensors = (CAt, subA, A)` whenever the input needs a gradient (0.42.0 to 0.50.2); MatMul4Bit.forward kept
 * `ctx.tensors = (A, B)` up to 0.43.1 and keeps `(None, B)` from 0.43.2 on (the wheels of 0.42.0, 0.43.0–0.43.3 and
 * 0.50.2 read; on a CPU, 0.50.2's backward node of a Linear4bit holds `[None, packed weight]`).
 */
export function bitsandbytesSavesInput(bits: 4 | 8, version?: string): boolean {
  if (bits === 8) return true;
  if (version === undefined) return false;
  return compareRelease(releaseOf(version) ?? [0], releaseOf(BNB_4BIT_DROPS_INPUT) ?? [0]) < 0;
}

/** The first bitsandbytes release whose 4-bit linear no longer keeps its input (`bitsandbytesSavesInput`). */
export const BNB_4BIT_DROPS_INPUT = '0.43.2';

/**
 * `bitsandbytesSavesInput` for every release a version specifier allows (a requirement's "==0.42.0", ">=0.42,<0.43"):
 * undefined when the specifier allows releases on both sides of 0.43.2, so the release decides and is unknown.
 */
export function bitsandbytesSavesInputUnder(bits: 4 | 8, spec: string): boolean | undefined {
  return bits === 8 ? true : allowedBelow(spec, BNB_4BIT_DROPS_INPUT);
}

/** The block-relevant LoRA facts of a plan's LoRA (undefined without LoRA). */
export function loraSavesOf(l: LoraSpec | undefined): LoraSaves | undefined {
  if (!l) return undefined;
  return {
    targets: new Set(l.targets), rank: l.rank, dropout: (l.dropout ?? 0) > 0, fusedQkv: l.fusedQkv === true,
    baseSavesInputs: l.baseSavesInputs === true, dora: l.dora === true,
  };
}

/**
 * Widths per token of the tensors the adapters read and write: the norm outputs h, the attention output q/t, the
 * product f/t, and k's and v's outputs kv/t (DoRA keeps the outputs: q q/t, k and v kv/t, o and down h, gate and up f/t).
 */
export interface Widths { readonly h: number; readonly q: number; readonly f: number; readonly kv?: number }

/** The widths per token on a rank of a block whose MLP is `ffn` wide (the shape fields of ActivationShape). */
export function loraWidthsOf(x: { readonly h: number; readonly heads: number; readonly headDim: number; readonly kvHeadsEff: number; readonly tp: number }, ffn: number): Widths {
  return { h: x.h, q: (x.heads * x.headDim) / x.tp, f: ffn / x.tp, kv: (x.kvHeadsEff * x.headDim) / x.tp };
}

/** An adapted projection's [input, output] widths per token on the rank; undefined for a name that is not a projection. */
function projectionShape(w: Widths, t: string): readonly [number, number] | undefined {
  const kv = w.kv ?? w.q;
  switch (t) {
    case 'q': return [w.h, w.q];
    case 'k': case 'v': return [w.h, kv];
    case 'o': return [w.q, w.h];
    case 'gate': case 'up': return [w.h, w.f];
    case 'down': return [w.f, w.h];
    default: return undefined;
  }
}

const ATTN_IN = ['q', 'k', 'v'] as const;
const MLP_IN = ['gate', 'up'] as const;

/**
 * DoRA's transient in one adapted projection's forward (peft/tuners/lora/dora.py, training: nothing is cached), bytes:
 * get_lora_weight builds B·A through the adapters from an identity of the input width i in the adapters' dtype
 * (`torch.eye(in)`, a·i² bytes), which autocast casts to the compute dtype (B·i² more, kept by A's graph for A's weight
 * gradient while the weight product lives); then B·A ([i, o]), s·B·A and W + s·B·A ([o, i]) are made in the compute
 * dtype for the column norm. Peak: max(a·i² + B·i², B·i² + 3·B·i·o) under autocast (a ≠ B); without a cast the
 * identity itself is kept: max(a·i², a·i² + 3·B·i·o). The largest over the adapted projections of a layer.
 */
export function doraForwardTransientBytes(l: LoraSaves, w: Widths, B: number, adapterBytes: number): number {
  const cast = adapterBytes !== B;
  let peak = 0;
  for (const t of l.targets) {
    const s = projectionShape(w, t);
    if (!s) continue;
    const [i, o] = s;
    const held = (cast ? B : adapterBytes) * i * i;
    peak = Math.max(peak, adapterBytes * i * i + (cast ? B * i * i : 0), held + 3 * B * i * o);
  }
  return peak;
}

/**
 * Bytes per token the adapters save: (B + mask)·width per dropout, or B·width once per input the block does not keep
 * already (without dropout), plus B·r per adapter for A's output. `B` = activation bytes; `mask` = bytes per element of
 * dropout's mask: 1 on a GPU (native_dropout's bool mask), 2 in bf16 on a CPU (at::dropout's noise tensor in the input dtype).
 */
export function loraAdapterBytesPerToken(l: LoraSaves, w: Widths, B: number, mask = 1): number {
  const on = (t: string) => l.targets.has(t);
  const widthOf = (t: string) => projectionShape(w, t)?.[0] ?? w.h;
  let bytes = 0;
  if (l.dropout) {
    // One dropout per adapter, or one for the fused q/k/v adapters.
    const dropouts = [...l.targets].filter((t) => !(l.fusedQkv && ATTN_IN.includes(t as never)));
    if (l.fusedQkv && ATTN_IN.some(on)) dropouts.push('q');
    for (const t of dropouts) bytes += (B + mask) * widthOf(t);
  } else if (!l.baseSavesInputs) {
    // The inputs themselves, once each, where the frozen block no longer keeps them.
    if (ATTN_IN.some(on)) bytes += B * w.h;
    if (MLP_IN.some(on)) bytes += B * w.h;
    if (on('down')) bytes += B * w.f;
  }
  if (l.dora) {
    for (const t of l.targets) bytes += 2 * B * (projectionShape(w, t)?.[1] ?? w.h);
  }
  return bytes + B * l.rank * l.targets.size;
}
