/**
 * Language server speed: time from a document change to inlay hints (analysis of the new version plus the hint
 * builder), for a typical DeepSpeed config and for a 2,000-line Megatron launch script. Goals: p95 ≤ 5 ms and ≤ 20 ms.
 * And for a DeepSpeed JSON in a 10,000-file workspace whose one referencing launcher lies last in walk order (issue
 * 16): p95 ≤ 10 ms with the launcher found, the reverse-reference index built once on the first analysis.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeDocument } from '../server/analysis/analyze';
import { core, initCore } from '../server/analysis/core';
import { createHost, type CachingHost } from '../server/analysis/host';
import { DS_AUTO, manyFiles, workspace } from '../test/hostile/workspace';
import { buildInlayHints } from '../server/features/inlayHints';
import { normalizeSettings } from '../server/settings';

const FIXTURES = 'test/server/fixtures';

/** A launch script padded to about `lines` lines with the comments, exports and helper code real scripts carry. */
export function longScript(lines: number): string {
  const base = readFileSync(`${FIXTURES}/pretrain_llama.sh`, 'utf8').split('\n');
  const pad: string[] = [];
  for (let i = 0; pad.length + base.length < lines; i++) {
    pad.push(`# Step ${i}: settings for run variant ${i}.`, `export NCCL_SETTING_${i}=\${NCCL_SETTING_${i}:-${i % 7}}`, `LOG_DIR_${i}="logs/run_${i}"`,
      `if [ -n "$DEBUG" ]; then echo "variant ${i}"; fi`);
  }
  return [base[0] ?? '', ...pad, ...base.slice(1)].join('\n');
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

interface Times {
  /** Wall-clock milliseconds per iteration. */
  readonly wall: number[];
  /** CPU milliseconds of this process per iteration (unaffected by other processes on a busy machine). */
  readonly cpu: number[];
}

/** Milliseconds from a change (one value edited) to the hints of the new version, per iteration. */
function changeToHints(uri: string, text: string, needle: RegExp, values: readonly string[], n: number, root?: string, given?: CachingHost): Times {
  const settings = normalizeSettings({});
  const host = given ?? createHost(() => undefined, () => root);
  const api = core();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = text.replace(needle, (m) => m.replace(/\d+$/, values[i % values.length] ?? '1'));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const a = analyzeDocument({ uri, version: i, text: t, settings }, host, api);
    buildInlayHints(a);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const warm = Math.floor(n / 10);
  return { wall: wall.slice(warm), cpu: cpu.slice(warm) };
}

/** A DeepSpeed JSON in a 10,000-file workspace: the first analysis (builds the index) and then edits. */
function largeWorkspace(): Record<string, number | string> {
  const ws = workspace('shardlens-bench-');
  try {
    const ds = ws.file('ds_config.json', DS_AUTO);
    manyFiles(ws, 10_000);
    const uri = pathToFileURL(ds).toString();
    const host = createHost(() => undefined, () => ws.dir);
    const settings = normalizeSettings({});
    const t0 = performance.now();
    const first = analyzeDocument({ uri, version: 0, text: DS_AUTO, settings }, host, core());
    const firstMs = performance.now() - t0;
    const edits = changeToHints(uri, DS_AUTO, /"stage":\d+/, ['3', '2', '1'], 500, ws.dir, host);
    return {
      '10,000-file workspace: first analysis, builds the index (ms)': firstMs,
      '10,000-file workspace: launchers found / expected': `${first.referenced.length} / 1 (micro batch ${first.plan?.training.microBatch ?? '?'}, from the launcher: 4)`,
      '10,000-file workspace: change → hints p50 (ms)': percentile(edits.wall, 50),
      '10,000-file workspace: change → hints p95 (ms, goal ≤ 10)': percentile(edits.wall, 95),
      '10,000-file workspace: change → hints p95 CPU (ms)': percentile(edits.cpu, 95),
    };
  } finally {
    ws.cleanup();
  }
}

export async function benchServer(): Promise<Record<string, number | string>> {
  await initCore();
  const ds = readFileSync(`${FIXTURES}/ds_zero2.json`, 'utf8');
  const typical = changeToHints('file:///bench/ds_config.json', ds, /"train_micro_batch_size_per_gpu": \d+/, ['1', '2', '4', '8'], 2000);
  // In a workspace, a DeepSpeed JSON is also looked up in the files that reference it (a bounded scan, cached briefly).
  const wsDs = readFileSync('examples/deepspeed/ds_config_zero3.json', 'utf8');
  const ws = changeToHints(pathToFileURL(resolve('examples/deepspeed/ds_config_zero3.json')).toString(), wsDs, /"stage": \d+/, ['3', '2'], 500, resolve('examples'));
  const script = longScript(2000);
  const long = changeToHints('file:///bench/pretrain_llama.sh', script, /MICRO_BATCH_SIZE=\d+/, ['1', '2', '4'], 300);
  const large = largeWorkspace();
  return {
    ...large,
    'change → hints, DeepSpeed JSON p50 (ms)': percentile(typical.wall, 50),
    'change → hints, DeepSpeed JSON p95 (ms, goal ≤ 5)': percentile(typical.wall, 95),
    'change → hints, DeepSpeed JSON p95 CPU (ms)': percentile(typical.cpu, 95),
    'change → hints, DeepSpeed JSON in examples/ (reverse references) p50 (ms)': percentile(ws.wall, 50),
    'change → hints, DeepSpeed JSON in examples/ (reverse references) p95 (ms)': percentile(ws.wall, 95),
    [`change → hints, ${script.split('\n').length}-line launch script p50 (ms)`]: percentile(long.wall, 50),
    'change → hints, 2,000-line launch script p95 (ms, goal ≤ 20)': percentile(long.wall, 95),
    'change → hints, 2,000-line launch script p95 CPU (ms)': percentile(long.cpu, 95),
  };
}

if (process.argv[1]?.endsWith('server.ts')) {
  void benchServer().then((f) => {
    for (const [k, v] of Object.entries(f)) console.log(`${k.padEnd(60)} ${typeof v === 'number' ? v.toFixed(3) : v}`);
  });
}
