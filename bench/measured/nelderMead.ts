/** Nelder–Mead minimisation (Nelder & Mead 1965; Lagarias et al. 1998 coefficients), for the few free time parameters. */

/** Minimises f from x0 with initial step sizes `step`; stops after maxEvals or when the simplex's values agree to tol. */
export function nelderMead(f: (x: number[]) => number, x0: readonly number[], step: readonly number[], maxEvals = 400, tol = 1e-7): { x: number[]; value: number; evals: number } {
  const n = x0.length;
  let simplex: { x: number[]; v: number }[] = [{ x: [...x0], v: f([...x0]) }];
  for (let i = 0; i < n; i++) {
    const x = [...x0];
    x[i] += step[i];
    simplex.push({ x, v: f(x) });
  }
  let evals = n + 1;
  const lerp = (a: number[], b: number[], t: number) => a.map((ai, i) => ai + t * (b[i] - ai));
  while (evals < maxEvals) {
    simplex.sort((a, b) => a.v - b.v);
    if (Math.abs(simplex[n].v - simplex[0].v) <= tol * (Math.abs(simplex[0].v) + 1e-12)) break;
    const centroid = new Array(n).fill(0);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) centroid[j] += simplex[i].x[j] / n;
    const worst = simplex[n];
    const xr = lerp(centroid, worst.x, -1);
    const vr = f(xr);
    evals++;
    if (vr < simplex[0].v) {
      const xe = lerp(centroid, worst.x, -2);
      const ve = f(xe);
      evals++;
      simplex[n] = ve < vr ? { x: xe, v: ve } : { x: xr, v: vr };
    } else if (vr < simplex[n - 1].v) {
      simplex[n] = { x: xr, v: vr };
    } else {
      const outside = vr < worst.v;
      const xc = lerp(centroid, worst.x, outside ? -0.5 : 0.5);
      const vc = f(xc);
      evals++;
      if (vc < (outside ? vr : worst.v)) simplex[n] = { x: xc, v: vc };
      else {
        const best = simplex[0];
        simplex = simplex.map((p, i) => (i === 0 ? p : { x: lerp(best.x, p.x, 0.5), v: NaN }));
        for (let i = 1; i <= n; i++) { simplex[i].v = f(simplex[i].x); evals++; }
      }
    }
  }
  simplex.sort((a, b) => a.v - b.v);
  return { x: simplex[0].x, value: simplex[0].v, evals };
}
