/**
 * Parameters held by one rank of one pipeline stage, split into the parts different process groups reduce:
 * dense (reduced over DP×CP) and expert (reduced over the expert-data-parallel group). Built on shared/model/params.ts.
 */
import { loraLayerParams, loraTrainsEmbedding, loraTrainsHead, moeLayersIn } from '../model/params';
import { firstLayerOf, layersOfStage, rankParts } from '../model/rankParams';
import { mtpModules } from '../model/mtp';
import type { Plan } from '../plan/types';

/** Per-rank parameters of one pipeline stage. */
export interface StageParams {
  /** TP-sharded and replicated dense parameters of one rank (attention, dense MLP, norms, embedding/head). */
  readonly dense: number;
  /** Routed-expert parameters of one rank (after EP and expert-TP splits). */
  readonly expert: number;
  /** Largest single layer of one rank (ZeRO-3/FSDP gathers one layer at a time). */
  readonly largestLayer: number;
  /** The part of `dense` in the stage's layers (without the embedding, positions, final norm and head). */
  readonly layerDense: number;
  /** Parameters that receive gradients: dense + expert, or the LoRA adapters of the stage's layers (and a module trained in full). */
  readonly trainable: number;
}

/** Layers of stage s (shared/model/rankParams.ts, the one split memory, communication and time use). */
export function stageLayerCount(plan: Plan, s: number): number {
  return layersOfStage(plan.model.layers, plan.parallel.pp, plan.parallel.stageLayers, s, mtpModules(plan.model));
}

/** Index of the first layer of stage s. */
export function firstLayerOfStage(plan: Plan, stage: number): number {
  return firstLayerOf(plan.model.layers, plan.parallel.pp, plan.parallel.stageLayers, stage);
}

/** Layers of every pipeline stage. */
export function layersPerStage(plan: Plan): number[] {
  const p = Math.max(1, Math.floor(plan.parallel.pp) || 1);
  const out: number[] = [];
  for (let s = 0; s < p; s++) out.push(stageLayerCount(plan, s));
  return out;
}

/**
 * Per-rank parameters of a stage from the one per-rank model (rankParts: attention and MLP ÷TP with KV heads
 * replicated when TP > KV heads, norms and router replicated, routed experts ÷(EP·ETP), embedding on the first stage,
 * final norm and LM head on the last).
 */
export function stageParams(plan: Plan, stage: number): StageParams {
  const m = plan.model;
  const par = plan.parallel;
  const p = Math.max(1, par.pp);
  const r = rankParts(m, Math.max(1, par.tp), Math.max(1, par.ep), Math.max(1, par.etp), p);
  const start = firstLayerOfStage(plan, stage);
  const n = stageLayerCount(plan, stage);
  const nMoe = moeLayersIn(m, start, start + n);
  const denseLayer = r.attn + r.denseMlp;
  const moeDense = r.attn + r.moeDense;
  let dense = (n - nMoe) * denseLayer + nMoe * moeDense;
  const layerDense = dense;
  const expert = nMoe * r.expert;
  let largest = Math.max(n - nMoe > 0 ? denseLayer : 0, nMoe > 0 ? moeDense + r.expert : 0);
  const emb = r.embed + r.positions;
  if (stage === 0) {
    dense += emb;
    largest = Math.max(largest, emb);
  }
  if (stage === p - 1) dense += r.finalNorm + r.head + r.mtp;
  // LoRA: the adapters, and the embedding or head where it trains them in full (PEFT modules_to_save).
  const full = (stage === 0 && loraTrainsEmbedding(m, plan.lora) ? r.embed : 0) + (stage === p - 1 && loraTrainsHead(m, plan.lora) ? r.head : 0);
  const trainable = plan.lora ? loraLayerParams(m, plan.lora) * n + full : dense + expert;
  return { dense, expert, largestLayer: largest, layerDense, trainable };
}
