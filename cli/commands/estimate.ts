/** `shardlens estimate <file|folder> [--model …] [--gpus NxGPU] [--json]`: per-stage memory, sharded vs replicated. */
import { statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { estimateMemory } from '../../shared/memory/estimate';
import type { MemoryEstimate, StageMemory } from '../../shared/plan/result';
import { detectFormat } from '../../formats/index';
import { inputLines, readInputs } from '../../shared/plan/inputs';
import { formatBytes } from '../../shared/units';
import { withFlag, type Flags, type ParsedArgs } from '../args';
import { InputError, loadConfig, workspaceOf } from '../load';
import { allProblems, hasErrors, planSummary, printNotes } from '../report';
import { verdict } from '../../shared/wording/verdict';
import { gpusOf } from '../../shared/time/shape';
import { missingFileLabel } from '../../shared/wording/references';
import { nodeHost } from '../host';
import { checkFile } from '../../server/io/read';
import { SCAN_EXT } from '../../server/io/referenceIndex';
import { walkFiles } from '../../server/io/walk';

function isFolder(p: string): boolean {
  try { return statSync(p).isDirectory(); } catch { return false; }
}

/** Columns of the per-stage table: label and the terms summed into it. */
export const COLUMNS: readonly [string, readonly string[]][] = [
  ['params', ['parameters', 'fp8WeightCache']],
  ['grads', ['gradients', 'gradAccumBuffer']],
  ['optim', ['optimizerStates', 'masterWeights']],
  ['activ', ['activations', 'embeddingActivations']],
  ['logits', ['logits']],
  ['buffers', ['commBuffers', 'gatheredParameters', 'engineCopies']],
  ['overhead', ['cudaContext']],
];

function sumTerms(s: StageMemory, names: readonly string[]): number {
  let b = 0;
  for (const n of names) b += (s.terms as Record<string, { bytes: number } | undefined>)[n]?.bytes ?? 0;
  return b;
}

/** Prints the stages as a table, one row per distinct stage kind (identical middle stages are merged). */
function printStages(title: string, stages: readonly StageMemory[], gpuBytes: number): void {
  const head = ['stage', ...COLUMNS.map((c) => c[0]), 'allocated', 'reserved', 'fits'];
  const rows: string[][] = [];
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i];
    let j = i;
    while (j + 1 < stages.length && stages[j + 1].kind === s.kind && stages[j + 1].peakReservedBytes === s.peakReservedBytes) j++;
    const label = j > i ? `${s.stage}–${stages[j].stage}` : `${s.stage}`;
    rows.push([label, ...COLUMNS.map(([, t]) => formatBytes(sumTerms(s, t), 'GiB')), formatBytes(s.peakAllocatedBytes, 'GiB'), formatBytes(s.peakReservedBytes, 'GiB'), s.peakReservedBytes <= gpuBytes ? 'yes' : 'NO']);
    i = j;
  }
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k].length)));
  console.log(`\n${title}`);
  console.log('  ' + head.map((h, k) => h.padStart(widths[k])).join('  '));
  for (const r of rows) console.log('  ' + r.map((c, k) => c.padStart(widths[k])).join('  '));
}

/**
 * The editor's verdict (shared/wording/verdict.ts): what it rests on, assumed inputs and a missing referenced DeepSpeed
 * file included; undefined without a peak stage.
 */
function verdictOf(est: MemoryEstimate, loaded: Awaited<ReturnType<typeof loadConfig>>, problems: ReturnType<typeof allProblems>) {
  const peak = est.stages[est.peakStage];
  const plan = loaded.resolved.plan;
  if (!peak || !plan) return undefined;
  const missing = loaded.primary.references.find((r) => r.kind === 'deepspeed' && problems.some((p) => p.code === 'reference-missing' && p.message.includes(`"${r.target}"`)));
  return verdict({
    fits: est.fits, peakReservedBytes: peak.peakReservedBytes, gpuMemoryBytes: est.gpuMemoryBytes, gpuName: plan.cluster.gpu.name, units: 'GiB',
    assumptions: loaded.resolved.assumptions, shapeFreeBytes: peak.modelStatesBytes, ...(missing ? { missingFile: missingFileLabel(missing.target) } : {}),
  });
}

