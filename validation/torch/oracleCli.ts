/**
 * `shardlens probe <file> --fake [--layers N] [--hf-config config.json] [--python P] [--out report.json] [--json]`:
 * torch's own peak memory per category for the config's layout (fake tensors, a fake process group, no GPU), beside
 * ShardLens's estimate of the same model. Exit codes: 0 every category agrees, 1 some differ, 2 bad input (torch
 * missing or older than 2.4, a layout the oracle cannot build). The report file is written whole or not at all.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { formatBytes } from '../../shared/units';
import type { Plan } from '../../shared/plan/types';
import { compareOracle, type OracleComparison } from './oracleCompare';
import { exportOraclePlan } from './oraclePlan';
import { findOraclePython, isOracleFailure, runOracle } from './oracleRun';
import type { OracleReport } from './oracleTypes';

export interface OracleCliOptions {
  readonly layers?: string | number;
  readonly python?: string;
  readonly out?: string;
  readonly json?: boolean;
  readonly hfConfig?: Readonly<Record<string, unknown>>;
}

export interface OracleCliIo { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void }

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** Writes JSON beside the target and renames it over, so a reader never sees half a file. */
export function writeWhole(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(value, null, 1));
  renameSync(tmp, path);
}

/** The comparison as text lines (one table per pipeline stage). */
export function comparisonText(c: OracleComparison): string[] {
  const lines: string[] = [];
  for (const s of c.stages) {
    lines.push(`${s.label}:`, `    ${'category'.padEnd(12)} ${'torch (oracle)'.padStart(14)} ${'ShardLens'.padStart(12)} ${'error'.padStart(9)}`);
    for (const r of s.rows) {
      lines.push(`  ${r.ok ? '✓' : '✗'} ${r.category.padEnd(12)} ${formatBytes(r.oracle, 'GiB').padStart(14)} ${formatBytes(r.estimate, 'GiB').padStart(12)} ${pct(r.relError).padStart(9)}`);
    }
  }
  return lines;
}

export async function oracleCommand(plan: Plan, o: OracleCliOptions, io: OracleCliIo, signal?: AbortSignal): Promise<number> {
  const layers = o.layers === undefined ? undefined : Number(o.layers);
  if (layers !== undefined && (!Number.isInteger(layers) || layers < 1)) {
    io.stderr(`shardlens probe --fake: --layers must be a positive whole number (got ${String(o.layers)})\n`);
    return 2;
  }
  const exported = exportOraclePlan(plan, { layers, hfConfig: o.hfConfig });
  if ('code' in exported) {
    io.stderr(`shardlens probe --fake: ${exported.code}: ${exported.message}\n`);
    return 2;
  }
  const py = await findOraclePython(o.python);
  if (isOracleFailure(py)) {
    io.stderr(`shardlens probe --fake: ${py.code}: ${py.message}\n`);
    return 2;
  }
  io.stderr(`Building ${plan.model.name} (${exported.oraclePlan.model.layers} layers) on fake tensors with torch ${py.torch} (${py.executable})…\n`);
  const report = await runOracle(exported.oraclePlan, { python: py.python, signal });
  if (isOracleFailure(report)) {
    io.stderr(`shardlens probe --fake: ${report.code}: ${report.message}\n${report.outputTail ?? ''}`);
    return report.code === 'cancelled' || report.code === 'timeout' ? 1 : 2;
  }
  if (!report.ok) {
    const err = report.error ?? { code: 'build-failed', message: 'no error message' };
    io.stderr(`shardlens probe --fake: ${err.code}: ${err.message}\n`);
    return 2;
  }
  const comparison = compareOracle(report, exported.comparablePlan);
  const full: OracleReport & { comparison: OracleComparison; notes: readonly string[] } = { ...report, comparison, notes: exported.notes };
  if (o.out) writeWhole(o.out, full);
  if (o.json) {
    io.stdout(`${JSON.stringify(full, null, 1)}\n`);
    return comparison.ok ? 0 : 1;
  }
  const lines = [
    `torch ${report.versions.torch} · fake tensors, fake process group (${exported.oraclePlan.parallel.pp > 1 ? 'one rank per pipeline stage' : 'rank 0'}) · ${exported.oraclePlan.impl} model, ${exported.oraclePlan.regime} precision`,
    ...exported.notes.map((n) => `note: ${n}`),
    ...report.ranks.flatMap((r) => r.notes.map((n) => `note: ${n}`)),
    'Peak of each category on its own and of the total (tensor bytes; no CUDA context or allocator cache).',
    ...comparisonText(comparison),
    comparison.ok ? 'ShardLens agrees with torch (categories within 3 %, total within 2 %).' : 'ShardLens differs from torch (✗ rows).',
  ];
  if (o.out) lines.push(`report: ${o.out}`);
  io.stdout(`${lines.join('\n')}\n`);
  return comparison.ok ? 0 : 1;
}
