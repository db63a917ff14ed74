/**
 * Quick-pick items of "Select GPU / Cluster" (pure: no vscode, so unit tests import it). A GPU is found by any name it
 * answers to (torch's and nvidia-smi's spellings are its aliases), and the GPUs-per-node step offers the GPU's own host
 * first: 4 on a GB200 or GB300 compute tray, 8 on an HGX/DGX board.
 */
import type { CatalogGpu } from '../../shared/hardware/gpus';
import { formatBytes } from '../../shared/units';

export interface GpuItem {
  readonly label: string;
  readonly description: string;
  readonly detail: string;
  readonly id: string;
  readonly picked: boolean;
}

/** One item per catalog GPU; the description carries the memory and the other names it answers to (searched too). */
export function gpuItems(gpus: readonly CatalogGpu[], current: string): GpuItem[] {
  return gpus.map((g) => ({
    label: g.name,
    description: [formatBytes(g.memoryBytes, 'GiB'), ...g.aliases.slice(0, 4)].join(' · '),
    detail: g.id,
    id: g.id,
    picked: g.id === current,
  }));
}

export interface PerNodeItem {
  readonly label: string;
  readonly description: string;
}

/** GPUs per node to choose from, the GPU's own host size first and said as such. */
export function perNodeItems(gpu: Pick<CatalogGpu, 'gpusPerNode' | 'name'>): PerNodeItem[] {
  const own = gpu.gpusPerNode && gpu.gpusPerNode > 0 ? gpu.gpusPerNode : 8;
  const sizes = [own, ...[1, 2, 4, 8, 16].filter((n) => n !== own)];
  return sizes.map((n) => ({
    label: String(n),
    description: n !== own ? '' : own === 8 ? 'typical HGX/DGX node' : `one ${gpu.name} host (compute tray)`,
  }));
}
