/**
 * `shardlens probe <file> --ranks N [--mode …] [--out report.json] [--json]`: the body of the CLI command. The CLI
 * resolves the file to a Plan and passes its flags; this runs, compares, prints and returns the exit code.
 */
import { writeUserFile } from '../../server/io/write';
import type { Plan } from '../../shared/plan/types';
import type { TermComparison } from './compare';
import { probeAndCompare } from './session';
import { PROBE_MODES, type ProbeMode } from './types';

export interface ProbeCliOptions {
  readonly ranks?: string | number;
  readonly mode?: string;
  readonly out?: string;
  readonly json?: boolean;
  readonly python?: string;
  readonly steps?: string | number;
  /** Allow plans with tp/pp/cp/ep > 1 by probing only their data-parallel dimension. */
  readonly dataParallelOnly?: boolean;
  /** Allow more ranks than the machine has GPUs (or CPU cores). */
  readonly oversubscribe?: boolean;
}

/** Largest step count the probe runs (each step trains the scaled model once). */
const MAX_STEPS = 1000;

/** Checks the flag values before anything is loaded or launched; returns a message for bad input. */
export function checkProbeOptions(o: ProbeCliOptions): string | undefined {
  const intIn = (v: string | number | undefined, lo: number, hi: number) => v === undefined || (/^\d+$/.test(String(v).trim()) && Number(v) >= lo && Number(v) <= hi);
  if (!intIn(o.ranks, 1, 4096)) return `--ranks must be a whole number from 1 to 4096 (got ${String(o.ranks)})`;
  if (!intIn(o.steps, 2, MAX_STEPS)) return `--steps must be a whole number from 2 to ${MAX_STEPS} (got ${String(o.steps)}); step 0 is a warm-up`;
  if (o.mode !== undefined && !parseProbeMode(o.mode)) return `--mode must be one of ${PROBE_MODES.join(', ')} (got ${o.mode})`;
  return undefined;
}

export interface ProbeCliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`;

function row(t: TermComparison): string {
  const mark = t.withinTolerance === undefined ? ' ' : t.withinTolerance ? '✓' : '✗';
  return `  ${mark} ${t.term.padEnd(34)} ${mib(t.measured).padStart(12)} ${mib(t.expected).padStart(12)} ${pct(t.relError).padStart(9)}${t.note ? `  (${t.note})` : ''}`;
}

const ALIASES: Readonly<Record<string, ProbeMode>> = {
  replicated: 'ddp', 'zero-redundancy': 'zero1', zero: 'zero1', 'zero-1': 'zero1', zro: 'zero1',
  fsdp: 'fsdp-full-shard', 'fsdp-full': 'fsdp-full-shard', 'full-shard': 'fsdp-full-shard', 'fsdp-grad-op': 'fsdp-shard-grad-op',
  'shard-grad-op': 'fsdp-shard-grad-op', 'no-shard': 'fsdp-no-shard', 'fsdp-hybrid': 'fsdp-hybrid-shard', 'hybrid-shard': 'fsdp-hybrid-shard', hsdp: 'fsdp-hybrid-shard',
  ds: 'deepspeed',
};

/** A mode name, forgiving case, underscores and common aliases (FULL_SHARD, zero-redundancy, hsdp…). */
export function parseProbeMode(text: string): ProbeMode | undefined {
  const key = text.trim().toLowerCase().replace(/_/g, '-');
  return PROBE_MODES.includes(key as ProbeMode) ? (key as ProbeMode) : Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
}

/** Exit codes: 0 measured matches the estimate, 1 it ran but differs or ranks failed, 2 bad input or no torch. */
export async function probeCommand(plan: Plan, o: ProbeCliOptions, io: ProbeCliIo, signal?: AbortSignal): Promise<number> {
  const bad = checkProbeOptions(o);
  if (bad) {
    io.stderr(`shardlens probe: ${bad}\n`);
    return 2;
  }
  const mode = o.mode === undefined ? undefined : parseProbeMode(o.mode);
  const steps = o.steps === undefined ? undefined : Number(o.steps);
  const ranks = o.ranks === undefined ? undefined : Number(o.ranks);
  const out = await probeAndCompare({
    plan, ranks, mode, python: o.python, signal, out: o.out, oversubscribe: o.oversubscribe === true,
    export: { steps, layout: o.dataParallelOnly ? 'data-parallel-only' : 'strict' },
    onProgress: (p) => { if (p.phase !== 'output') io.stderr(`${p.message}\n`); },
  });
  if (!out.ok) {
    io.stderr(`shardlens probe: ${out.code}: ${out.message}\n`);
    if (out.outputTail && out.code !== 'cancelled') io.stderr(`${out.outputTail}\n`);
    if (out.report && o.out) writeUserFile(o.out, JSON.stringify(out.report, null, 1));
    if (o.json && out.report) io.stdout(`${JSON.stringify(out.report, null, 1)}\n`);
    return ['probe-failed', 'timeout', 'cancelled', 'no-report', 'invalid-report', 'launch-failed'].includes(out.code) ? 1 : 2;
  }
  if (o.out) writeUserFile(o.out, JSON.stringify(out.report, null, 1));
  if (o.json) {
    io.stdout(`${JSON.stringify({ ...out.report, comparison: out.comparison }, null, 1)}\n`);
    return out.comparison.ok ? 0 : 1;
  }
  const r = out.report;
  const lines = [
    `${r.engine.name} ${r.engine.versions.torch} · ${r.backend} on ${r.device} · ${r.worldSize} ranks · ${r.mode} · Ψ = ${(r.parameters ?? 0).toLocaleString('en-US')}`,
    ...out.notes.map((n) => `note: ${n}`),
    `estimate: ${out.comparison.estimateSource}; tolerance ${(out.comparison.tolerance * 100).toFixed(0)} %`,
  ];
  for (const rank of out.comparison.ranks) {
    const rr = r.ranks.find((x) => x.rank === rank.rank);
    lines.push(`rank ${rank.rank}${rr?.stepSeconds !== undefined ? ` · step ${rr.stepSeconds.toFixed(3)} s` : ''}`, `    ${'term'.padEnd(34)} ${'measured'.padStart(12)} ${'expected'.padStart(12)} ${'error'.padStart(9)}`);
    lines.push(...rank.terms.map(row));
  }
  lines.push(out.comparison.ok ? 'measured matches the estimate' : 'measured differs from the estimate (✗ rows)');
  if (o.out) lines.push(`report: ${o.out}`);
  io.stdout(`${lines.join('\n')}\n`);
  return out.comparison.ok ? 0 : 1;
}
