/** `shardlens`: memory, communication and step-time estimates for distributed training configs, from the shell. */
import { parseArgs } from './args';
import { estimateCommand } from './commands/estimate';
import { gpusCommand, paramsCommand } from './commands/info';
import { planCommand, probeCliCommand, validateCommand } from './commands/run';
import { simulateCommand } from './commands/simulate';
import { profileCommand } from './commands/profile';
import { InputError } from './load';

const HELP = `shardlens — per-GPU memory, communication and step time of distributed LLM training configs

Usage:
  shardlens estimate <file|folder> [--model <preset|config.json>] [--gpus <N>x<GPU>] [--json]
  shardlens simulate <file> [--gpus <N>x<GPU>] [--json] [--trace out.json]
  shardlens plan <file> [--gpus <N>x<GPU>] [--top K] [--json]
  shardlens params <preset|config.json> [--json]      (shardlens params --list for presets)
  shardlens gpus [--json]
  shardlens validate <file> [--ranks N] [--modes ddp,zero1,zero2,zero3] [--steps K] [--json]
  shardlens probe <file> --ranks N [--mode …] [--out report.json] [--json]
  shardlens profile <file…> [--ranks N] [--out profile.json] [--cluster <nodes>x<gpus>] [--quick] [--json]

estimate, simulate and plan take --profile <profile.json> to time kernels and collectives from a measured profile.

Formats: DeepSpeed JSON, Megatron-LM scripts/YAML, torchtitan TOML, Accelerate, nanotron, Axolotl,
LLaMA-Factory, Lightning/LitGPT/torchtune YAML, Hugging Face config.json.
Exit codes: 0 fits (or succeeded), 1 does not fit (or checks failed), 2 bad input.`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (!args.command || args.flags.help || args.command === 'help') {
    console.log(HELP);
    return args.command || args.flags.help ? 0 : 2;
  }
  switch (args.command) {
    case 'estimate': return estimateCommand(args);
    case 'simulate': return simulateCommand(args);
    case 'plan': return planCommand(args);
    case 'params': return paramsCommand(args);
    case 'gpus': return gpusCommand(args);
    case 'validate': return validateCommand(args);
    case 'probe': return probeCliCommand(args);
    case 'profile': return profileCommand(args);
    default: throw new InputError(`unknown command "${args.command}"; run shardlens --help`);
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    if (err instanceof InputError) console.error(`shardlens: ${err.message}`);
    else console.error(`shardlens: internal error: ${(err as Error)?.stack ?? String(err)}`);
    process.exitCode = 2;
  },
);
