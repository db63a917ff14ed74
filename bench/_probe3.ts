import { analyzeDocument } from '../server/analysis/analyze';
import { core, initCore } from '../server/analysis/core';
import { createHost } from '../server/analysis/host';
import { buildDiagnostics } from '../server/features/diagnostics';
import { buildCodeActions } from '../server/features/codeActions';
import { applyEdits } from '../server/features/edits';
import { normalizeSettings } from '../server/settings';
import { readFileSync } from 'node:fs';
const fx = (f: string) => readFileSync('test/server/fixtures/' + f, 'utf8');
void (async () => {
  await initCore();
  const docs: [string, string][] = [
    ['ds_config.json', '{\n  "train_micro_batch_size_per_gpu": 16,\n  "gradient_accumulation_steps": 1,\n  "zero_optimization": {\n    "stage": 0\n  }\n}\n'],
    ['ds_config.json', '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": { "stage": 2 }\n}\n'],
    ['pretrain.sh', fx('pretrain_llama.sh').replace('MICRO_BATCH_SIZE=1', 'MICRO_BATCH_SIZE=4')],
    ['llama3_8b.toml', fx('llama3_8b.toml').replace('mode = "selective"', 'mode = "none"')],
    ['axolotl.yaml', fx('axolotl.yaml').replace('gradient_checkpointing: true', 'gradient_checkpointing: false').replace('micro_batch_size: 2', 'micro_batch_size: 16').replace(/^deepspeed.*$/m, '')],
  ];
  for (const [name, text] of docs) {
    const a = analyzeDocument({ uri: 'file:///work/main/test/server/fixtures/' + name, version: 1, text, settings: normalizeSettings({ model: 'llama-2-7b' }) }, createHost(() => undefined), core());
    const diags = buildDiagnostics(a);
    console.log('==', name, diags.map((d) => d.code).join(','));
    for (const c of buildCodeActions(a, core(), diags)) {
      const edits = c.edit?.changes?.[a.uri] ?? [];
      const out = applyEdits(text, edits);
      const changed = out.split('\n').filter((l, i) => l !== text.split('\n')[i]).slice(0, 4);
      console.log('  A', c.title, '|', JSON.stringify(changed));
    }
  }
})();
