/** Reads and validates probe reports against schemas/probe-report.schema.json. */
import schema from '../../schemas/probe-report.schema.json';
import { checkSchema, type Schema } from './jsonSchema';
import type { ProbeReport } from './types';

export const PROBE_REPORT_SCHEMA: Schema = schema as Schema;
export const PROBE_REPORT_SCHEMA_VERSION = 1;

export type ReadReport = { readonly ok: true; readonly report: ProbeReport } | { readonly ok: false; readonly problems: readonly string[] };

/** Checks a parsed value against the report schema; a newer schemaVersion is named as such. */
export function validateProbeReport(value: unknown): ReadReport {
  const v = value as { schemaVersion?: unknown } | null;
  if (v && typeof v === 'object' && typeof v.schemaVersion === 'number' && v.schemaVersion > PROBE_REPORT_SCHEMA_VERSION) {
    return { ok: false, problems: [`report schemaVersion ${v.schemaVersion} is newer than this ShardLens reads (${PROBE_REPORT_SCHEMA_VERSION})`] };
  }
  const problems = checkSchema(value, PROBE_REPORT_SCHEMA);
  if (!problems.length && (value as ProbeReport).ranks.length !== (value as ProbeReport).worldSize) {
    problems.push('$.ranks: one entry per rank expected (worldSize)');
  }
  return problems.length ? { ok: false, problems } : { ok: true, report: value as ProbeReport };
}

/** Parses report text (e.g. a file copied back from a cluster); bad JSON becomes a problem, never an exception. */
export function parseProbeReport(text: string): ReadReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, problems: [`not JSON: ${(e as Error).message}`] };
  }
  return validateProbeReport(value);
}
