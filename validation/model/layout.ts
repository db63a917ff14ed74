/**
 * Parameter layout of the scaled transformer: flat "units" (embedding, one per layer, head) as FSDP and ZeRO-3 flatten
 * parameters per module, each padded to a multiple of the rank count so it splits into equal shards.
 * The tensor list follows the parameter formulas of the core (docs/formulas.md#parameters), so Ψ here equals the core's count.
 */
import type { ModelSpec } from '../../shared/plan/types';

export type InitKind = 'normal' | 'ones' | 'zeros';

export interface ParamTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly size: number;
  /** Offset in the unit's flat vector. */
  readonly offset: number;
  readonly init: InitKind;
}

export type UnitKind = 'embed' | 'layer' | 'head';

export interface Unit {
  readonly name: string;
  readonly kind: UnitKind;
  /** Layer index for 'layer' units. */
  readonly layer: number;
  readonly tensors: readonly ParamTensor[];
  /** Parameters in the unit (without padding). */
  readonly size: number;
  /** Size rounded up to a multiple of the rank count. */
  readonly paddedSize: number;
}

export interface Layout {
  readonly units: readonly Unit[];
  /** Ψ: every trainable parameter. */
  readonly parameters: number;
  /** Σ padded unit sizes. */
  readonly paddedParameters: number;
  readonly ranks: number;
}

/** Builds the tensors of one unit, assigning offsets in declaration order. */
function unit(name: string, kind: UnitKind, layer: number, specs: [string, number[], InitKind][], ranks: number): Unit {
  let offset = 0;
  const tensors: ParamTensor[] = [];
  for (const [n, shape, init] of specs) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (size === 0) continue;
    tensors.push({ name: n, shape, size, offset, init });
    offset += size;
  }
  return { name, kind, layer, tensors, size: offset, paddedSize: Math.ceil(offset / ranks) * ranks };
}

/** Norm parameters: gain, plus a bias for LayerNorm. */
function norm(prefix: string, m: ModelSpec, width: number): [string, number[], InitKind][] {
  const out: [string, number[], InitKind][] = [[`${prefix}.weight`, [width], 'ones']];
  if (m.norm === 'layernorm') out.push([`${prefix}.bias`, [width], 'zeros']);
  return out;
}

/** The layout of the scaled model for `ranks` data-parallel ranks. */
export function buildLayout(m: ModelSpec, ranks: number): Layout {
  const h = m.hiddenSize, d = m.headDim, q = m.heads * d, kv = m.kvHeads * d, f = m.ffnSize, V = m.vocabSize;
  const units: Unit[] = [];
  const embed: [string, number[], InitKind][] = [['wte', [V, h], 'normal']];
  if (m.positions === 'learned') embed.push(['wpe', [m.maxPositions, h], 'normal']);
  units.push(unit('embed', 'embed', -1, embed, ranks));
  const qkvBias = m.attnBias !== 'none';
  for (let l = 0; l < m.layers; l++) {
    const s: [string, number[], InitKind][] = [...norm('ln1', m, h)];
    s.push(['wq', [h, q], 'normal'], ['wk', [h, kv], 'normal'], ['wv', [h, kv], 'normal']);
    if (qkvBias) s.push(['bq', [q], 'zeros'], ['bk', [kv], 'zeros'], ['bv', [kv], 'zeros']);
    if (m.qkNorm) s.push(['qnorm', [d], 'ones'], ['knorm', [d], 'ones']);
    s.push(['wo', [q, h], 'normal']);
    if (m.attnBias === 'all') s.push(['bo', [h], 'zeros']);
    s.push(...norm('ln2', m, h));
    if (m.gatedMlp) {
      s.push(['wgate', [h, f], 'normal'], ['wup', [h, f], 'normal']);
      if (m.mlpBias) s.push(['bgate', [f], 'zeros'], ['bup', [f], 'zeros']);
    } else {
      s.push(['w1', [h, f], 'normal']);
      if (m.mlpBias) s.push(['b1', [f], 'zeros']);
    }
    s.push(['w2', [f, h], 'normal']);
    if (m.mlpBias) s.push(['b2', [h], 'zeros']);
    units.push(unit(`layer${l}`, 'layer', l, s, ranks));
  }
  const head: [string, number[], InitKind][] = [...norm('lnf', m, h)];
  if (!m.tiedEmbeddings) head.push(['lm_head', [h, V], 'normal']);
  units.push(unit('head', 'head', -1, head, ranks));
  return {
    units,
    parameters: units.reduce((a, u) => a + u.size, 0),
    paddedParameters: units.reduce((a, u) => a + u.paddedSize, 0),
    ranks,
  };
}

/** Finds a tensor of a unit by name. */
export function tensorOf(u: Unit, name: string): ParamTensor | undefined {
  return u.tensors.find((t) => t.name === name);
}
