/** Number formatting shared by the status bar and quick picks (the webview has its own copy for the browser). */

/** Formats bytes as GiB (2³⁰) or GB (10⁹) with one decimal, e.g. "61.2 GiB". */
export function formatBytes(bytes: number, units: 'GiB' | 'GB'): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  const v = bytes / (units === 'GiB' ? 2 ** 30 : 1e9);
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units}`;
}

/** Formats seconds compactly, e.g. "850 ms" or "2.41 s". */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '—';
  return s < 1 ? `${(s * 1000).toFixed(s < 0.01 ? 2 : 0)} ms` : `${s.toFixed(2)} s`;
}
