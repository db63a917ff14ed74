/** Number formatting for the dashboards (labels, tooltips, tables). */

/** Bytes in GiB (2³⁰) or GB (10⁹), e.g. "61.2 GiB"; small values in MiB/MB. */
export function formatBytes(bytes: number, units: 'GiB' | 'GB'): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  const big = units === 'GiB' ? 2 ** 30 : 1e9;
  const small = units === 'GiB' ? 2 ** 20 : 1e6;
  if (bytes > 0 && bytes < big / 10) return `${(bytes / small).toFixed(bytes < small * 10 ? 2 : 0)} ${units === 'GiB' ? 'MiB' : 'MB'}`;
  const v = bytes / big;
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 1 : 2)} ${units}`;
}

/** Bytes as a plain number of GiB/GB for chart axes. */
export function toUnit(bytes: number, units: 'GiB' | 'GB'): number {
  return bytes / (units === 'GiB' ? 2 ** 30 : 1e9);
}

/** Seconds, e.g. "850 ms" or "2.41 s". */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '—';
  if (s === 0) return '0 s';
  if (s < 1e-3) return `${(s * 1e6).toFixed(0)} µs`;
  return s < 1 ? `${(s * 1000).toFixed(s < 0.01 ? 2 : 0)} ms` : `${s.toFixed(2)} s`;
}

/** A count with a suffix, e.g. "6.74 B" parameters. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '—';
  if (n >= 1e12) return `${(n / 1e12).toFixed(2)} T`;
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  return String(Math.round(n));
}
