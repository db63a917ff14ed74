/** Generated list of bundled model presets (data/models/*.json). Add a file there and a line here. */
import m0 from '../../data/models/deepseek-v2-lite.json';
import m1 from '../../data/models/deepseek-v2.json';
import m2 from '../../data/models/deepseek-v3.json';
import m3 from '../../data/models/gpt2-large.json';
import m4 from '../../data/models/gpt2-medium.json';
import m5 from '../../data/models/gpt2-xl.json';
import m6 from '../../data/models/gpt2.json';
import m7 from '../../data/models/gpt3-175b.json';
import m8 from '../../data/models/korthikanti-175b.json';
import m9 from '../../data/models/korthikanti-1t.json';
import m10 from '../../data/models/korthikanti-22b.json';
import m11 from '../../data/models/korthikanti-530b.json';
import m12 from '../../data/models/llama-2-13b.json';
import m13 from '../../data/models/llama-2-70b.json';
import m14 from '../../data/models/llama-2-7b.json';
import m15 from '../../data/models/llama-3-70b.json';
import m16 from '../../data/models/llama-3-8b.json';
import m17 from '../../data/models/llama-3.1-405b.json';
import m18 from '../../data/models/llama-3.1-70b.json';
import m19 from '../../data/models/llama-3.1-8b.json';
import m20 from '../../data/models/llama-3.2-1b.json';
import m21 from '../../data/models/llama-3.2-3b.json';
import m22 from '../../data/models/llama-4-maverick.json';
import m23 from '../../data/models/llama-4-scout.json';
import m24 from '../../data/models/megatron-1.7b.json';
import m25 from '../../data/models/megatron-1008b.json';
import m26 from '../../data/models/megatron-145.6b.json';
import m27 from '../../data/models/megatron-18.4b.json';
import m28 from '../../data/models/megatron-3.6b.json';
import m29 from '../../data/models/megatron-310.1b.json';
import m30 from '../../data/models/megatron-39.1b.json';
import m31 from '../../data/models/megatron-529.6b.json';
import m32 from '../../data/models/megatron-7.5b.json';
import m33 from '../../data/models/megatron-76.1b.json';
import m34 from '../../data/models/mistral-7b.json';
import m35 from '../../data/models/mixtral-8x22b.json';
import m36 from '../../data/models/mixtral-8x7b.json';
import m37 from '../../data/models/phi-3-mini.json';
import m38 from '../../data/models/qwen1.5-moe-a2.7b.json';
import m39 from '../../data/models/qwen2.5-0.5b.json';
import m40 from '../../data/models/qwen2.5-1.5b.json';
import m41 from '../../data/models/qwen2.5-14b.json';
import m42 from '../../data/models/qwen2.5-32b.json';
import m43 from '../../data/models/qwen2.5-3b.json';
import m44 from '../../data/models/qwen2.5-72b.json';
import m45 from '../../data/models/qwen2.5-7b.json';
import m46 from '../../data/models/qwen3-0.6b.json';
import m47 from '../../data/models/qwen3-1.7b.json';
import m48 from '../../data/models/qwen3-14b.json';
import m49 from '../../data/models/qwen3-235b-a22b.json';
import m50 from '../../data/models/qwen3-30b-a3b.json';
import m51 from '../../data/models/qwen3-32b.json';
import m52 from '../../data/models/qwen3-4b.json';
import m53 from '../../data/models/qwen3-8b.json';
import m54 from '../../data/models/smollm-1.7b.json';
import m55 from '../../data/models/smollm-135m.json';
import m56 from '../../data/models/smollm-360m.json';
import m57 from '../../data/models/tinyllama-1.1b.json';
import m58 from '../../data/models/torchtitan-llama3-405b.json';
import m59 from '../../data/models/torchtitan-llama3-70b.json';
import m60 from '../../data/models/torchtitan-llama3-8b.json';
import m61 from '../../data/models/torchtitan-llama3-debugmodel.json';

/** Raw preset objects in Hugging Face config.json key style with a `_shardlens` block (id, name, aliases, source). */
export const PRESET_CONFIGS: readonly unknown[] = [
  m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24,
  m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35, m36, m37, m38, m39, m40, m41, m42, m43, m44, m45, m46, m47,
  m48, m49, m50, m51, m52, m53, m54, m55, m56, m57, m58, m59, m60, m61,
];
