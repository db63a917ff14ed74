/**
 * Helpers for `shardlens validate <file> [--ranks N] [--modes ddp,zero1,zero2,zero3] [--steps K] [--json]`: flag
 * parsing into typed values or a message, the progress line the extension parses ("[k/n] message" on stderr), and
 * the exit code of a report.
 */
import { VALIDATION_MODES, type ValidationMode, type ValidationProgress, type ValidationReport } from './types';

export interface ValidateFlags {
  readonly ranks?: number;
  readonly modes?: ValidationMode[];
  readonly steps?: number;
}

/** Parses the flag values (strings as given on the command line); returns a message for bad input. */
export function parseValidateFlags(raw: { ranks?: string; modes?: string; steps?: string }): ValidateFlags | { error: string } {
  const out: { ranks?: number; modes?: ValidationMode[]; steps?: number } = {};
  const int = (name: string, v: string | undefined, lo: number, hi: number): number | string | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    return Number.isInteger(n) && n >= lo && n <= hi ? n : `--${name} must be an integer from ${lo} to ${hi}, not "${v}"`;
  };
  const ranks = int('ranks', raw.ranks, 1, 16), steps = int('steps', raw.steps, 1, 1000);
  if (typeof ranks === 'string') return { error: ranks };
  if (typeof steps === 'string') return { error: steps };
  if (ranks !== undefined) out.ranks = ranks;
  if (steps !== undefined) out.steps = steps;
  if (raw.modes !== undefined) {
    const modes = raw.modes.split(',').map((m) => m.trim().toLowerCase()).filter(Boolean);
    const bad = modes.filter((m) => !(VALIDATION_MODES as readonly string[]).includes(m));
    if (bad.length || !modes.length) return { error: `--modes takes a comma-separated list of ${VALIDATION_MODES.join(', ')}; got "${raw.modes}"` };
    out.modes = modes as ValidationMode[];
  }
  return out;
}

/** The stderr progress line: "[done/100] message" (the extension reads the fraction from the brackets). */
export function progressLine(p: ValidationProgress): string {
  return `[${Math.round(Math.max(0, Math.min(1, p.fraction)) * 100)}/100] ${p.message}`;
}

/** Exit code: 0 when every check passed, 1 when a check failed or the run did not complete. */
export function reportExitCode(r: ValidationReport): number {
  return r.status === 'ok' ? 0 : 1;
}
