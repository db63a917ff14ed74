/**
 * Per-resource `shardlens.*` settings: read through workspace/configuration, validated, cached per document URI
 * (never one global), and dropped when the client says the configuration changed.
 */
import type { Connection } from 'vscode-languageserver';
import { normalizeCalibration } from '../shared/plan/calibration';
import { DEFAULT_SETTINGS, SETTING_RULES, SETTINGS_SECTION, type ShardLensSettings } from '../shared/protocol';

/**
 * The own fields of an object, in an object without a prototype: a setting the client did not send reads as
 * undefined, never as something inherited from a polluted `Object.prototype`.
 */
function obj(v: unknown): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) out[k] = x;
  return out;
}

/** One setting as the client sent it, checked against its default's type and its rule (SETTING_RULES). */
function leaf(key: string, v: unknown, d: unknown): unknown {
  const rule = SETTING_RULES[key];
  if (typeof d === 'number') {
    const r = rule && 'min' in rule ? rule : { min: -Infinity, max: Infinity };
    if (typeof v !== 'number' || !Number.isFinite(v) || v < r.min || v > r.max) return d;
    return 'int' in r && r.int ? Math.floor(v) : v;
  }
  if (typeof d === 'string') {
    if (rule && 'oneOf' in rule) return typeof v === 'string' && rule.oneOf.includes(v) ? v : d;
    return typeof v === 'string' ? v.trim().slice(0, 4096) : d;
  }
  if (Array.isArray(d)) return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : d;
  return d;
}

/** The settings object `d` with each field read from `raw` (nested groups recursively). */
function read(raw: unknown, d: Readonly<Record<string, unknown>>, prefix: string): Record<string, unknown> {
  const r = obj(raw);
  const out: Record<string, unknown> = {};
  for (const [k, dv] of Object.entries(d)) {
    const key = prefix + k;
    if (key === 'calibration') out[k] = normalizeCalibration(r[k]);
    else out[k] = dv !== null && typeof dv === 'object' && !Array.isArray(dv) ? read(r[k], dv as Record<string, unknown>, `${key}.`) : leaf(key, r[k], dv);
  }
  return out;
}

/** Turns whatever the client sent into valid settings; unknown or invalid values fall back to the defaults. */
export function normalizeSettings(raw: unknown): ShardLensSettings {
  return read(raw, DEFAULT_SETTINGS as unknown as Record<string, unknown>, '') as unknown as ShardLensSettings;
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
      try {
        p = this.connection.workspace
          .getConfiguration({ scopeUri: uri, section: SETTINGS_SECTION })
          .then(normalizeSettings, () => this.global);
      } catch {
        // The client has gone (a closed connection throws synchronously): the last settings it pushed, not cached.
        return Promise.resolve(this.global);
      }
      this.cache.set(uri, p);
    }
    return p;
  }
}