/** The JSON of one file's estimate: the traceable result plus file, format, plan summary, assumptions and problems. */
function toJson(path: string, format: string | null, est: MemoryEstimate | undefined, loaded: Awaited<ReturnType<typeof loadConfig>>, problems: ReturnType<typeof allProblems>) {
  const plan = loaded.resolved.plan;
  const v = est && !hasErrors(problems) ? verdictOf(est, loaded, problems) : undefined;
  const inputs = plan ? readInputs(plan, loaded.resolved.factsUsed) : undefined;
  return {
    file: path,
    format,
    ...(loaded.configuration ? { configuration: loaded.configuration.name, configurations: loaded.configuration.all } : {}),
    training: inputs?.training,
    model: inputs?.model,
    cluster: inputs?.cluster,
    ...(inputs?.lora ? { lora: inputs.lora } : {}),
    parameters: est?.model ?? { parameters: 0, trainableParameters: 0, activeParameters: 0 },
    fits: est ? est.fits && !hasErrors(problems) : false,
    ...(v ? { verdict: { headline: v.headline, conditional: v.conditional, assumed: v.assumed } } : {}),
    gpu: plan?.cluster.gpu.name,
    gpuMemoryBytes: est?.gpuMemoryBytes ?? 0,
    worldSize: plan ? gpusOf(plan) : 0,
    layout: plan ? { dp: plan.parallel.dp, tp: plan.parallel.tp, pp: plan.parallel.pp, vpp: plan.parallel.vpp, cp: plan.parallel.cp, ep: plan.parallel.ep, sp: plan.parallel.sp, zero: plan.parallel.sharding.stage, sharding: plan.parallel.sharding.style, fsdpStrategy: plan.parallel.sharding.fsdpStrategy } : undefined,
    layoutSources: plan ? Object.fromEntries((['tp', 'pp', 'cp', 'ep', 'sharding.stage', 'sharding.style'] as const).map((k) => [k, plan.sources[`parallel.${k}`]])) : undefined,
    peakStage: est?.peakStage ?? 0,
    stages: est?.stages ?? [],
    replicated: est?.replicated ?? { stages: [] },
    hostBytesPerNode: est?.hostBytesPerNode ?? 0,
    assumptions: loaded.resolved.assumptions,
    problems,
  };
}

/** Estimates one file; returns the exit code (0 fits, 1 does not fit, 2 bad input). */
export async function estimateFile(file: string, flags: Flags, quietHeader = false): Promise<{ code: number; json: unknown }> {
  const loaded = await loadConfig(file, flags);
  const plan = loaded.resolved.plan;
  const est = plan ? estimateMemory(plan) : undefined;
  const problems = allProblems(loaded, est?.problems ?? []);
  // A file no reader recognises has no format (the parser's placeholder id is not shown).
  const format = loaded.primary.diagnostics.some((d) => d.code === 'unknown-format') ? null : loaded.primary.format;
  const json = toJson(loaded.path, format, est, loaded, problems);
  // A script that runs no training command has nothing to estimate: not bad input (a folder of scripts stays green).
  const idle = !plan && loaded.resolved.noTraining === true && !hasErrors(problems);
  const code = idle ? 0 : !est || hasErrors(problems) || est.stages.length === 0 ? 2 : est.fits ? 0 : 1;
  if (!flags.json) {
    const fn = loaded.configuration;
    if (!quietHeader) console.log(`${relative(process.cwd(), loaded.path) || loaded.path}${fn ? ` → ${fn.name}()` : ''}  (${format ?? 'not a config ShardLens reads'})`);
    // The module's other configurations, each one --config away.
    const others = fn?.all.filter((n) => n !== fn.name) ?? [];
    if (others.length) console.log(`Other configurations in this module (--config <name>): ${others.join(', ')}`);
    if (plan && est) {
      console.log(planSummary(plan, est.model.parameters));
      console.log(`\nRead (value and where it came from):\n${inputLines(readInputs(plan, loaded.resolved.factsUsed)).map((l) => '  ' + l).join('\n')}`);
      const gpu = est.gpuMemoryBytes;
      printStages(`Per GPU, sharded as configured (peak on pipeline stage ${est.peakStage}; GPU memory ${formatBytes(gpu, 'GiB')}):`, est.stages, gpu);
      printStages('Per GPU, replicated data parallel (no ZeRO/FSDP sharding, no offload):', est.replicated.stages, gpu);
      if (est.hostBytesPerNode > 0) console.log(`\nHost memory per node for offloaded or paged states: ${formatBytes(est.hostBytesPerNode, 'GiB')}`);
      const peak = est.stages[est.peakStage];
      const v = code === 2 ? undefined : verdictOf(est, loaded, problems);
      if (!v || !peak) {
        console.log(`\nCANNOT ESTIMATE AS WRITTEN: peak ${formatBytes(peak?.peakReservedBytes, 'GiB')} reserved per GPU on pipeline stage ${est.peakStage} of ${formatBytes(gpu, 'GiB')}.`);
      } else {
        console.log(`\n${code === 0 ? 'FITS' : 'DOES NOT FIT'}: ${v.headline} (peak on pipeline stage ${est.peakStage}, reserved).`);
      }
    } else if (idle) {
      console.log('No estimate: the script runs no training command and gives no model, batch or layout value.');
    } else {
      console.log('No estimate: the file does not describe a trainable plan yet.');
    }
    printNotes(problems, loaded.resolved.assumptions);
  }
  return { code, json };
}

