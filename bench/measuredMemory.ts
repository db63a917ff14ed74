/**
 * Peak memory against published runs (issue 13 §4): every case of data/calibration/measured-memory.json read through
 * the CLI's own path (format reader, resolver, `--gpus`) and estimated; the estimate's peak reserved bytes per GPU
 * as torch counts them (without the CUDA context and NCCL buffers, shared/memory/torchView.ts) beside the published
 * max reserved; rows whose source reports the allocator's active or allocated bytes (torchtune's peak_memory_active,
 * metric "active"; LitGPT's max_memory_allocated, metric "allocated") are compared with the estimate's peak allocated. No memory parameter is fitted to these rows, so every
 * row is out of sample.
 */
import { resolve } from 'node:path';
import data from '../data/calibration/measured-memory.json';
import { loadConfig } from '../cli/load';
import { estimateMemory } from '../shared/memory/estimate';
import { torchReportedPeak } from '../shared/memory/torchView';
import { bitsandbytesSavesInput } from '../shared/memory/loraSaves';

export interface MemoryCase {
  readonly id: string; readonly source: string; readonly file: string; readonly gpus: string; readonly measured: number;
  /**
   * What the source measured: torch's peak reserved bytes (default), its peak active bytes (≈ allocated), or
   * torch.cuda.max_memory_allocated (LitGPT's "Memory used").
   */
  readonly metric?: 'reserved' | 'active' | 'allocated';
  /** Why a row stays far off (a cause not modelled or not known); printed, and kept out of the ±15 % guard of the tests. */
  readonly knownMiss?: string;
  /**
   * The bitsandbytes release the run used, where its source pins one: whether a 4-bit base keeps its linears' inputs
   * depends on it (shared/memory/loraSaves.ts `bitsandbytesSavesInput`), and a file does not say it.
   */
  readonly bitsandbytes?: string;
}

/** Full fine-tune, LoRA or QLoRA (4-bit base weights), from the plan the row reads to. */
export type TuneKind = 'full' | 'LoRA' | 'QLoRA';
export const MEMORY_CASES: readonly MemoryCase[] = data.cases as MemoryCase[];
const ROOT = resolve(__dirname, '../data/calibration');
const GiB = 2 ** 30;

/** Predicted peak reserved GiB per GPU of every case (undefined when the pipeline could not read it). */
export async function predictMeasuredMemory(): Promise<{ case: MemoryCase; predicted?: number; why?: string; kind?: TuneKind }[]> {
  const out: { case: MemoryCase; predicted?: number; why?: string; kind?: TuneKind }[] = [];
  for (const c of MEMORY_CASES) {
    const loaded = await loadConfig(resolve(ROOT, c.file), { gpus: c.gpus });
    const read = loaded.resolved.plan;
    const plan = read?.lora && c.bitsandbytes && read.lora.baseDtype === 'nf4'
      ? { ...read, lora: { ...read.lora, baseSavesInputs: bitsandbytesSavesInput(4, c.bitsandbytes) } }
      : read;
    if (!plan) { out.push({ case: c, why: loaded.resolved.problems.map((p) => p.message).join('; ') }); continue; }
    const e = estimateMemory(plan);
    // torch's reserved_bytes peak counts the caching allocator only: the CUDA context term stays out (torchView.ts).
    const of = (s: (typeof e.stages)[number]) => (c.metric === 'active' || c.metric === 'allocated' ? torchReportedPeak(s).allocated : torchReportedPeak(s).reserved);
    const kind: TuneKind = !plan.lora ? 'full' : plan.lora.baseDtype === 'nf4' ? 'QLoRA' : 'LoRA';
    out.push({ case: c, predicted: Math.max(0, ...e.stages.map(of)) / GiB, kind });
  }
  return out;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN; };

export async function benchMeasuredMemory(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const rows = await predictMeasuredMemory();
  const errs: number[] = [];
  const bySource = new Map<string, number[]>();
  for (const r of rows) {
    if (r.predicted === undefined) { out[`${r.case.id}`] = `not read: ${r.why}`; continue; }
    const e = r.predicted / r.case.measured - 1;
    errs.push(Math.abs(e));
    bySource.set(r.case.source, [...(bySource.get(r.case.source) ?? []), e]);
    out[`${r.case.id} (${r.case.source}; GiB measured → estimated)`] = `${r.case.measured.toFixed(1)} → ${r.predicted.toFixed(1)} (${pct(e)})`;
  }
  for (const [source, es] of bySource) {
    const abs = es.map(Math.abs);
    out[`${source}: median / max |error| (${es.length} rows, mean signed)`] = `${pct(median(abs)).replace('+', '')} / ${pct(Math.max(...abs)).replace('+', '')} (${pct(es.reduce((a, b) => a + b, 0) / es.length)})`;
  }
  for (const kind of ['full', 'LoRA', 'QLoRA'] as const) {
    const es = rows.filter((r) => r.kind === kind && r.predicted !== undefined).map((r) => Math.abs(r.predicted! / r.case.measured - 1));
    if (es.length) out[`${kind} rows: median / max |error|`] = `${pct(median(es)).replace('+', '')} / ${pct(Math.max(...es)).replace('+', '')} (${es.length} rows)`;
  }
  const misses = rows.filter((r) => r.case.knownMiss);
  if (misses.length) out['rows far off for a known or unmodelled cause'] = `${misses.length}: ${[...new Set(misses.map((r) => r.case.knownMiss))].join(' | ')}`;
  out['peak memory (reserved; active or allocated where the source reports it), all rows out of sample: median |error| (goal ≤ 5 %)'] = pct(median(errs)).replace('+', '');
  out['peak memory, all rows out of sample: max |error|'] = pct(Math.max(...errs)).replace('+', '');
  out['rows within 5 %'] = `${errs.filter((x) => x <= 0.05).length} of ${errs.length}`;
  return out;
}
