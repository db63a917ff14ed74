/**
 * Settings a file writes with a value only the run gives (`--micro-batch-size $MBS`, `seq_length: ${oc.env:SEQ}`), by
 * the plan path they would set, and the words an assumption standing in for them uses.
 */
import type { ConfigFacts } from './facts';
import type { PlanPath } from './paths';

/**
 * The settings a file writes with a value only the run gives (`--gradient_accumulation_steps=$grad_acc` with grad_acc
 * computed from nvidia-smi): each reader reports them as an information carrying the setting as the file spells it
 * (ConfigDiagnostic.setting, formats/common/sink.ts unresolved); that name, by the plan path it would set. The
 * resolver reads them once per resolve and hands them to gathering (Gathered.runTime).
 */
export function unresolvedSettings(primary: ConfigFacts): ReadonlyMap<PlanPath, string> {
  const out = new Map<PlanPath, string>();
  for (const d of primary.diagnostics) {
    if (d.setting === undefined) continue;
    for (const p of d.paths) if (!out.has(p)) out.set(p, d.setting);
  }
  return out;
}

/** "--nnodes and --nproc_per_node are set when the run starts" for those of `paths` a file writes that way, else undefined. */
export function runTimeNote(unresolved: ReadonlyMap<PlanPath, string>, paths: readonly PlanPath[]): string | undefined {
  const names = [...new Set(paths.filter((p) => unresolved.has(p)).map((p) => unresolved.get(p) || p))];
  if (!names.length) return undefined;
  return `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} set when the run starts (a value ShardLens could not evaluate)`;
}
