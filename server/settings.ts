/**
 * Per-resource `shardlens.*` settings: read through workspace/configuration, validated, cached per document URI
 * (never one global), and dropped when the client says the configuration changed.
 */
import type { Connection } from 'vscode-languageserver';
import type { FormatId } from '../shared/plan/facts';
import { normalizeCalibration } from '../shared/plan/calibration';
import { DEFAULT_SETTINGS, SETTINGS_SECTION, type HintDetail, type ShardLensSettings } from '../shared/protocol';

const DETAILS: readonly HintDetail[] = ['off', 'minimal', 'normal', 'verbose'];

/**
 * The own fields of an object, in an object without a prototype: a setting the client did not send reads as
 * undefined, never as something inherited from a polluted `Object.prototype`.
 */
function obj(v: unknown): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) out[k] = x;
  return out;
}

/** A finite number within [min, max], else the fallback. */
function num(v: unknown, fallback: number, min: number, max: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : fallback;
}

/** Turns whatever the client sent into valid settings; unknown or invalid values fall back to the defaults. */
export function normalizeSettings(raw: unknown): ShardLensSettings {
  const r = obj(raw);
  const d = DEFAULT_SETTINGS;
  const cluster = obj(r.cluster);
  const hints = obj(r.hints);
  const overhead = obj(r.overhead);
  const formats = obj(r.formats);
  const planner = obj(r.planner);
  const enabled = Array.isArray(formats.enabled) ? formats.enabled.filter((x): x is FormatId => typeof x === 'string') : [];
  return {
    cluster: {
      gpu: typeof cluster.gpu === 'string' ? cluster.gpu.trim() : d.cluster.gpu,
      gpusPerNode: Math.floor(num(cluster.gpusPerNode, d.cluster.gpusPerNode, 0, 1024)),
      nodes: Math.floor(num(cluster.nodes, d.cluster.nodes, 0, 1e6)),
    },
    worldSize: Math.floor(num(r.worldSize, d.worldSize, 0, 1e8)),
    model: typeof r.model === 'string' ? r.model.trim() : d.model,
    seqLen: Math.floor(num(r.seqLen, d.seqLen, 0, 1e8)),
    microBatch: Math.floor(num(r.microBatch, d.microBatch, 0, 1e6)),
    hints: { detail: DETAILS.includes(hints.detail as HintDetail) ? (hints.detail as HintDetail) : d.hints.detail },
    units: r.units === 'GB' ? 'GB' : 'GiB',
    overhead: {
      cudaContextGiB: num(overhead.cudaContextGiB, d.overhead.cudaContextGiB, 0, 64),
      fragmentation: num(overhead.fragmentation, d.overhead.fragmentation, 0, 1),
    },
    formats: { enabled },
    planner: { safetyMargin: num(planner.safetyMargin, d.planner.safetyMargin, 0.5, 1) },
    calibration: normalizeCalibration(r.calibration),
    profile: typeof r.profile === 'string' ? r.profile.trim().slice(0, 4096) : d.profile,
  };
}

/** Settings per document URI, fetched lazily from the client when it supports workspace/configuration. */
export class SettingsStore {
  private readonly cache = new Map<string, Promise<ShardLensSettings>>();
  private global: ShardLensSettings = DEFAULT_SETTINGS;

  constructor(private readonly connection: Connection, private supportsConfiguration: boolean) {}

  setSupportsConfiguration(v: boolean): void {
    this.supportsConfiguration = v;
  }

  /** Settings pushed by didChangeConfiguration (clients without workspace/configuration). */
  setGlobal(raw: unknown): void {
    this.global = normalizeSettings(obj(raw)[SETTINGS_SECTION] ?? raw);
    this.cache.clear();
  }

  clear(uri?: string): void {
    if (uri) this.cache.delete(uri);
    else this.cache.clear();
  }

  get(uri: string): Promise<ShardLensSettings> {
    if (!this.supportsConfiguration) return Promise.resolve(this.global);
    let p = this.cache.get(uri);
    if (!p) {
      p = this.connection.workspace
        .getConfiguration({ scopeUri: uri, section: SETTINGS_SECTION })
        .then(normalizeSettings, () => this.global);
      this.cache.set(uri, p);
    }
    return p;
  }
}
