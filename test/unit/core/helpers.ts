/** Shared fixtures of the core unit tests. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../cli/load';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan, type PlanInput } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec, Plan } from '../../../shared/plan/types';

export const GiB = 2 ** 30;

/** A bundled preset's model; fails loudly when missing. */
export function preset(name: string): ModelSpec {
  const p = findPreset(name);
  if (!p) throw new Error(`preset ${name} missing`);
  return p.model;
}

export const H100 = findGpu('h100-sxm') as GpuSpec;

/** Llama-3-8B with the given overrides (partial plan), on H100s. */
export function llamaPlan(over: Omit<PlanInput, 'model'> & { model?: ModelSpec } = {}): Plan {
  return makePlan({ model: preset('llama-3-8b'), ...over } as PlanInput, H100);
}

/** Asserts x is within `tol` of `expected`. */
export function near(x: number, expected: number, tol: number, what = ''): void {
  if (!(Math.abs(x - expected) <= tol)) throw new Error(`${what}: ${x} is not within ${tol} of ${expected}`);
}

let configDir: string | undefined;
/** The plan the CLI's loader resolves from `text` written as `name` in a temporary folder; fails when none. */
export async function planOfText(name: string, text: string, gpus: string): Promise<Plan> {
  configDir ??= mkdtempSync(join(tmpdir(), 'shardlens-core-'));
  const p = join(configDir, name);
  writeFileSync(p, text);
  const plan = (await loadConfig(p, { gpus })).resolved.plan;
  assert.ok(plan, `${name} was not estimated`);
  return plan;
}
