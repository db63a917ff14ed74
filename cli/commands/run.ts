/** `shardlens validate`, `shardlens probe` and `shardlens plan`: commands that run or search beyond one estimate. */
import { runValidation } from '../../validation/index';
import { VALIDATION_MODES } from '../../validation/types';
import { parseValidateFlags, progressLine, reportExitCode } from '../../validation/cliSupport';
import { formatReportText } from '../../validation/report/text';
import { checkProbeOptions, probeCommand } from '../../validation/torch/cliCommand';
import { oracleCommand } from '../../validation/torch/oracleCli';
import { planLayouts } from '../../shared/planner/plan-layouts';
import { formatBytes, formatSeconds } from '../../shared/units';
import { readTextFile } from '../../server/io/read';
import { dirname, resolve } from 'node:path';
import { abortOnSignals } from '../signals';
import { intFlag, type Flags, type ParsedArgs } from '../args';
import { InputError, loadConfig, type Loaded } from '../load';
import { allProblems, hasErrors, printNotes } from '../report';

/** Reads an integer flag or throws InputError. */
function int(flags: Flags, name: string, fallback: number, max?: number): number {
  const v = intFlag(flags, name, fallback, max);
  if (typeof v !== 'number') throw new InputError(v.error);
  return v;
}

/**
 * Commands that launch processes run only with --trust: a cloned repository decides what its configs say, and a
 * launch must be the user's explicit choice for that folder (the extension passes --trust only in a trusted workspace).
 */
export function requireTrust(flags: Flags, what: string, file: string): void {
  if (flags.trust === true) return;
  throw new InputError(`${what} launches processes for ${file}; run it only on a folder you trust, with --trust`);
}

/** A string flag's value (undefined when absent), or InputError for a bare flag. */
function str(flags: Flags, name: string, example: string): string | undefined {
  const v = flags[name];
  if (v === true || v === '') throw new InputError(`--${name} needs a value, e.g. --${name} ${example}`);
  return v;
}

/** Loads the file and returns its plan, or throws InputError naming the problems. */
async function planOf(file: string | undefined, usage: string, flags: Flags) {
  if (!file) throw new InputError(usage);
  const loaded = await loadConfig(file, flags);
  const problems = allProblems(loaded);
  if (!loaded.resolved.plan || hasErrors(problems)) {
    printNotes(problems, loaded.resolved.assumptions);
    throw new InputError(`${file}: the config does not resolve to a plan that can run (see the problems above)`);
  }
  return { loaded, plan: loaded.resolved.plan, problems };
}

export async function validateCommand(args: ParsedArgs): Promise<number> {
  const usage = 'usage: shardlens validate <file> --trust [--ranks N] [--modes ddp,zero1,zero2,zero3] [--steps K] [--json]';
  const f = args.flags;
  const parsed = parseValidateFlags({ ranks: str(f, 'ranks', '4'), modes: str(f, 'modes', 'ddp,zero3'), steps: str(f, 'steps', '5') });
  if ('error' in parsed) throw new InputError(parsed.error);
  if (!args.positionals[0]) throw new InputError(usage);
  requireTrust(f, 'validate', args.positionals[0]);
  const { loaded, plan } = await planOf(args.positionals[0], usage, f);
  const ctrl = abortOnSignals();
  const report = await runValidation({
    plan, ranks: parsed.ranks ?? 4, steps: parsed.steps ?? 5, modes: parsed.modes ?? [...VALIDATION_MODES], signal: ctrl.signal,
    // Progress always goes to stderr as "[k/100] message": the extension reads it, and it never mixes with --json.
    onProgress: (p) => process.stderr.write(`${progressLine(p)}\n`),
  });
  const out = { ...report, configPath: loaded.path };
  if (args.flags.json) console.log(JSON.stringify(out, null, 2));
  else console.log(formatReportText(out));
  return reportExitCode(out);
}

export async function probeCliCommand(args: ParsedArgs): Promise<number> {
  const usage = 'usage: shardlens probe <file> --trust [--ranks N] [--oversubscribe] [--mode ddp|zero-redundancy|fsdp-full|…] [--steps K] [--out report.json] [--json]\n'
    + '       shardlens probe <file> --trust --fake [--layers N] [--hf-config config.json] [--python P] [--out report.json] [--json]';
  const f = args.flags;
  const options = {
    ranks: str(f, 'ranks', '2'), mode: str(f, 'mode', 'ddp'), out: str(f, 'out', 'report.json'), python: str(f, 'python', '/usr/bin/python3'),
    steps: str(f, 'steps', '3'), json: f.json === true, dataParallelOnly: f['data-parallel-only'] === true, oversubscribe: f.oversubscribe === true,
  };
  const bad = f.fake === true ? undefined : checkProbeOptions(options);
  if (bad) throw new InputError(bad);
  if (!args.positionals[0]) throw new InputError(usage);
  requireTrust(f, 'probe', args.positionals[0]);
  const { loaded, plan } = await planOf(args.positionals[0], usage, f);
  const ctrl = abortOnSignals();
  const io = { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };
  if (f.fake === true) {
    const hfConfig = hfConfigFor(loaded, str(f, 'hf-config', 'config.json') ?? (loaded.primary.format === 'hf-config' ? loaded.path : str(f, 'model', 'config.json')));
    return oracleCommand(plan, { layers: str(f, 'layers', '2'), python: options.python, out: options.out, json: options.json, hfConfig }, io, ctrl.signal);
  }
  return probeCommand(plan, options, io, ctrl.signal);
}

