/**
 * The Simulate Step colours (webview/charts/kindColors.ts) stay apart for colour-blind readers. Each pair of block kinds
 * is compared after simulating protanopia, deuteranopia and tritanopia with the matrices of Machado, Oliveira & Fernandes
 * (2009, "A Physiologically-based Model for Simulation of Color Vision Deficiency", Table, severity 1.0) on linear sRGB;
 * the distance is CIE76 ΔE in CIELAB (D65). ΔE ≈ 2.3 is a just-noticeable difference (Sharma 2003); we ask for 15,
 * clearly distinct bars. The theme's former pair (orange #d18616 vs yellow #cca700) fails it, so the test can fail.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HATCHED, KIND_COLORS } from '../../../webview/charts/kindColors';
import type { BlockKind } from '../../../shared/sim/types';

type Rgb = [number, number, number];
type M3 = [Rgb, Rgb, Rgb];

const MACHADO: Readonly<Record<string, M3>> = {
  normal: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
};

const hex = (h: string): Rgb => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255) as Rgb;
/** sRGB transfer function inverse (IEC 61966-2-1). */
const toLinear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const apply = (m: M3, v: Rgb): Rgb => m.map((r) => Math.min(1, Math.max(0, r[0] * v[0] + r[1] * v[1] + r[2] * v[2]))) as Rgb;

/** Linear sRGB → CIELAB (D65 white), CIE 1976. */
function lab([r, g, b]: Rgb): Rgb {
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/** ΔE76 between two hex colours as seen with one kind of colour vision. */
function deltaE(a: string, b: string, vision: string): number {
  const m = MACHADO[vision];
  const [la, lb] = [a, b].map((h) => lab(apply(m, hex(h).map(toLinear) as Rgb)));
  return Math.hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
}

const DRAWN: readonly BlockKind[] = ['forward', 'backward', 'recompute', 'comm', 'optimizer'];

describe('timeline colours', () => {
  for (const vision of Object.keys(MACHADO)) {
    test(`every pair of block kinds differs by ΔE ≥ 15 with ${vision}`, () => {
      for (const [i, a] of DRAWN.entries()) {
        for (const b of DRAWN.slice(i + 1)) {
          const d = deltaE(KIND_COLORS[a], KIND_COLORS[b], vision);
          assert.ok(d >= 15, `${a} ${KIND_COLORS[a]} vs ${b} ${KIND_COLORS[b]}: ΔE ${d.toFixed(1)} (${vision})`);
        }
      }
    });
  }
  test('the check rejects the theme pair it replaced (orange vs yellow under deuteranopia)', () => {
    assert.ok(deltaE('#d18616', '#cca700', 'deuteranopia') < 15);
  });
  test('communication is hatched, so it never depends on hue alone', () => assert.ok(HATCHED.has('comm')));
});
