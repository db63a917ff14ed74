/** `shardlens simulate <file> [--gpus NxGPU] [--json] [--trace out.json]`: one simulated optimizer step. */
import { writeUserFile } from '../../server/io/write';
import { simulateStep } from '../../shared/sim/simulate';
import { toChromeTrace } from '../../shared/sim/trace';
import { formatPercent, formatSeconds, formatVolume, formatBytes } from '../../shared/units';
import { stringFlag, type ParsedArgs } from '../args';
import { InputError, loadConfig } from '../load';
import { allProblems, hasErrors, planSummary, printNotes } from '../report';
import { countParams } from '../../shared/model/params';
import { RUN_LENGTH_SCOPE, runLength, runLine } from '../../shared/wording/runLength';
import { elidedSentence } from '../../shared/wording/comm';
import { validatePlan } from '../../shared/plan/validate';

export async function simulateCommand(args: ParsedArgs): Promise<number> {
  const file = args.positionals[0];
  if (!file) throw new InputError('usage: shardlens simulate <file> [--gpus <N>x<GPU>] [--json] [--trace out.json]');
  const trace = stringFlag(args.flags, 'trace', 'step.json');
  if (typeof trace === 'object') throw new InputError(trace.error);
  const loaded = await loadConfig(file, args.flags);
  const plan = loaded.resolved.plan;
  const sim = plan ? simulateStep(plan) : undefined;
  // The plan's own checks (shared/plan/validate.ts) as `estimate` and the editor report them: a layout the timeline
  // runs can still be one the engine refuses, or one whose bubble dominates; the timeline's wording wins on a twin.
  const problems = allProblems(loaded, [...(sim?.problems ?? []), ...(plan ? validatePlan(plan) : [])]);
  const ok = !!sim?.ok && !hasErrors(problems);
  if (trace !== undefined && sim?.ok) writeUserFile(trace, JSON.stringify(toChromeTrace(sim)));
  const run = sim?.ok ? runLength(plan, sim.stepSeconds) : undefined;
  if (args.flags.json) {
    const { stages, ...rest } = sim ?? ({ stages: [] } as unknown as NonNullable<typeof sim>);
    console.log(JSON.stringify({ file: loaded.path, format: loaded.primary.format, ...rest, ...(run ? { run } : {}), ok, stages, assumptions: loaded.resolved.assumptions, problems }, null, 2));
    return ok ? 0 : 2;
  }
  if (plan) console.log(planSummary(plan, countParams(plan.model).parameters));
  if (sim?.ok) {
    const calibrated = plan?.cluster.gpu.kernelSpeed !== undefined ? ` (kernels ×${plan.cluster.gpu.kernelSpeed.toFixed(3)}, calibrated: ${plan.sources['cluster.gpu.kernelSpeed']?.detail ?? 'shardlens.calibration'})` : '';
    console.log(`\nStep ${formatSeconds(sim.stepSeconds)}${calibrated} · ${sim.schedule}, ${sim.pp} stage(s)${sim.vpp > 1 ? ` × ${sim.vpp} chunks` : ''}, ${sim.microbatches} micro-batches`);
    if (run) console.log(`Run  ${runLine(run)} (${RUN_LENGTH_SCOPE})`);
    console.log(`Bubble ${formatPercent(sim.bubbleFraction)} of the busy time · exposed communication ${formatSeconds(sim.exposedCommSeconds)} · MFU ${formatPercent(sim.mfu)} · HFU ${formatPercent(sim.hfu)} · ${Math.round(sim.tokensPerSecond).toLocaleString('en-US')} tokens/s`);
    console.log('\nStage  busy        idle        exposed comm  peak memory  max in flight');
    for (const s of sim.stages) console.log(`${String(s.stage).padStart(5)}  ${formatSeconds(s.busySeconds).padEnd(10)}  ${formatSeconds(s.idleSeconds).padEnd(10)}  ${formatSeconds(s.exposedCommSeconds).padEnd(12)}  ${formatBytes(s.peakBytes, 'GiB').padEnd(11)}  ${s.maxInFlight}`);
    console.log('\nCollectives per rank per step:');
    for (const c of sim.collectives) console.log(`  ${c.label.padEnd(40)} ${c.kind.padEnd(14)} ${c.group}×${String(c.groupSize).padEnd(5)} ${c.tier.padEnd(8)} ${formatVolume(c.bytesPerRank).padStart(9)} ${formatSeconds(c.seconds).padStart(9)}  exposed ${formatSeconds(c.exposedSeconds)}`);
    if (trace !== undefined) {
      console.log(`\nChrome trace written to ${trace} (open in https://ui.perfetto.dev or chrome://tracing).`);
      const elided = elidedSentence(sim.stages);
      if (elided) console.log(elided);
    }
  } else {
    console.log('\nNo timeline: the layout cannot run as written.');
  }
  printNotes(problems, loaded.resolved.assumptions);
  return ok ? 0 : 2;
}
