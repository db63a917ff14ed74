import { analyzeDocument } from '../server/analysis/analyze';
import { core, initCore } from '../server/analysis/core';
import { createHost } from '../server/analysis/host';
import { buildDiagnostics } from '../server/features/diagnostics';
import { buildInlayHints } from '../server/features/inlayHints';
import { buildCodeLenses } from '../server/features/codeLens';
import { normalizeSettings } from '../server/settings';
import { readFileSync, readdirSync } from 'node:fs';
void (async () => {
  await initCore();
  const docs: [string, string][] = [
    ['ds_config.json', '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": { "stage": 2 }\n}\n'],
    ['pretrain.sh', readFileSync('test/server/fixtures/pretrain_llama.sh', 'utf8').replace('TP_SIZE=${TP_SIZE:-2}', 'TP_SIZE=${TP_SIZE:-3}')],
  ];
  for (const f of readdirSync('test/server/fixtures')) docs.push([f, readFileSync('test/server/fixtures/' + f, 'utf8')]);
  for (const [name, text] of docs) {
    const a = analyzeDocument({ uri: 'file:///work/main/test/server/fixtures/' + name, version: 1, text, settings: normalizeSettings({ model: process.env.M ?? '' }) }, createHost(() => undefined), core());
    console.log('==', name, a.format, a.plan ? `dp${a.plan.parallel.dp} tp${a.plan.parallel.tp} pp${a.plan.parallel.pp} ${a.plan.model.name}` : 'no plan');
    for (const d of buildDiagnostics(a)) console.log('  D', d.code, d.severity, d.range.start.line, String(d.message).slice(0, 150));
    for (const h of buildInlayHints(a)) console.log('  H', h.position.line, h.label);
    for (const l of buildCodeLenses(a)) console.log('  L', l.command?.title);
  }
})();
