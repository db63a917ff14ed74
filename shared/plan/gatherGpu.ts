/** The GPU of a plan as gathering finds it: the setting or the file's name in the catalog, its network and NVLink domain. */
import { findGpu, isMigSlice, smallerGpusNamed, suggestGpus, type CatalogGpu } from '../hardware/gpus';
import { fromSetting, str } from './factAccess';
import type { Gathered } from './gather';
import type { ResolveContext } from './resolve';
import type { GpuSpec } from './types';

/** The GPU: the setting when set (what "Select GPU / Cluster" writes), else the file's, else an assumption. */
export function gatherGpu(g: Gathered, ctx: ResolveContext): GpuSpec | undefined {
  const S = ctx.settings ?? {};
  const name = (S.gpu || undefined) ?? str(g.facts, 'cluster.gpuName');
  const lookup = (n: string) => ctx.lookupGpu?.(n) ?? findGpu(n);
  let gpu = name ? lookup(name) : undefined;
  if (name && !gpu) {
    const near = suggestGpus(name);
    const hint = near.length ? ` Did you mean ${near.map((id) => `"${id}"`).join(', ')}?` : '';
    const where = S.gpu ? 'shardlens.cluster.gpu' : 'the file or shardlens.cluster.gpu';
    const what = isMigSlice(name)
      ? `"${name}" is a MIG slice, a fraction of a GPU's compute and memory, which ShardLens does not model`
      : `Unknown GPU "${name}": it is not in ShardLens's catalog`;
    g.problems.push({ code: 'unknown-gpu', severity: 'warning', message: `${what}, so every figure here is for an H100 SXM 80GB instead.${hint} Name a catalog GPU in ${where}.`, paths: S.gpu ? ['cluster.gpu'] : ['cluster.gpuName', 'cluster.gpu'] });
  }
  if (gpu) {
    g.sources['cluster.gpu'] = S.gpu ? fromSetting('shardlens.cluster.gpu') : g.facts['cluster.gpuName']?.source ?? fromSetting('shardlens.cluster.gpu');
    const smaller = name ? smallerGpusNamed(name, gpu) : [];
    if (smaller.length) g.assume('cluster.gpu', gpu.name, smallerPartNote(name!, gpu, smaller), 'shardlens.cluster.gpu', 'shardlens.selectCluster');
  } else {
    gpu = lookup('h100-sxm');
    const why = name ? `"${name}" is not in the GPU catalog: assumed H100 SXM 80GB` : 'no GPU type in the file or settings: assumed H100 SXM 80GB';
    g.assume('cluster.gpu', gpu?.name ?? 'H100 SXM', why, 'shardlens.cluster.gpu', 'shardlens.selectCluster');
  }
  return gpu;
}

/**
 * Why a GPU name's reading is an assumption: the name also fits parts with less memory ("A100" is read as the 80 GB;
 * the 40 GB answers to it too), on which the memory verdict may not hold.
 */
function smallerPartNote(name: string, gpu: GpuSpec, smaller: readonly CatalogGpu[]): string {
  const gib = (b: number) => `${Math.round(b / 2 ** 30)} GiB`;
  const sizes = [...new Set(smaller.map((s) => gib(s.memoryBytes)))].join(' or ');
  const ids = smaller.map((s) => `"${s.id}"`).join(', ');
  return `"${name}" does not say how much memory: read as the ${gpu.name} (${gib(gpu.memoryBytes)}); it also names ${sizes} parts (${ids}), on which this verdict may not hold`;
}

/**
 * The GPU with the node's network from `shardlens.cluster.networkGbps`: Gbit/s of the whole node shared by its GPUs,
 * interNodeBandwidth = Gbps · 10⁹ / 8 / gpusPerNode bytes/s per GPU (a collective across nodes runs every GPU's ring at
 * once, so each gets its share of the node's adapters).
 */
export function withNetwork(g: Gathered, gpu: GpuSpec, gbps: number | undefined, gpusPerNode: number): GpuSpec {
  if (!(gbps !== undefined && gbps > 0 && Number.isFinite(gbps))) return gpu;
  g.sources['cluster.networkGbps'] = fromSetting('shardlens.cluster.networkGbps');
  return { ...gpu, interNodeBandwidth: (gbps * 1e9) / 8 / Math.max(1, gpusPerNode) };
}

/**
 * The GPU with the NVLink domain from `shardlens.cluster.nvlinkDomain`: how many GPUs one NVLink fabric joins across
 * nodes (GB200 NVL72 placed on all 72, NVL36, a DGX GH200's 256), replacing the catalog's figure (shared/comm/links.ts
 * nvlinkDomainSize); 1 or any size up to a node means no NVLink between nodes.
 */
export function withNvlinkDomain(g: Gathered, gpu: GpuSpec, domain: number | undefined): GpuSpec {
  if (!(domain !== undefined && domain >= 1 && Number.isInteger(domain))) return gpu;
  g.sources['cluster.nvlinkDomain'] = fromSetting('shardlens.cluster.nvlinkDomain');
  return { ...gpu, nvlinkDomain: domain };
}
