/** Vector comparisons for the sharded-vs-replicated check. */

/** ‖a − b‖₂ / ‖b − origin‖₂ (origin defaults to 0, giving the usual relative L2); 0 when both norms are 0. */
export function relativeL2(a: Float32Array, b: Float32Array, origin?: Float32Array): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let diff = 0, ref = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i], r = b[i] - (origin ? origin[i] : 0);
    diff += d * d;
    ref += r * r;
  }
  if (diff === 0) return 0;
  return ref === 0 ? Number.POSITIVE_INFINITY : Math.sqrt(diff / ref);
}
