/** `shardlens`: memory, communication and step-time estimates for distributed training configs, from the shell. */
import { parseArgs, unknownFlags } from './args';
import { estimateCommand } from './commands/estimate';
import { gpusCommand, paramsCommand } from './commands/info';
import { planCommand, probeCliCommand, validateCommand } from './commands/run';
import { simulateCommand } from './commands/simulate';
import { profileCommand } from './commands/profile';
import { calibrateCommand } from './commands/calibrate';
import { InputError } from './load';
import { WriteRefused } from '../server/io/write';

const HELP = `shardlens — per-GPU memory, communication and step time of distributed LLM training configs

Usage:
  shardlens estimate <file|folder> [--model <preset|config.json>] [--gpus <N>x<GPU>] [--config <function>] [--json]
  shardlens simulate <file> [--gpus <N>x<GPU>] [--json] [--trace out.json]
  shardlens plan <file> [--gpus <N>x<GPU>] [--top K] [--json]
  shardlens params <preset|config.json> [--json]      (shardlens params --list for presets)
  shardlens gpus [--json]
  shardlens validate <file> --trust [--ranks N] [--modes ddp,zero1,zero2,zero3] [--steps K] [--json]
  shardlens probe <file> --trust [--ranks N] [--oversubscribe] [--mode …] [--steps K] [--out report.json] [--json]
  shardlens probe <file> --trust --fake [--layers N] [--python P] [--out report.json] [--json]
                                 (torch's exact memory per category on this machine, no GPU; torch ≥ 2.4)
  shardlens profile <file…> --trust [--ranks N] [--oversubscribe] [--out profile.json] [--quick] [--json]
  shardlens profile <file…> --cluster <nodes>x<gpus> [--out profile.json] [--quick]   (prints Slurm/torchrun lines)
  shardlens calibrate <file> --log <train.log> [--gpus <N>x<GPU>] [--cluster-id <name>] [--json]
                                 (a training log of torchtitan, Megatron-LM, DeepSpeed or the HF Trainer against
                                  the estimate, and the shardlens.calibration entry that reproduces it)

estimate, simulate and plan take --profile <profile.json>: kernels and collectives timed from that measured profile,
and --config <function>: which configuration function of a torchtitan Python module to read (its first by default).

Settings come from <workspace>/.vscode/settings.json, where the workspace is --workspace <dir>, else the nearest
project folder (.vscode, .git or package.json) between the file and the current folder; never from above it.
validate, probe and profile launch processes: they run only with --trust, for folders you trust.

Formats: DeepSpeed JSON, Megatron-LM scripts/YAML, torchtitan TOML and Python configurations, Accelerate, nanotron, Axolotl,
LLaMA-Factory, Lightning/LitGPT/torchtune YAML, Hugging Face config.json.
Exit codes: 0 fits (or succeeded), 1 does not fit (or checks failed), 2 bad input.`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (!args.command || args.flags.help || args.command === 'help') {
    console.log(HELP);
    return args.command || args.flags.help ? 0 : 2;
  }
  const bad = unknownFlags(args);
  if (bad) throw new InputError(bad);
  switch (args.command) {
    case 'estimate': return estimateCommand(args);
    case 'simulate': return simulateCommand(args);
    case 'plan': return planCommand(args);
    case 'params': return paramsCommand(args);
    case 'gpus': return gpusCommand(args);
    case 'validate': return validateCommand(args);
    case 'probe': return probeCliCommand(args);
    case 'profile': return profileCommand(args);
    case 'calibrate': return calibrateCommand(args);
    default: throw new InputError(`unknown command "${args.command}"; run shardlens --help`);
  }
}

// A reader that stops early (`shardlens gpus | head`) closes the pipe: the CLI ends quietly, as Unix tools do, rather
// than printing a stack trace for the write that can no longer land. Exit hooks (process groups) still run.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => { if (process.exitCode === undefined) process.exitCode = code; },
  (err: unknown) => {
    if (err instanceof InputError || err instanceof WriteRefused) console.error(`shardlens: ${err.message}`);
    else console.error(`shardlens: internal error: ${(err as Error)?.stack ?? String(err)}`);
    process.exitCode = 2;
  },
);
