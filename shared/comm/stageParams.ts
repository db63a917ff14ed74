/**
 * Parameters held by one rank of one pipeline stage, split into the parts different process groups reduce:
 * dense (reduced over DP×CP) and expert (reduced over the expert-data-parallel group). Built on shared/model/params.ts.
 */
import { layerParams, loraLayerParams, moeLayersIn, normParams, paddedVocabSize } from '../model/params';
import type { Plan } from '../plan/types';

/** Per-rank parameters of one pipeline stage. */
export interface StageParams {
  /** TP-sharded and replicated dense parameters of one rank (attention, dense MLP, norms, embedding/head). */
  readonly dense: number;
  /** Routed-expert parameters of one rank (after EP and expert-TP splits). */
  readonly expert: number;
  /** Largest single layer of one rank (ZeRO-3/FSDP gathers one layer at a time). */
  readonly largestLayer: number;
  /** Parameters that receive gradients: dense + expert, or only the LoRA adapters of the stage's layers. */
  readonly trainable: number;
}

/** Layers of stage s: the explicit split, else an even split with the remainder on the first stages (no allocation). */
export function stageLayerCount(plan: Plan, s: number): number {
  const p = Math.max(1, Math.floor(plan.parallel.pp) || 1);
  const given = plan.parallel.stageLayers;
  if (given && given.length === p) return Math.max(0, Math.floor(given[s]) || 0);
  const L = Math.max(0, Math.floor(plan.model.layers) || 0);
  return Math.floor(L / p) + (s < L % p ? 1 : 0);
}

/** Index of the first layer of stage s (no allocation). */
export function firstLayerOfStage(plan: Plan, stage: number): number {
  const p = Math.max(1, Math.floor(plan.parallel.pp) || 1);
  const given = plan.parallel.stageLayers;
  if (given && given.length === p) {
    let i = 0;
    for (let s = 0; s < stage; s++) i += Math.max(0, Math.floor(given[s]) || 0);
    return i;
  }
  const L = Math.max(0, Math.floor(plan.model.layers) || 0);
  const base = Math.floor(L / p);
  return stage * base + Math.min(stage, L % p);
}

/** Layers of every pipeline stage. */
export function layersPerStage(plan: Plan): number[] {
  const p = Math.max(1, Math.floor(plan.parallel.pp) || 1);
  const out: number[] = [];
  for (let s = 0; s < p; s++) out.push(stageLayerCount(plan, s));
  return out;
}

/**
 * Per-rank parameters of a stage (Megatron layout, Shoeybi et al. 2019): attention and MLP ÷tp, norms and router
 * replicated, routed experts ÷(EP·ETP), embedding ÷tp on the first stage, final norm and LM head ÷tp on the last
 * (Megatron keeps an LM-head copy on the last stage even when tied, for p > 1).
 */
export function stageParams(plan: Plan, stage: number): StageParams {
  const m = plan.model;
  const par = plan.parallel;
  const tp = Math.max(1, par.tp);
  const ep = Math.max(1, par.ep);
  const etp = Math.max(1, par.etp);
  const p = Math.max(1, par.pp);
  const per = layerParams(m);
  const start = firstLayerOfStage(plan, stage);
  const n = stageLayerCount(plan, stage);
  const nMoe = moeLayersIn(m, start, start + n);
  const attn = (per.attnWeights + per.attnOther) / tp + per.norms;
  const denseLayer = attn + per.denseMlp / tp;
  const moeDense = attn + per.router + per.sharedExperts / tp;
  const moeExpert = per.experts / (ep * etp);
  let dense = (n - nMoe) * denseLayer + nMoe * moeDense;
  const expert = nMoe * moeExpert;
  let largest = Math.max(n - nMoe > 0 ? denseLayer : 0, nMoe > 0 ? moeDense + moeExpert : 0);
  const vocab = paddedVocabSize(m.vocabSize, m.vocabPadMultiple, tp);
  const emb = (vocab * m.hiddenSize) / tp + (m.positions === 'learned' ? m.maxPositions * m.hiddenSize : 0);
  if (stage === 0) {
    dense += emb;
    largest = Math.max(largest, emb);
  }
  if (stage === p - 1) {
    dense += normParams(m);
    if (!m.tiedEmbeddings || p > 1) dense += (vocab * m.hiddenSize) / tp;
  }
  const trainable = plan.lora ? loraLayerParams(m, plan.lora) * n : dense + expert;
  return { dense, expert, largestLayer: largest, trainable };
}
