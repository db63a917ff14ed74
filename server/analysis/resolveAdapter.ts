/** The editor settings as resolvePlan reads them. */
import type { ResolveSettings } from '../../shared/plan/resolve';
import type { ShardLensSettings } from '../../shared/protocol';

const GIB = 1024 ** 3;

/** Editor settings as resolvePlan reads them (0 and empty mean "not set"). */
export function resolveSettings(s: ShardLensSettings): ResolveSettings {
  return {
    ...(s.cluster.gpu ? { gpu: s.cluster.gpu } : {}),
    ...(s.cluster.gpusPerNode > 0 ? { gpusPerNode: s.cluster.gpusPerNode } : {}),
    ...(s.cluster.nodes > 0 ? { nodes: s.cluster.nodes } : {}),
    ...(s.cluster.networkGbps > 0 ? { networkGbps: s.cluster.networkGbps } : {}),
    ...(s.cluster.nvlinkDomain > 0 ? { nvlinkDomain: s.cluster.nvlinkDomain } : {}),
    ...(s.worldSize > 0 ? { worldSize: s.worldSize } : {}),
    ...(s.model ? { model: s.model } : {}),
    ...(s.seqLen > 0 ? { seqLen: s.seqLen } : {}),
    ...(s.microBatch > 0 ? { microBatch: s.microBatch } : {}),
    ...(s.sampleTokens > 0 ? { sampleTokens: s.sampleTokens } : {}),
    cudaContextBytes: s.overhead.cudaContextGiB * GIB,
    allocatorFragmentation: s.overhead.fragmentation,
    calibration: s.calibration,
    ...(s.profile ? { profileFile: s.profile } : {}),
  };
}
