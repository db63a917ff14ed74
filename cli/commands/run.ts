/** `shardlens validate`, `shardlens probe` and `shardlens plan`: commands that run or search beyond one estimate. */
import { runValidation } from '../../validation/index';
import { VALIDATION_MODES } from '../../validation/types';
import { parseValidateFlags, progressLine, reportExitCode } from '../../validation/cliSupport';
import { formatReportText } from '../../validation/report/text';
import { probeCommand } from '../../validation/torch/cliCommand';
import { planLayouts } from '../../shared/planner/plan-layouts';
import { formatBytes, formatSeconds } from '../../shared/units';
import { intFlag, type ParsedArgs } from '../args';
import { InputError, loadConfig } from '../load';
import { allProblems, hasErrors, printNotes } from '../report';

/** Reads an integer flag or throws InputError. */
function int(flags: ParsedArgs['flags'], name: string, fallback: number, max?: number): number {
  const v = intFlag(flags, name, fallback, max);
  if (typeof v !== 'number') throw new InputError(v.error);
  return v;
}

/** Loads the file and returns its plan, or throws InputError naming the problems. */
async function planOf(file: string | undefined, usage: string, flags: ParsedArgs['flags']) {
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
  const usage = 'usage: shardlens validate <file> [--ranks N] [--modes ddp,zero1,zero2,zero3] [--steps K] [--json]';
  const str = (k: string) => (typeof args.flags[k] === 'string' ? (args.flags[k] as string) : args.flags[k] === true ? '' : undefined);
  const parsed = parseValidateFlags({ ranks: str('ranks'), modes: str('modes'), steps: str('steps') });
  if ('error' in parsed) throw new InputError(parsed.error);
  const { loaded, plan } = await planOf(args.positionals[0], usage, args.flags);
  const ctrl = new AbortController();
  // Ctrl-C in a terminal and the extension's cancel (SIGTERM) both end the ranks cleanly with a "cancelled" report.
  process.once('SIGINT', () => ctrl.abort());
  process.once('SIGTERM', () => ctrl.abort());
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
  const usage = 'usage: shardlens probe <file> --ranks N [--mode ddp|zero-redundancy|fsdp-full|…] [--out report.json] [--json]';
  const { plan } = await planOf(args.positionals[0], usage, args.flags);
  const str = (k: string) => (typeof args.flags[k] === 'string' ? (args.flags[k] as string) : undefined);
  const ctrl = new AbortController();
  process.once('SIGINT', () => ctrl.abort());
  return probeCommand(plan, {
    ranks: str('ranks'), mode: str('mode'), out: str('out'), json: args.flags.json === true, python: str('python'), steps: str('steps'),
    dataParallelOnly: args.flags['data-parallel-only'] === true,
  }, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) }, ctrl.signal);
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
    if (l.stageLayers) console.log(`      stages ${l.stageLayers.join('/')} layers`);
    if (l.equivalent?.length) console.log(`      same step time with ${l.equivalent.join(', ')}`);
  });
  printNotes([...allProblems(loaded), ...result.problems.map((p) => ({ ...p, where: file }))], loaded.resolved.assumptions);
  return 0;
}
