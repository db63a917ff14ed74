/** Names of a plan's sharding as the frameworks spell them ("ZeRO-3", "FSDP FULL_SHARD", "no ZeRO sharding"). Pure. */
import type { ShardingSpec } from '../plan/types';

/** "ZeRO-2", "FSDP2 FULL_SHARD", "Megatron dist-opt", "no ZeRO sharding" (plain data parallel). */
export function shardingName(s: Pick<ShardingSpec, 'style' | 'stage' | 'fsdpStrategy'>): string {
  if (s.style === 'fsdp' || s.style === 'fsdp2') return `FSDP${s.style === 'fsdp2' ? '2' : ''} ${s.fsdpStrategy ?? ''}`.trim();
  if (s.stage === 0) return 'no ZeRO sharding';
  if (s.style === 'megatron-distopt') return 'Megatron dist-opt';
  return `ZeRO-${s.stage}`;
}

/** The file's own sharding for chart labels: "This file (ZeRO-3, offload)". */
export function currentLabel(s: ShardingSpec): string {
  const base = s.stage === 0 && s.style !== 'fsdp' && s.style !== 'fsdp2' ? 'DP' : shardingName(s);
  const off = s.offloadOptimizer !== 'none' || s.offloadParams !== 'none' ? ', offload' : '';
  return `This file (${base}${off})`;
}
