/**
 * What a layout rewriter needs and returns. A rewriter is a pure function of a config file's text: it rewrites the
 * keys the layout decides, in the file's own format and style, and says what it could not express.
 */
import type { LayoutChoice } from '../../../shared/planner/build';
import type { ConfigFacts } from '../../../shared/plan/facts';
import type { PlanPath } from '../../../shared/plan/paths';

/** The layout to write, with the run facts some formats spell out (global batch, layer count). */
export interface LayoutTarget extends LayoutChoice {
  readonly globalBatch: number;
  readonly layers: number;
}

/** A rewriter's output: the new text and notes about what the file cannot hold. */
export interface Rewrite {
  readonly text: string;
  /** Short sentences, e.g. "Micro batch 2 is set in the training script (per_device_train_batch_size)." */
  readonly notes: string[];
  /** Plan paths the file cannot hold for this layout (the trainer has no such setting, or it is set elsewhere). */
  readonly unwritable?: PlanPath[];
}

export type Rewriter = (text: string, target: LayoutTarget, facts?: ConfigFacts) => Rewrite;
