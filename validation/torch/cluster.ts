/**
 * Command lines for running the probe on a user's cluster nodes. They are text to copy (ShardLens never runs them):
 * one torchrun line per node, or a Slurm batch script whose `srun` starts torchrun once per node.
 */
import type { Plan } from '../../shared/plan/types';
import { exportProbePlan, isExportProblem, type ExportOptions } from './exportPlan';
import type { ProbeMode, ProbePlan } from './types';

export interface ClusterOptions {
  readonly mode?: ProbeMode;
  /** Folder visible from every node holding the probe, plan and report (only rank 0 writes). Default $HOME/shardlens-probe. */
  readonly sharedDir?: string;
  /** Head node address for the c10d rendezvous (default: $MASTER_ADDR on the nodes). */
  readonly headNode?: string;
  readonly port?: number;
  /** Interpreter on the nodes (default python3). */
  readonly python?: string;
  /** Run id for the rendezvous (default: derived from the plan). */
  readonly runId?: string;
  readonly export?: Omit<ExportOptions, 'ranks' | 'mode'>;
}

export interface ClusterCommands {
  readonly probePlan: ProbePlan;
  /** Files to copy into sharedDir: the plan JSON (the probe files come from the extension's dist/probe). */
  readonly planJson: string;
  /** Per node, the argument vector after the interpreter, and the same as one shell-quoted line. */
  readonly nodes: readonly { readonly node: number; readonly argv: readonly string[]; readonly line: string }[];
  /** A Slurm batch script (sbatch) that starts torchrun on every node through srun. */
  readonly slurmScript: string;
  readonly notes: readonly string[];
}

/** POSIX single-quoting of one argument, for text the user copies into a shell. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Quotes a list of arguments; `$VAR` references listed in `vars` stay unquoted so the node's shell expands them. */
function joinArgs(argv: readonly string[], keep: (a: string) => boolean = () => false): string {
  return argv.map((a) => (keep(a) ? a : shellQuote(a))).join(' ');
}

/** Builds the commands; bad input (not whole nodes, layout mismatch) comes back as a message, never an exception. */
export function clusterCommands(plan: Plan, nodes: number, gpusPerNode: number, o: ClusterOptions = {}): ClusterCommands | { readonly problem: string } {
  if (!Number.isInteger(nodes) || nodes < 1 || !Number.isInteger(gpusPerNode) || gpusPerNode < 1) {
    return { problem: `nodes and GPUs per node must be positive integers (got ${nodes} × ${gpusPerNode})` };
  }
  const ranks = nodes * gpusPerNode;
  const exported = exportProbePlan(plan, { maxParameters: Number.MAX_SAFE_INTEGER, maxSeqLen: Number.MAX_SAFE_INTEGER, maxMicroBatch: Number.MAX_SAFE_INTEGER, ...o.export, ranks, mode: o.mode, deepspeedAvailable: true });
  if (isExportProblem(exported)) return { problem: exported.message };
  const notes = [...exported.notes];
  if (plan.parallel.dp !== ranks && plan.parallel.tp * plan.parallel.pp * plan.parallel.cp === 1) {
    notes.push(`The plan's data-parallel size is ${plan.parallel.dp}; these commands run ${ranks} ranks (${nodes} × ${gpusPerNode}).`);
  }
  const dir = o.sharedDir ?? '$HOME/shardlens-probe';
  const runId = o.runId ?? `shardlens-${exported.probePlan.parallel.mode}-${ranks}`;
  const mode = exported.probePlan.parallel.mode;
  const { nodes: perNode, slurmScript } = torchrunLines(`${dir}/probe/shardlens_probe.py`,
    ['--plan', `${dir}/plan.json`, '--mode', mode, '--out', `${dir}/report.json`], nodes, gpusPerNode,
    { ...o, sharedDir: dir, runId }, 'Copy ShardLens dist/probe and plan.json into the shared folder first; rank 0 writes report.json there.');
  return { probePlan: exported.probePlan, planJson: JSON.stringify(exported.probePlan, null, 1), nodes: perNode, slurmScript, notes };
}

/** Where and how torchrun starts on the nodes (shared by the probe's and the profile sweep's commands). */
export interface TorchrunNodes {
  readonly sharedDir: string;
  readonly runId: string;
  readonly headNode?: string;
  readonly port?: number;
  readonly python?: string;
}

/**
 * One torchrun line per node and a Slurm script for `script` with `scriptArgs` (argument vectors; the lines quote
 * every argument, leaving $VAR references for the node's shell), from the shared folder's probe/ copy.
 */
export function torchrunLines(script: string, scriptArgs: readonly string[], nodes: number, gpusPerNode: number, o: TorchrunNodes, note: string): Pick<ClusterCommands, 'nodes' | 'slurmScript'> {
  const head = o.headNode ?? '$MASTER_ADDR';
  const py = o.python ?? 'python3';
  const common = (nodeRank: string) => [
    `${o.sharedDir}/probe/torchrun_compat.py`, '--nnodes', String(nodes), '--nproc_per_node', String(gpusPerNode), '--node_rank', nodeRank,
    '--rdzv_backend', 'c10d', '--rdzv_endpoint', `${head}:${o.port ?? 29500}`, '--rdzv_id', o.runId, '--monitor_interval', '1',
    script, ...scriptArgs,
  ];
  // Arguments that contain $VAR are left for the node's shell (double-quoted so spaces survive).
  const expand = (a: string) => a.includes('$');
  const quoteVar = (a: string) => (expand(a) ? `"${a.replace(/(["\\`])/g, '\\$1')}"` : shellQuote(a));
  const perNode = Array.from({ length: nodes }, (_, i) => {
    const argv = common(String(i));
    return { node: i, argv, line: [py, ...argv].map(quoteVar).join(' ') };
  });
  const srunArgv = common('$SLURM_NODEID');
  const slurmScript = [
    '#!/bin/bash',
    `#SBATCH --job-name=${o.runId}`,
    `#SBATCH --nodes=${nodes}`,
    '#SBATCH --ntasks-per-node=1',
    `#SBATCH --gpus-per-node=${gpusPerNode}`,
    '#SBATCH --time=00:20:00',
    `# ${note}`,
    'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    `srun bash -c ${shellQuote(joinArgs([py], expand) + ' ' + srunArgv.map(quoteVar).join(' '))}`,
    '',
  ].join('\n');
  return { nodes: perNode, slurmScript };
}
