/** Builds hostile workspaces in a temporary folder: configs, symlinks out, FIFOs, self-links, huge and many files. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createDiskHost } from '../../server/io/diskHost';
import { workspaceRoots } from '../../server/io/roots';

/** A DeepSpeed JSON whose batch and precision are "auto" (filled by the launcher that references it). */
export const DS_AUTO = JSON.stringify({
  zero_optimization: { stage: 2 }, bf16: { enabled: 'auto' }, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 'auto',
});

/** An Axolotl config that references `ds` and sets what the DeepSpeed JSON leaves to it (bf16, micro 4, sequence 4096). */
export const axolotl = (ds: string) => `base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: true\ndeepspeed: ${ds}\n`;

export interface Workspace {
  readonly dir: string;
  file(rel: string, text: string): string;
  link(rel: string, target: string): string;
  fifo(rel: string): string;
  cleanup(): void;
}

export function workspace(prefix = 'shardlens-hostile-'): Workspace {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const at = (rel: string) => {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    return p;
  };
  return {
    dir,
    file: (rel, text) => { const p = at(rel); writeFileSync(p, text); return p; },
    link: (rel, target) => { const p = at(rel); symlinkSync(target, p); return p; },
    fifo: (rel) => {
      const p = at(rel);
      const r = spawnSync('mkfifo', [p]);
      if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
      return p;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The Node host the CLI and the server use, rooted at the workspace. */
export const hostOf = (ws: Workspace) => createDiskHost({ root: ws.dir, roots: workspaceRoots([ws.dir]) });

/** File kinds of a large workspace (code, docs, data and config-like files mixed, as in a model zoo checkout). */
const KINDS: readonly [string, (i: number) => string][] = [
  ['yaml', (i) => `run_name: run_${i}\nlearning_rate: 3e-4\n${i % 10 === 0 ? `deepspeed: configs/other_${i}.json\n` : ''}`],
  ['py', (i) => `def step_${i}():\n    return ${i}\n`],
  ['json', (i) => `{"id": ${i}, "name": "item_${i}"}\n`],
  ['md', (i) => `# Note ${i}\nSee run_${i}.json for details.\n`],
  ['sh', (i) => `#!/bin/bash\necho "job ${i}"\n`],
  ['txt', (i) => `line ${i}\n`],
  ['toml', (i) => `[job]\nid = ${i}\n`],
];

/**
 * Fills a workspace with `n` files in nested folders (50 packages × 7 subfolders) and puts the one launcher that
 * references `ds_config.json` last in walk order (zz_last/zzz/train.yaml), where a bounded walk never got to it.
 */
export function manyFiles(ws: Workspace, n: number): { launcher: string } {
  for (let i = 0; i < n - 1; i++) {
    const [ext, body] = KINDS[i % KINDS.length];
    ws.file(`pkg${String(i % 50).padStart(2, '0')}/sub${i % 7}/file${i}.${ext}`, body(i));
  }
  return { launcher: ws.file('zz_last/zzz/train.yaml', axolotl('../../ds_config.json')) };
}
