/**
 * `shardlens calibrate <config> --log <train.log> [--gpus NxGPU] [--cluster-id ID] [--json]`: the measured step time and
 * peak memory of a training log against the estimate of the config that ran it, and the cluster correction
 * (`shardlens.calibration`) that makes later estimates on that cluster reproduce them. Reads the log's end, bounded;
 * runs nothing; prints the settings entry (the editor's "Calibrate from Training Log…" saves it).
 */
import { basename, resolve } from 'node:path';
import { calibrateFromLog, type Compared, type LogComparison } from '../../shared/calibration/fromLog';
import { CALIBRATION_SETTING } from '../../shared/plan/calibration';
import { formatBytes, formatSeconds, formatSignedPercent } from '../../shared/units';
import { readTextTail } from '../../server/io/read';
import { stringFlag, type ParsedArgs } from '../args';
import { InputError, loadConfig } from '../load';
import { allProblems, hasErrors, planSummary, printNotes } from '../report';
import { countParams } from '../../shared/model/params';
import { workspaceSettings } from '../settings';

const USAGE = 'usage: shardlens calibrate <config> --log <train.log> [--gpus <N>x<GPU>] [--cluster-id <name>] [--json]';


function row(name: string, c: Compared | undefined, show: (x: number) => string): string {
  if (!c) return `  ${name.padEnd(8)} not in the log`;
  return `  ${name.padEnd(8)} measured ${show(c.measured).padEnd(11)} ShardLens ${show(c.estimated).padEnd(11)} ${formatSignedPercent(c.error).padStart(8)}   (line ${c.line}: ${c.detail})`;
}

function printComparison(title: string, c: LogComparison): void {
  console.log(title);
  console.log(row('step', c.step, formatSeconds));
  console.log(row('memory', c.memory, (x) => `${formatBytes(x, 'GiB')}`) + (c.memory ? ` [peak ${c.memory.kind}, stage ${c.memory.stage}]` : ''));
}

export async function calibrateCommand(args: ParsedArgs): Promise<number> {
  const file = args.positionals[0];
  const log = stringFlag(args.flags, 'log', 'train.log');
  if (!file || log === undefined) throw new InputError(USAGE);
  if (typeof log === 'object') throw new InputError(log.error);
  const id = stringFlag(args.flags, 'cluster-id', 'my-cluster');
  if (typeof id === 'object') throw new InputError(id.error);
  if (id !== undefined && !/^[\w.@:+-]{1,64}$/.test(id)) throw new InputError('--cluster-id: letters, digits and . _ - @ : + only, at most 64 characters');
  // The log is a file the user named: read wherever it is, its last 32 MiB at most.
  const read = readTextTail(resolve(log));
  if (!read.ok) throw new InputError(`--log: ${read.reason === 'missing' ? `${log}: no such file` : read.detail}`);
  const loaded = await loadConfig(file, args.flags);
  const plan = loaded.resolved.plan;
  const problems = allProblems(loaded, []);
  if (!plan || hasErrors(problems)) {
    if (args.flags.json) console.log(JSON.stringify({ file: loaded.path, ok: false, problems }, null, 2));
    else printNotes(problems, loaded.resolved.assumptions);
    return 2;
  }
  const stored = workspaceSettings(loaded.workspace.root, loaded.workspace.roots).settings.calibration;
  const r = calibrateFromLog(plan, { text: read.text, name: basename(log), skippedBytes: read.skippedBytes }, stored, new Date().toISOString(), id);
  if (!r.ok) throw new InputError(`--log ${log}: ${r.error}`);
  const { measurement, previous, clusterId, comparison, correction, after } = r;
  const entry = { [CALIBRATION_SETTING]: { ...stored, [clusterId]: correction } };
  if (args.flags.json) {
    console.log(JSON.stringify({ file: loaded.path, log: resolve(log), ok: true, comparison, correction, after, setting: entry, assumptions: loaded.resolved.assumptions, problems }, null, 2));
    return 0;
  }
  console.log(planSummary(plan, countParams(plan.model).parameters));
  console.log(`\nLog      ${log} — ${measurement.engine}, ${measurement.steps} step${measurement.steps === 1 ? '' : 's'} after warm-up`);
  printComparison(previous ? `\nAgainst the estimate (with the stored calibration "${previous.clusterId}"):` : '\nAgainst the estimate:', comparison);
  console.log(`\nCalibration "${clusterId}": kernels ×${correction.efficiency.toFixed(3)} speed, +${formatBytes(correction.overheadBytes, 'GiB')} per GPU`);
  printComparison('With it:', after);
  for (const w of correction.warnings) console.log(`  note: ${w}`);
  console.log(`\nTo use it for every config on ${plan.cluster.gpu.name}, put this in .vscode/settings.json (the editor's`);
  console.log('"ShardLens: Calibrate from a Training Log…" writes it for you):');
  console.log(JSON.stringify(entry, null, 2));
  printNotes(problems, loaded.resolved.assumptions);
  return 0;
}
