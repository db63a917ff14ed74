/**
 * MoE token dispatch and combine on the expert-parallel group: what each dispatcher moves and how long one pass takes.
 * A pass is one dispatch plus one combine; a MoE layer runs one pass forward and one backward per micro-batch (and
 * one more when it is recomputed). docs/time-model.md#expert-parallel-dispatch.
 */
import type { EpDispatcher, MoeSpec, Plan } from '../plan/types';
import { epAllToAllBytes } from './volumes';
import { adapterBandwidth, busBandwidth, intraNodeTier, linkSeconds, type GroupLink } from './links';
import { routedTokenFactor } from '../model/capacity';

/** One dispatcher's pass on a rank: the two collectives and their seconds. */
export interface DispatchPass {
  /** Bytes of one dispatch (the combine moves as many back), per rank, in nccl-tests' message convention. */
  readonly bytes: number;
  /** Seconds of one dispatch plus one combine. */
  readonly seconds: number;
}

/**
 * Expected nodes other than its own that one token's k experts land on: (N − 1)·(1 − C(E − E/N, k) / C(E, k)), the E
 * experts spread evenly over the N nodes of the EP group and the k experts of a token drawn without replacement
 * (balanced routing; a router that limits the nodes per token, DeepSeek-V3's node-limited routing, sends fewer).
 */
export function remoteNodesPerToken(experts: number, topK: number, nodes: number): number {
  const N = Math.max(1, Math.floor(nodes));
  const E = Math.max(1, Math.floor(experts));
  const k = Math.max(1, Math.min(E, Math.floor(topK)));
  if (N <= 1) return 0;
  const perNode = E / N;
  // C(E − E/N, k) / C(E, k) = Π_{i<k} (E − E/N − i) / (E − i): the chance that none of the k lands on one given node.
  let miss = 1;
  for (let i = 0; i < k; i++) miss *= Math.max(0, E - perNode - i) / (E - i);
  return (N - 1) * (1 - miss);
}

/**
 * The MoE layer's tokens on one rank: T = b·s/cp, divided by TP under sequence parallelism (Megatron requires sequence
 * parallelism for MoE with TP; the router and the dispatcher see the rank's sequence shard, token_dispatcher.py). The
 * time model's layer shape carries the same number as `normTokens`.
 */
export function moeTokensPerRank(plan: Plan, tokens: number): number {
  return tokens / spSplit(plan);
}

/** The sequence-parallel split of a layer's tokens over the TP ranks (1 without sequence parallelism). */
function spSplit(plan: Plan): number {
  const tp = Math.max(1, Math.floor(plan.parallel.tp) || 1);
  return plan.parallel.sp && tp > 1 ? tp : 1;
}

/**
 * Other nodes a token's dispatch reaches under the model's routing. With group-limited routing whose groups each sit on
 * one node (G a multiple of the N nodes, experts laid out contiguously over the EP ranks as Megatron and DeepSeek
 * place them), a token's experts come from routerGroupTopK of the G groups, so it reaches
 * remoteNodesPerToken(G, routerGroupTopK, N) other nodes when every chosen group gets one of its experts (DeepSeek-V3
 * §2.1.2, node-limited routing: 8 groups, 4 chosen, at most 4 nodes per token); never more than without the limit.
 * Groups that span several nodes are counted as unlimited routing.
 */
export function routedRemoteNodes(moe: MoeSpec, nodes: number): number {
  const free = remoteNodesPerToken(moe.experts, moe.topK, nodes);
  const G = moe.routerGroups, g = moe.routerGroupTopK;
  if (!G || !g || nodes <= 1 || G % nodes !== 0) return free;
  return Math.min(free, remoteNodesPerToken(G, Math.min(g, moe.topK), nodes));
}

/**
 * Seconds of one pass (dispatch + combine) of a rank's `tokens` tokens (moeTokensPerRank) of width `hidden` (B bytes per
 * element), routed as `moe` says, over the EP group `link`:
 *
 * - `alltoall` (NCCL; torchtitan, DeepSpeed-MoE, Megatron `alltoall`): two all-to-alls of S = T·k·h·B per rank
 *   (Lepikhin et al. 2020, GShard), across nodes at the adapter bound (links.ts networkAllToAllBandwidth).
 * - `allgather` (Megatron's default dispatcher, MoEAllGatherTokenDispatcher): the EP group all-gathers every rank's
 *   tokens (S = n·T·h·B gathered), each rank runs its experts on them, and a reduce-scatter returns the outputs;
 *   backward swaps the two. It moves n/k times the all-to-all's bytes and pays off only for small groups.
 * - `deepep` / `hybridep` (Megatron `flex`; deepseek-ai/DeepEP, NVIDIA HybridEP): a token crosses to each other node
 *   holding one of its experts once, over RDMA, and is forwarded to the experts' GPUs over NVLink (DeepEP README,
 *   "asymmetric-domain bandwidth forwarding"). The adapter carries T·h·B·R, R = routedRemoteNodes; NVLink carries
 *   at most T·k·h·B·(g − 1)/g, g GPUs of the group per node; the two run at once. Inside one node the kernels copy
 *   over NVLink at the link's bus bandwidth, without NCCL's all-to-all penalty (DeepEP measures about 153 of the H800's
 *   160 GB/s intranode). One network latency per collective.
 */
export function dispatchPass(plan: Plan, dispatcher: EpDispatcher, tokens: number, moe: MoeSpec, hidden: number, B: number, link: GroupLink): DispatchPass {
  const topK = moe.topK;
  const n = link.size;
  if (n <= 1) return { bytes: 0, seconds: 0 };
  if (dispatcher === 'allgather') {
    // Megatron gathers over the TP × EP group: with sequence parallelism its tp·ep ranks hold T/tp tokens each, which
    // is n·T_seq gathered, T_seq the tokens of the TP group (moeTokensPerRank × tp).
    const bytes = n * tokens * spSplit(plan) * hidden * B;
    return { bytes, seconds: linkSeconds('all-gather', bytes, link) + linkSeconds('reduce-scatter', bytes, link) };
  }
  // Megatron's all-to-all dispatcher sends each expert its padded capacity under drop and pad (token_dispatcher.py
  // `num_out_tokens = capacity · E`); the flex kernels' padding is not published and is left at the routed tokens.
  if (dispatcher === 'alltoall') {
    const padded = epAllToAllBytes(tokens, topK * routedTokenFactor(moe), hidden, B);
    return { bytes: padded, seconds: 2 * linkSeconds('all-to-all', padded, link) };
  }
  const bytes = epAllToAllBytes(tokens, topK, hidden, B);
  const intra = busBandwidth(plan, intraNodeTier(plan), Math.max(1, link.perNode), 1);
  const perNode = Math.max(1, Math.min(n, link.perNode));
  if (link.tier !== 'network') return { bytes, seconds: 2 * (bytes * (n - 1) / n / intra + link.alpha) };
  const adapter = adapterBandwidth(plan, link.nodes);
  const remote = tokens * hidden * B * routedRemoteNodes(moe, link.nodes);
  const local = perNode > 1 ? bytes * (perNode - 1) / perNode / intra : 0;
  return { bytes, seconds: 2 * (Math.max(remote / adapter, local) + link.alpha) };
}
