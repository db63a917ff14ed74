/**
 * Colours of the Simulate Step timeline (pure: no DOM). The Okabe–Ito palette (Okabe & Ito 2008, "Color Universal
 * Design") stays distinguishable under the common colour-vision deficiencies; communication is also hatched, so it
 * never relies on hue alone. The theme's chart colours are not used here: blue and orange/yellow may collide.
 */
import type { BlockKind } from '../../shared/sim/types';

export const KIND_COLORS: Readonly<Record<BlockKind, string>> = {
  forward: '#0072B2', // blue
  backward: '#E69F00', // orange
  recompute: '#CC79A7', // reddish purple
  comm: '#009E73', // bluish green, hatched
  optimizer: '#56B4E9', // sky blue
  idle: 'rgba(128,128,128,0.35)',
};

/** Kinds drawn with a hatch pattern over their colour. */
export const HATCHED: ReadonlySet<BlockKind> = new Set<BlockKind>(['comm']);

/** The span of a long step whose passes are counted but not drawn: a denser grey than idle, with its own legend entry. */
export const ELIDED_COLOR = 'rgba(128,128,128,0.8)';
