/**
 * "Calibrate from a Training Log…": the user picks the log of a run of the active config (torchtitan, Megatron-LM,
 * DeepSpeed or the Hugging Face Trainer); its measured step time and peak memory are set against the estimate, and
 * the correction that reproduces them can be saved to `shardlens.calibration` for every config on that GPU. Reads the
 * log's end only (bounded, a regular file); launches nothing, so it also works in untrusted workspaces.
 */
import * as vscode from 'vscode';
import { basename } from 'node:path';
import { readTextTail } from '../../server/io/read';
import { calibrateFromLog } from '../../shared/calibration/fromLog';
import { CALIBRATION_SETTING, normalizeCalibration } from '../../shared/plan/calibration';
import { comparisonDetails, comparisonLine, correctionLine } from '../../shared/wording/calibration';
import type { ProbeCommandDeps } from './commands';

const SAVE = 'Save to Workspace Settings';
const DETAILS = 'Show Details';

export async function runLogCalibration(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  const plan = await deps.getPlan(deps.targetUri(arg));
  if (!plan) throw new Error('open a training config that ShardLens can estimate first (the one the log ran)');
  const files = await vscode.window.showOpenDialog({
    canSelectMany: false, title: 'ShardLens: training log of a run of this config',
    filters: { 'Training logs': ['log', 'txt', 'out', 'err'], 'All files': ['*'] },
  });
  if (!files?.length) return;
  const path = files[0].fsPath;
  // The user picked this file: read wherever it is, but only its end (32 MiB) and only as a regular file.
  const read = readTextTail(path);
  if (!read.ok) throw new Error(read.detail);
  const cfg = vscode.workspace.getConfiguration();
  const stored = normalizeCalibration(cfg.get(CALIBRATION_SETTING));
  const r = calibrateFromLog(plan, { text: read.text, name: basename(path), skippedBytes: read.skippedBytes }, stored, new Date().toISOString());
  if (!r.ok) throw new Error(`${basename(path)}: ${r.error}`);
  const { clusterId, comparison, correction, after } = r;
  for (const line of comparisonDetails(basename(path), comparison, correction, after)) deps.log.info(line);
  const canSave = !!(comparison.step || comparison.memory);
  const pick = await vscode.window.showInformationMessage(
    `ShardLens: ${comparisonLine(comparison)}.${canSave ? ` Calibrate "${clusterId}": ${correctionLine(correction, after)}?` : ''}`,
    ...(canSave ? [SAVE, DETAILS] : [DETAILS]),
  );
  if (pick === DETAILS) deps.log.show();
  if (pick !== SAVE) return;
  await cfg.update(CALIBRATION_SETTING, { ...stored, [clusterId]: correction }, vscode.ConfigurationTarget.Workspace);
  deps.log.info(`calibration ${clusterId} saved: ${JSON.stringify(correction)}`);
}
