/**
 * The vocabulary a Megatron-style trainer gets from its tokenizer when the file gives no vocabulary size: Megatron-LM
 * and NeMo size the embedding from the tokenizer (megatron/training/tokenizer/tokenizer.py `build_tokenizer`,
 * `vocab_size` of each tokenizer class; NeMo `model.tokenizer`). Only tokenizers whose size is known without opening
 * them are answered: GPT-2's BPE files, Llama 2's SentencePiece model, and a Hugging Face id of a bundled preset.
 */
import { findPreset } from '../../shared/model/presets';

/** A tokenizer as a launch file names it: Megatron's type, a model path or Hub id, a vocabulary file. */
export interface TokenizerRef {
  readonly type?: string;
  readonly model?: string;
  readonly vocabFile?: string;
}

/** GPT-2's BPE vocabulary: 50,257 entries in gpt2-vocab.json (encoder.json of openai/gpt-2; Radford et al. 2019 §2.2). */
export const GPT2_BPE_VOCAB = 50257;
/** Llama 2's SentencePiece model: 32,000 tokens (Touvron et al. 2023, Llama 2 §2.1); Mistral 7B and Mixtral's too. */
export const LLAMA2_SP_VOCAB = 32000;

/** The vocabulary size and why, or undefined when the tokenizer's size cannot be known from its name. */
/** Which of the tokenizer's fields gave the size (where a diagnostic or hover points). */
export type TokenizerField = keyof TokenizerRef;

export function vocabOfTokenizer(t: TokenizerRef): { vocab: number; why: string; from: TokenizerField } | undefined {
  const type = t.type?.replace(/["']/g, '').trim();
  const model = t.model?.replace(/["']/g, '').trim();
  if (type === 'GPT2BPETokenizer' || (!type && t.vocabFile && /gpt2-vocab\.json$/i.test(t.vocabFile.trim()))) {
    return { vocab: GPT2_BPE_VOCAB, why: `${type ?? 'gpt2-vocab.json'}: GPT-2's BPE vocabulary (50,257 entries)`, from: type ? 'type' : 'vocabFile' };
  }
  if (type === 'Llama2Tokenizer') return { vocab: LLAMA2_SP_VOCAB, why: 'Llama2Tokenizer: Llama 2\'s SentencePiece model (32,000 tokens; Mistral 7B and Mixtral use the same size)', from: 'type' };
  // A Hub id (org/name) of a bundled model: its config's vocab_size is what the tokenizer gives (len(tokenizer)).
  if (model && /^[\w.-]+\/[\w.-]+$/.test(model) && !model.startsWith('.')) {
    const p = findPreset(model);
    if (p) return { vocab: p.model.vocabSize, why: `tokenizer ${model}: the vocabulary of ${p.name} (${p.model.vocabSize.toLocaleString('en-US')} tokens; ${p.source})`, from: 'model' };
  }
  // A local copy named after its model (/models/Llama-3.1-8B, or its tokenizer.model / tokenizer.json inside).
  const folder = model ? namedFolder(model) : undefined;
  const q = folder ? findPreset(folder) : undefined;
  if (q && folder) return { vocab: q.model.vocabSize, why: `tokenizer ${model}: a folder named ${folder}, the vocabulary of ${q.name} (${q.model.vocabSize.toLocaleString('en-US')} tokens; ${q.source})`, from: 'model' };
  return undefined;
}

/** The folder a tokenizer path is named after: its last part, or the folder holding a tokenizer file. */
function namedFolder(path: string): string | undefined {
  const parts = path.replace(/\/+$/, '').split('/').filter((x) => x && x !== '.');
  if (parts.length < 2) return undefined;
  const file = /^(tokenizer(_config)?\.json|tokenizer\.model|[\w.-]+\.(model|tiktoken))$/i.test(parts[parts.length - 1]!);
  const dirs = file ? parts.slice(0, -1) : parts;
  // Meta's checkpoints keep the tokenizer in original/ under the model's folder.
  const name = dirs.slice(-2).reverse().find((d) => !/^(original|tokenizers?|models?|checkpoints?|hf|data|weights)$/i.test(d));
  return name && dirs.length >= 1 ? name : undefined;
}
