/** Words for communication figures, shared by the server's hints and hovers and the dashboards (pure). */
import type { Collective, CommGroup, LinkTier } from '../comm/types';
import type { BlockKind } from '../sim/types';

/** Network tiers as the dashboards name them. */
export const TIER_LABELS: Readonly<Record<LinkTier, string>> = {
  nvlink: 'intra-node (NVLink)', pcie: 'intra-node (PCIe)', network: 'inter-node',
};

/** Parallel groups in capitals, as users write them ("TP comm"). */
export const GROUP_LABELS: Readonly<Record<CommGroup, string>> = { dp: 'DP', tp: 'TP', pp: 'PP', cp: 'CP', ep: 'EP' };

/** "TP all-reduce (TP×8)", with ", stage 2" on later pipeline stages. */
export function collectiveLabel(c: Pick<Collective, 'label' | 'kind' | 'group' | 'groupSize' | 'stage'>): string {
  const stage = Number.isInteger(c.stage) && c.stage > 0 ? `, pipeline stage ${c.stage}` : '';
  return `${c.label || c.kind} (${GROUP_LABELS[c.group] ?? c.group}×${c.groupSize}${stage})`;
}

/** Timeline block kinds as the Simulate Step legend names them. */
export const BLOCK_LABELS: Readonly<Record<BlockKind, string>> = {
  forward: 'Forward', backward: 'Backward', recompute: 'Recompute', comm: 'Communication', optimizer: 'Optimizer', idle: 'Idle (bubble)',
};

/** Legend entry of the span of a long step whose passes run but are not drawn (StageTimeline.elided). */
export const ELIDED_LABEL = 'Steady state (not drawn)';

/** The sentence under the timeline when some stage's steady state is not drawn. */
export function elidedSentence(stages: readonly { readonly elided?: { readonly passes: number } }[]): string | undefined {
  const passes = stages.reduce((a, st) => a + (st.elided?.passes ?? 0), 0);
  if (!(passes > 0)) return undefined;
  return `Each stage draws its first and last passes; the ${passes.toLocaleString('en-US')} passes of the steady state between them `
    + 'run and count in every figure (step time, totals, peak memory) but are not drawn, to keep the timeline small enough to send and draw.';
}

/** Exposed seconds per step of the collectives of one group, summed over a stage (or the busiest stage when none). */
export function exposedSeconds(cs: readonly Collective[], group: CommGroup, stage?: number): number {
  const per = new Map<number, number>();
  for (const c of cs) if (c.group === group) per.set(c.stage, (per.get(c.stage) ?? 0) + c.exposedSeconds);
  if (stage !== undefined) return per.get(stage) ?? 0;
  return per.size ? Math.max(...per.values()) : 0;
}
