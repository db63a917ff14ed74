/** Outputs of the communication model: one entry per collective of a training step, per rank. */

export type CollectiveKind = 'all-reduce' | 'reduce-scatter' | 'all-gather' | 'all-to-all' | 'send-recv';
export type CommGroup = 'dp' | 'tp' | 'pp' | 'cp' | 'ep';
export type LinkTier = 'nvlink' | 'network' | 'pcie';
export type CommAlgorithm = 'ring' | 'tree' | 'hierarchical' | 'pairwise' | 'point-to-point' | 'copy';

/** One collective (or a family of identical ones) that one rank takes part in during one optimizer step. */
export interface Collective {
  /** Stable id, e.g. "dp-grad-allreduce". */
  readonly id: string;
  /** Short label for UIs. */
  readonly label: string;
  readonly kind: CollectiveKind;
  readonly group: CommGroup;
  readonly groupSize: number;
  /** Members of the group that share one node (the group layout a cluster profile measures). */
  readonly perNode: number;
  /** Pipeline stage this entry belongs to (stages hold different parameters). */
  readonly stage: number;
  /** Bytes one rank contributes to one occurrence (the message size of nccl-tests). */
  readonly bytesPerOccurrence: number;
  readonly countPerStep: number;
  /** bytesPerOccurrence × countPerStep. */
  readonly bytesPerRank: number;
  readonly algorithm: CommAlgorithm;
  readonly tier: LinkTier;
  /** Bus bandwidth used, bytes/s. */
  readonly busBandwidth: number;
  /** Time of all occurrences in one step, seconds. */
  readonly seconds: number;
  /** The framework overlaps it with compute. */
  readonly overlapped: boolean;
  /** Part of `seconds` not hidden behind compute. */
  readonly exposedSeconds: number;
  readonly formula: string;
  readonly citation: string;
}
