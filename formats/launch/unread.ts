/**
 * Says what a launch script did not let ShardLens read, at the top of the file, so an estimate never rests on silent
 * defaults: no training command found, a program whose arguments no dialect knows, or values still holding
 * variables or template placeholders. What is then assumed is listed by the resolver (assumptions).
 */
import type { FactSink } from '../common/sink';
import { givesPlanValue } from '../../shared/plan/facts';
import type { Invocation } from '../common/shell/commandLine';
import type { ShellEnv } from '../common/shell/evaluate';
import { unresolved } from '../common/shell/sval';

const TRAINING = ['training.microBatch', 'training.globalBatch', 'training.seqLen', 'parallel.tp', 'parallel.pp', 'parallel.sharding.stage', 'model.layers', 'model.preset'];

export function describeUnread(s: FactSink, inv: Invocation | undefined, env: ShellEnv): void {
  const read = TRAINING.filter((p) => s.facts[p] && s.facts[p]!.source.kind !== 'default');
  if (!inv) {
    if (read.length) return;
    const programs = [...new Set(env.commands.map((c) => c.words[0]?.t).filter((t): t is string => !!t && /^[\w.-]+$/.test(t)))].slice(0, 6);
    const found = `ShardLens found no training command it can read in this script${programs.length ? ` (commands: ${programs.join(', ')})` : ''}`;
    // With some value read (a Slurm template's cluster, its trainer in a variable) the estimate runs on assumed
    // defaults; with none (a data preprocessing script) there is nothing to estimate (shared/plan/resolve.ts).
    s.diag('no-training-command', 'info', givesPlanValue(s.facts, ['model', 'training', 'parallel', 'cluster'])
      ? `${found}: batch sizes, sequence length and layout are not read from it, and the estimate uses the defaults listed as assumptions.`
      : `${found} and no model, batch, layout or cluster value: there is nothing to estimate in it.`,
    undefined);
    return;
  }
  const unres = inv.args.filter((w) => unresolved(w)).map((w) => w.t).filter((t) => t.length < 60);
  // A trainer config named on the line (config=x.yaml, llamafactory-cli train x.yaml) is read as a reference.
  // torchtitan's trainer says itself what it could not read (formats/launch/torchtitan.ts).
  if (!read.length && !s.references.some((r) => r.kind === 'config') && s.facts['launch.dialect']?.value !== 'torchtitan') {
    s.diag('unknown-trainer', 'info',
      `ShardLens does not know the arguments of "${inv.program}": nothing about batch, sequence length or layout was read, and the estimate uses the defaults listed as assumptions.`,
      undefined);
  }
  if (unres.length) {
    s.diag('unresolved-arguments', 'info',
      `Some arguments hold values ShardLens could not evaluate (${unres.slice(0, 4).join(' ')}${unres.length > 4 ? ' …' : ''}): they are set when the script runs, so they are not read.`,
      undefined);
  }
}