/** A transformers config.json for the oracle: `--hf-config`, the file itself, or `--model` when it is one (bounded read). */
function hfConfigFor(loaded: Loaded, path: string | undefined): Record<string, unknown> | undefined {
  if (!path || !/\.json$/i.test(path)) return undefined;
  try {
    const full = resolve(dirname(loaded.path), path);
    const read = readTextFile(full, { maxBytes: 1 << 20 });
    if (!read.ok) throw new InputError(`${path}: not a readable config.json under 1 MiB (${read.detail})`);
    const json = JSON.parse(read.text) as unknown;
    if (typeof json !== 'object' || json === null || Array.isArray(json) || typeof (json as Record<string, unknown>).model_type !== 'string') {
      throw new InputError(`${path}: not a transformers config.json (no model_type)`);
    }
    return json as Record<string, unknown>;
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${path}: ${String((e as Error).message ?? e)}`);
  }
}

export async function planCommand(args: ParsedArgs): Promise<number> {
  const usage = 'usage: shardlens plan <file> [--gpus <N>x<GPU>] [--top K] [--json]';
  const topK = int(args.flags, 'top', 5, 100);
  const file = args.positionals[0];
  if (!file) throw new InputError(usage);
  const loaded = await loadConfig(file, args.flags);
  const base = loaded.resolved.plan;
  if (!base) {
    printNotes(allProblems(loaded), loaded.resolved.assumptions);
    throw new InputError(`${file}: no model/cluster could be resolved to plan for`);
  }
  const result = planLayouts(base, { topK, format: loaded.primary.format });
  if (args.flags.json) {
    console.log(JSON.stringify({ file: loaded.path, format: loaded.primary.format, ...result, assumptions: loaded.resolved.assumptions }, null, 2));
    return result.layouts.length ? 0 : 1;
  }
  console.log(`Searched ${result.evaluated.toLocaleString('en-US')} layouts for ${result.gpus} × ${base.cluster.gpu.name} in ${formatSeconds(result.seconds)} (memory limit ${formatBytes(result.memoryLimitBytes, 'GiB')}${result.truncated ? '; search stopped early — see bounds' : ''}).`);
  if (result.bounds.length) console.log(`Bounds: ${result.bounds.join('; ')}`);
  const pruned = Object.entries(result.pruned).map(([k, v]) => `${k} ${v}`).join(', ');
  if (pruned) console.log(`Pruned: ${pruned}`);
  if (!result.layouts.length) {
    console.log('\nNo layout fits.' + (result.lowestMemory ? ` Lowest peak: ${formatBytes(result.lowestMemory.peakReservedBytes, 'GiB')}.` : ''));
    return 1;
  }
  console.log('\n  #   tp  pp  vpp  cp  ep    dp  sharding        micro×acc  recompute  offload   step        peak reserved');
  result.layouts.forEach((l, i) => {
    const sh = l.fsdpStrategy ? `FSDP ${l.fsdpStrategy}` : l.distributedOptimizer ? 'dist-opt' : `ZeRO-${l.zero}`;
    console.log(`  ${String(i + 1).padEnd(3)} ${String(l.tp).padStart(2)} ${String(l.pp).padStart(3)} ${String(l.vpp).padStart(4)} ${String(l.cp).padStart(3)} ${String(l.ep).padStart(3)} ${String(l.dp).padStart(5)}  ${sh.padEnd(15)} ${`${l.microBatch}×${l.gradAccum}`.padEnd(10)} ${l.recompute.padEnd(10)} ${l.offload.padEnd(9)} ${formatSeconds(l.stepSeconds).padEnd(11)} ${formatBytes(l.peakReservedBytes, 'GiB')}`);
    // The last stage also holds the multi-token-prediction layers (shared/model/mtp.ts).
    if (l.stageLayers) console.log(`      stages ${l.stageLayers.join('/')} layers${base.model.mtpLayers ? ` (+ ${base.model.mtpLayers} MTP on the last)` : ''}`);
    if (l.equivalent?.length) console.log(`      same step time with ${l.equivalent.join(', ')}`);
  });
  printNotes([...allProblems(loaded), ...result.problems.map((p) => ({ ...p, where: file }))], loaded.resolved.assumptions);
  return 0;
}