/** Config files in a folder (a bounded walk that skips links out of it, loops and dangling links) that ShardLens recognises. */
function configsIn(dir: string, flags: Flags): { files: string[]; truncated?: string } {
  const ws = workspaceOf(dir, flags);
  const host = nodeHost(ws);
  // Python files too: a module of torchtitan configuration functions is a config (detection leaves every other alone).
  const walk = walkFiles(dir, { roots: ws.roots, include: (n) => SCAN_EXT.test(n) || /\.py$/i.test(n), maxFiles: 2000, maxDepth: 8 });
  const files = walk.files.filter((p) => {
    const text = host.readFile(p);
    const fmt = text !== undefined ? detectFormat(p, text) : undefined;
    return !!fmt && fmt !== 'hf-config';
  });
  return walk.truncated ? { files, truncated: walk.truncated } : { files };
}

export async function estimateCommand(args: ParsedArgs): Promise<number> {
  let flags = args.flags;
  const target = args.positionals[0];
  if (!target) throw new InputError('usage: shardlens estimate <file|folder> [--model <preset|config.json>] [--gpus <N>x<GPU>] [--config <function>] [--json]');
  const abs = resolve(target);
  let files = [target];
  const kind = checkFile(abs);
  if (!kind.ok && kind.reason === 'missing') throw new InputError(`${target}: no such file or folder`);
  if (!kind.ok && kind.reason === 'not-a-file' && isFolder(abs)) {
    const found = configsIn(abs, flags);
    if (found.truncated) process.stderr.write(`shardlens: ${target}: stopped at the ${found.truncated} budget; some files were not looked at\n`);
    files = found.files;
    if (files.length === 0) throw new InputError(`${target}: no training config files found`);
    // Every file of the folder belongs to the folder's workspace (its settings, its references).
    if (flags.workspace === undefined) flags = withFlag(flags, 'workspace', workspaceOf(abs, flags).boundary);
  }
  let worst = 0;
  const results: unknown[] = [];
  for (const f of files) {
    if (files.length > 1 && !args.flags.json) console.log(`\n${'═'.repeat(100)}`);
    try {
      const { code, json } = await estimateFile(f, flags);
      results.push(json);
      worst = Math.max(worst, code);
    } catch (err) {
      if (!(err instanceof InputError) || files.length === 1) throw err;
      console.error(`${f}: ${err.message}`);
      worst = 2;
    }
  }
  if (args.flags.json) console.log(JSON.stringify(files.length === 1 ? results[0] : results, null, 2));
  return worst;
}
