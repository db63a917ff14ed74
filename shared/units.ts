/**
 * Number formatting for every surface (hints, hovers, lenses, CLI, status bar, dashboards), so the same figure reads the
 * same everywhere. Non-finite or negative inputs never reach the text: they show "—".
 */
import type { MemoryUnits } from './protocol';

const GIB = 1024 ** 3;

/** True for finite, non-negative numbers, the only ones ShardLens shows. */
export function showable(n: number | undefined | null): n is number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0;
}

/** Bytes as "12.3 GiB" or "13.2 GB" (three significant digits; MiB/MB below one GiB/GB). */
export function formatBytes(bytes: number | undefined, units: MemoryUnits): string {
  if (!showable(bytes)) return '—';
  const big = units === 'GiB' ? GIB : 1e9;
  const small = units === 'GiB' ? 1024 ** 2 : 1e6;
  const smallName = units === 'GiB' ? 'MiB' : 'MB';
  if (bytes >= big || bytes === 0) return `${sig(bytes / big)} ${units}`;
  return `${sig(bytes / small)} ${smallName}`;
}

/** Bytes as a plain number of GiB or GB, for chart axes. */
export function toUnit(bytes: number, units: MemoryUnits): number {
  return bytes / (units === 'GiB' ? GIB : 1e9);
}

/** Signed bytes for deltas: "−4.2 GiB", "+1.0 GiB". */
export function formatDeltaBytes(delta: number, units: MemoryUnits): string {
  if (!Number.isFinite(delta)) return '—';
  const sign = delta < 0 ? '−' : '+';
  return `${sign}${formatBytes(Math.abs(delta), units)}`;
}

/** Communication volume in decimal units (network convention): "3.4 GB". */
export function formatVolume(bytes: number | undefined): string {
  if (!showable(bytes)) return '—';
  if (bytes >= 1e12) return `${sig(bytes / 1e12)} TB`;
  if (bytes >= 1e9 || bytes === 0) return `${sig(bytes / 1e9)} GB`;
  return `${sig(bytes / 1e6)} MB`;
}

/** Seconds as "1.23 s" or "456 ms". */
export function formatSeconds(s: number | undefined): string {
  if (!showable(s)) return '—';
  if (s >= 1) return `${sig(s)} s`;
  if (s >= 1e-3) return `${sig(s * 1e3)} ms`;
  return `${sig(s * 1e6)} µs`;
}

/** Counts as "6.74 B", "124 M". */
export function formatCount(n: number | undefined): string {
  if (!showable(n)) return '—';
  if (n >= 1e12) return `${sig(n / 1e12)} T`;
  if (n >= 1e9) return `${sig(n / 1e9)} B`;
  if (n >= 1e6) return `${sig(n / 1e6)} M`;
  if (n >= 1e3) return `${sig(n / 1e3)} k`;
  return String(Math.round(n));
}

/** A fraction as a percentage, "42 %". */
export function formatPercent(f: number | undefined): string {
  return showable(f) ? `${sig(f * 100)} %` : '—';
}

/** A signed change as a percentage with one decimal, "+12.5 %" or "−3.0 %" (a real minus sign). */
export function formatSignedPercent(f: number): string {
  return `${f >= 0 ? '+' : '−'}${Math.abs(f * 100).toFixed(1)} %`;
}

/** Three significant digits without exponent notation. */
function sig(x: number): string {
  if (x === 0) return '0';
  if (x >= 100) return String(Math.round(x));
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}
