/** The `shardlens.*` settings: one declaration for the server, the extension's manifest and the CLI. */
import type { FormatId } from '../plan/facts';
import type { ClusterCorrection } from '../plan/calibration';

/** How much the inlay hints show. */
export type HintDetail = 'off' | 'minimal' | 'normal' | 'verbose';
/** Binary (GiB = 2³⁰ bytes) or decimal (GB = 10⁹ bytes) units for memory figures. */
export type MemoryUnits = 'GiB' | 'GB';

/**
 * The `shardlens.*` settings, per resource. The extension's `contributes.configuration` declares exactly these keys:
 * `shardlens.cluster.gpu`, `shardlens.cluster.gpusPerNode`, `shardlens.cluster.nodes`, `shardlens.cluster.networkGbps`,
 * `shardlens.cluster.nvlinkDomain`, `shardlens.worldSize`,
 * `shardlens.model`, `shardlens.seqLen`, `shardlens.microBatch`, `shardlens.sampleTokens`, `shardlens.hints.detail`, `shardlens.units`, `shardlens.overhead.cudaContextGiB`, `shardlens.overhead.fragmentation`,
 * `shardlens.formats.enabled`, `shardlens.planner.safetyMargin`, `shardlens.calibration`, `shardlens.profile`.
 */
export interface ShardLensSettings {
  readonly cluster: {
    /** GPU catalog id or name (e.g. "H100-SXM"); empty = assume. */
    readonly gpu: string;
    /** GPUs per node; 0 = from the file or assumed. */
    readonly gpusPerNode: number;
    /** Nodes; 0 = from the file or assumed. */
    readonly nodes: number;
    /** Network bandwidth of one node in Gbit/s, all its adapters together; 0 = the GPU catalog's per-GPU figure. */
    readonly networkGbps: number;
    /** GPUs one NVLink fabric joins across nodes (GB200 NVL72, NVL36); 0 = the GPU catalog's (a node, or 64 on NVL72). */
    readonly nvlinkDomain: number;
  };
  /** Total GPUs when the file does not say; 0 = from the file or cluster. */
  readonly worldSize: number;
  /** Model (preset id, name or Hugging Face id) when the files name none; empty = from the files. */
  readonly model: string;
  /** Tokens per sequence when the files do not say; 0 = assumed (2048, or the model's positions if fewer). */
  readonly seqLen: number;
  /** Sequences per GPU per micro-batch when the files do not say; 0 = assumed (1). */
  readonly microBatch: number;
  /**
   * Mean tokens per sample of a dataset packed with per-sample attention (`training.packing` varlen); 0 = unknown
   * (attention timed over whole sequences, an upper bound).
   */
  readonly sampleTokens: number;
  readonly hints: { readonly detail: HintDetail };
  readonly units: MemoryUnits;
  readonly overhead: {
    /** CUDA context and library workspaces per GPU, GiB. */
    readonly cudaContextGiB: number;
    /**
     * 0 (default): reserved memory follows PyTorch's caching allocator (shared/memory/allocator.ts); above 0: a flat
     * override, reserved = (1 + fragmentation) × allocated tensors (0.1 = 10 %).
     */
    readonly fragmentation: number;
  };
  /** Formats to annotate; empty = all. */
  readonly formats: { readonly enabled: readonly FormatId[] };
  /** Layout planner: a layout fits when its peak is at most GPU memory × `safetyMargin` (0.5 ≤ margin ≤ 1). */
  readonly planner: { readonly safetyMargin: number };
  /** Per-cluster corrections written by "Calibrate Cluster from a Probe Report", keyed by cluster name (default: GPU id). */
  readonly calibration: Readonly<Record<string, ClusterCorrection>>;
  /** A cluster profile written by `shardlens profile` or "Profile This Cluster" (path, relative to the workspace); empty = catalog curves. */
  readonly profile: string;
}

/** Defaults used when the client sends nothing (and the defaults the extension's package.json declares). */
export const DEFAULT_SETTINGS: ShardLensSettings = {
  cluster: { gpu: '', gpusPerNode: 0, nodes: 0, networkGbps: 0, nvlinkDomain: 0 },
  worldSize: 0,
  model: '',
  seqLen: 0,
  microBatch: 0,
  sampleTokens: 0,
  hints: { detail: 'normal' },
  units: 'GiB',
  overhead: { cudaContextGiB: 1, fragmentation: 0 },
  formats: { enabled: [] },
  planner: { safetyMargin: 0.9 },
  calibration: {},
  profile: '',
};

/** How the server checks a setting the client sends: numbers within bounds (whole where `int`), text from a list. */
export type SettingRule = { readonly min: number; readonly max: number; readonly int?: boolean } | { readonly oneOf: readonly string[] };

/**
 * The rule of every number and every choice among DEFAULT_SETTINGS (normalizeSettings applies them; a value that breaks
 * its rule falls back to the default). Free text is trimmed; lists keep their strings.
 */
export const SETTING_RULES: Readonly<Record<string, SettingRule>> = {
  'cluster.gpusPerNode': { min: 0, max: 1024, int: true },
  'cluster.nodes': { min: 0, max: 1e6, int: true },
  'cluster.networkGbps': { min: 0, max: 1e6 },
  'cluster.nvlinkDomain': { min: 0, max: 65536, int: true },
  worldSize: { min: 0, max: 1e8, int: true },
  seqLen: { min: 0, max: 1e8, int: true },
  microBatch: { min: 0, max: 1e6, int: true },
  sampleTokens: { min: 0, max: 1e8, int: true },
  'hints.detail': { oneOf: ['off', 'minimal', 'normal', 'verbose'] },
  units: { oneOf: ['GiB', 'GB'] },
  'overhead.cudaContextGiB': { min: 0, max: 64 },
  'overhead.fragmentation': { min: 0, max: 1 },
  'planner.safetyMargin': { min: 0.5, max: 1 },
};

/** The settings section the server asks for with workspace/configuration. */
export const SETTINGS_SECTION = 'shardlens';
