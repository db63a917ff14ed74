/**
 * `shardlens profile <file…> --trust [--gpus NxGPU] [--ranks N] [--out profile.json] [--quick] [--json]`: measures this
 * machine for the shapes and collectives of the given configs and writes a profile file that `--profile` (estimate,
 * simulate, plan) then uses instead of the catalog's curves. With `--cluster NODESxGPUS` it launches nothing: it writes
 * the measurement request and prints the Slurm/torchrun lines to run on the cluster.
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeUserFile } from '../../server/io/write';
import type { Plan } from '../../shared/plan/types';
import { profileRequest } from '../../shared/time/profileRequest';
import { torchrunLines } from '../../validation/torch/cluster';
import { runProfile } from '../../validation/torch/profile';
import { intFlag, stringFlag, type ParsedArgs } from '../args';
import { abortOnSignals } from '../signals';
import { requireTrust } from './run';
import { InputError, loadConfig } from '../load';

const USAGE = 'usage: shardlens profile <file…> --trust [--gpus <N>x<GPU>] [--ranks N] [--out profile.json] [--quick] [--json]\n'
  + '       shardlens profile <file…> --cluster <nodes>x<gpus> [--out profile.json] [--quick] [--json]';

/** The plans of every file named (a file that does not resolve is an input error naming it). */
async function plansOf(files: readonly string[], flags: ParsedArgs['flags']): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const f of files) {
    const loaded = await loadConfig(f, flags);
    if (!loaded.resolved.plan) throw new InputError(`${f}: the config does not resolve to a plan to measure for`);
    plans.push(loaded.resolved.plan);
  }
  return plans;
}

function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `--cluster 2x8` → nodes and GPUs per node. */
function clusterOf(v: string | true | undefined): { nodes: number; gpusPerNode: number } | undefined {
  if (v === undefined) return undefined;
  const m = typeof v === 'string' ? /^(\d+)x(\d+)$/i.exec(v.trim()) : null;
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new InputError('--cluster expects <nodes>x<gpus per node>, e.g. 2x8');
  return { nodes: Number(m[1]), gpusPerNode: Number(m[2]) };
}

export async function profileCommand(args: ParsedArgs): Promise<number> {
  if (!args.positionals.length) throw new InputError(USAGE);
  const outFlag = stringFlag(args.flags, 'out', 'profile.json');
  if (typeof outFlag === 'object') throw new InputError(outFlag.error);
  const out = resolve(outFlag ?? 'shardlens-profile.json');
  // Checked before a sweep of minutes: the profile (and a cluster's request) go into an existing folder.
  if (!isFolder(dirname(out))) throw new InputError(`--out ${outFlag ?? out}: the folder ${dirname(out)} does not exist`);
  const cluster = clusterOf(args.flags.cluster);
  if (!cluster) requireTrust(args.flags, 'profile', args.positionals.join(', '));
  const plans = await plansOf(args.positionals, args.flags);
  const quick = args.flags.quick === true;
  if (cluster) {
    // Text to copy: ShardLens never runs commands on other machines.
    const request = profileRequest(plans, { quick, ranks: cluster.nodes * cluster.gpusPerNode, gpusPerNode: cluster.gpusPerNode });
    const requestPath = writeUserFile(resolve(dirname(out), 'shardlens-profile-request.json'), JSON.stringify(request));
    const dir = '$HOME/shardlens-profile';
    const lines = torchrunLines(`${dir}/probe/profile_sweep.py`, ['--request', `${dir}/shardlens-profile-request.json`, '--out', `${dir}/shardlens-profile.json`],
      cluster.nodes, cluster.gpusPerNode, { sharedDir: dir, runId: `shardlens-profile-${cluster.nodes}x${cluster.gpusPerNode}` },
      'Copy ShardLens dist/probe and shardlens-profile-request.json into the shared folder first; rank 0 writes shardlens-profile.json there.');
    if (args.flags.json) console.log(JSON.stringify({ request: requestPath, ...lines }, null, 2));
    else {
      console.log(`Measurement request written to ${requestPath} (${request.gemm.length} GEMMs, ${request.attention.length} attention shapes, ${request.collectives.length} collective layouts).`);
      console.log('Run on every node (or submit the Slurm script below), then pass the profile with --profile:\n');
      for (const n of lines.nodes) console.log(`node ${n.node}: ${n.line}`);
      console.log(`\n${lines.slurmScript}`);
    }
    return 0;
  }
  const ranks = args.flags.ranks === undefined ? undefined : intFlag(args.flags, 'ranks', 1, 4096);
  if (typeof ranks === 'object') throw new InputError(ranks.error);
  const python = stringFlag(args.flags, 'python', '/usr/bin/python3');
  if (typeof python === 'object') throw new InputError(python.error);
  const ctrl = abortOnSignals();
  // The request's collectives span the ranks launched here (one per GPU, or 2 CPU ranks, unless --ranks says).
  const r = await runProfile({
    requestFor: (n, cpu) => profileRequest(plans, { quick: quick || cpu, ranks: n, gpusPerNode: n }), ranks, oversubscribe: args.flags.oversubscribe === true, out, signal: ctrl.signal, python,
    onLine: (l) => process.stderr.write(`${l}\n`),
  });
  if (!r.ok) {
    console.error(`shardlens: profile failed: ${r.message}${r.outputTail ? `\n${r.outputTail}` : ''}`);
    return 1;
  }
  const p = r.profile;
  if (args.flags.json) console.log(JSON.stringify({ path: r.path, argv: r.argv, profile: p }, null, 2));
  else {
    console.log(`Profile of ${p.device} (${p.backend}, ${p.worldSize} ranks) written to ${r.path}:`);
    console.log(`  ${p.gemm.length} GEMM shapes, ${p.attention.length} attention shapes, ${p.collectives.length} collective measurements, HBM ${(p.hbmBytesPerSecond / 1e9).toFixed(1)} GB/s`);
    for (const w of p.warnings) console.log(`  note: ${w}`);
    console.log(`Use it: shardlens simulate <file> --profile ${r.path}`);
  }
  return 0;
}
