/**
 * Tokens a MoE layer's experts run, as a multiple of the balanced share T·k/E (T tokens routed, k experts each, E
 * experts): c under drop and pad, where every expert runs exactly its capacity ⌈T·k/E · c⌉ (Megatron
 * megatron/core/transformer/moe/moe_utils.py `get_capacity`; token_dispatcher.py `drop_and_pad`), the ceiling left out;
 * 1 dropless with balanced routing, as the step time assumes.
 */
import type { MoeSpec } from '../plan/modelSpec';

export function routedTokenFactor(moe: Pick<MoeSpec, 'capacityFactor'>): number {
  const c = moe.capacityFactor;
  return c !== undefined && Number.isFinite(c) && c > 0 ? c : 1;
}
