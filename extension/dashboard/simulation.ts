/**
 * The Simulate Step view's answer: the server's `shardlens/simulate` result as it is (the core's `Simulation`), or a
 * sentence saying why there is no timeline. Pure (no vscode), so unit tests import it.
 */
import type { AnalysisSimulation, SimulationAnswer } from '../../shared/protocol';

export function simulationAnswer(r: AnalysisSimulation | null): SimulationAnswer {
  if (!r) return { ok: false, message: 'The file does not say enough for a simulation yet (no model and cluster resolved).' };
  if (r.ok) return { ok: true, result: r.result };
  const why = r.problems.filter((p) => p.severity === 'error').map((p) => p.message);
  return { ok: false, message: `The step cannot be simulated: ${(why.length ? why : r.problems.map((p) => p.message)).join(' ') || 'the layout is not runnable.'}` };
}
