/** Shared pieces of the CLI's text output: problems with their places, assumptions, a plan summary. */
import type { ConfigDiagnostic, Fact } from '../shared/plan/facts';
import { mergeProblems } from '../shared/plan/problems';
import type { Assumption } from '../shared/plan/resolve';
import type { Plan, Problem } from '../shared/plan/types';
import { formatBytes, formatCount } from '../shared/units';
import { nvlinkDomainOf } from '../shared/comm/links';
import type { Loaded } from './load';

/** "file:line:col" of the first input of a problem that came from a file, else the file. */
export function whereOf(p: Problem, facts: Readonly<Record<string, Fact>>, file: string): string {
  for (const path of p.paths) {
    const r = facts[path]?.source.range;
    const uri = facts[path]?.source.uri;
    if (r) return `${uri && !uri.endsWith(file) ? uri.replace(/^file:\/\//, '') : file}:${r.start.line + 1}:${r.start.character + 1}`;
  }
  return file;
}

/** Problems and parse diagnostics of a loaded file, each finding once, with its place, for JSON and text output. */
export function allProblems(l: Loaded, extra: readonly Problem[] = []): { severity: string; code: string; message: string; where: string; paths: readonly string[] }[] {
  return mergeProblems(l.primary.diagnostics, l.resolved.problems, extra).map((p) => {
    const range = (p as Partial<ConfigDiagnostic>).range;
    const where = range ? `${l.path}:${range.start.line + 1}:${range.start.character + 1}` : whereOf(p, l.resolved.factsUsed, l.path);
    return { severity: p.severity, code: p.code, message: p.message, paths: p.paths, where };
  });
}

/** True when any problem is an error (the input cannot be estimated as written). */
export function hasErrors(problems: readonly { severity: string }[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** Prints problems and assumptions below a report. */
export function printNotes(problems: ReturnType<typeof allProblems>, assumptions: readonly Assumption[]): void {
  if (assumptions.length) {
    console.log('\nAssumed (the files do not say, or only at run time; change with the setting or flag shown):');
    for (const a of assumptions) console.log(`  • ${a.detail}${a.setting ? `  [${a.setting}]` : ''}`);
  }
  if (problems.length) {
    console.log('\nProblems:');
    for (const p of problems) console.log(`  ${p.severity.padEnd(7)} ${p.where}: ${p.message}`);
  }
}

/** One-paragraph summary of the plan: model, cluster, layout and batch. */
export function planSummary(plan: Plan, parameters: number): string {
  const { model, training: t, parallel: par, cluster: c } = plan;
  const world = par.dp * par.tp * par.pp * par.cp;
  const sh = par.sharding;
  const shard = sh.style === 'fsdp' || sh.style === 'fsdp2' ? `FSDP ${sh.fsdpStrategy ?? ''}`.trim()
    : sh.style === 'megatron-distopt' ? 'distributed optimizer' : sh.stage > 0 ? `ZeRO-${sh.stage}` : 'no sharding';
  const off = [sh.offloadOptimizer !== 'none' ? `optimizer→${sh.offloadOptimizer}` : '', sh.offloadParams !== 'none' ? `params→${sh.offloadParams}` : ''].filter(Boolean).join(', ');
  const layout = [`dp ${par.dp}`, `tp ${par.tp}${par.sp ? '+sp' : ''}`, `pp ${par.pp}${par.vpp > 1 ? `×v${par.vpp}` : ''}${par.pp > 1 ? ` (${par.schedule})` : ''}`, par.cp > 1 ? `cp ${par.cp}` : '', par.ep > 1 ? `ep ${par.ep}` : ''].filter(Boolean).join(' · ');
  return [
    `Model    ${model.name} — ${formatCount(parameters)} parameters${model.mtpLayers ? ` (with ${model.mtpLayers} multi-token-prediction module${model.mtpLayers === 1 ? '' : 's'})` : ''}`,
    `Cluster  ${world} × ${c.gpu.name} (${formatBytes(c.gpu.memoryBytes, 'GiB')}), ${c.gpusPerNode} per node${nvlinkDomainOf(c) > c.gpusPerNode && world > c.gpusPerNode ? `, NVLink across ${Math.min(world, nvlinkDomainOf(c))} GPUs` : ''}`,
    `Layout   ${layout} · ${shard}${off ? ` · offload ${off}` : ''}`,
    `Batch    micro ${t.microBatch} × accumulation ${t.gradAccum} × dp ${par.dp} = ${t.globalBatch} sequences of ${t.seqLen} tokens · ${t.precision} · ${t.optimizer} · recompute ${t.recompute}`,
  ].join('\n');
}
