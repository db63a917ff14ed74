/** "Select GPU / Cluster": a quick pick over the GPU catalog, then GPUs per node and nodes; writes settings. */
import * as vscode from 'vscode';
import { listGpus } from '../../shared/hardware/gpus';
import { SETTINGS_SECTION } from '../../shared/protocol';
import { gpuItems, perNodeItems } from './clusterItems';

/** Workspace settings when a folder is open, else user settings. */
export function settingsTarget(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
}

/** A positive integer typed by the user, or undefined when cancelled. */
async function askInt(prompt: string, value: number, max: number): Promise<number | undefined> {
  const s = await vscode.window.showInputBox({
    prompt, value: String(value),
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= max ? undefined : `Enter a whole number from 1 to ${max}.`),
  });
  return s === undefined ? undefined : Number(s.trim());
}

export async function selectCluster(): Promise<void> {
  const cfg = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const currentGpu = cfg.get<string>('cluster.gpu', '');
  const items = gpuItems(listGpus(), currentGpu);
  const gpu = await vscode.window.showQuickPick(items, { title: 'ShardLens: GPU type (1/3)', placeHolder: 'GPU the estimate is for', matchOnDetail: true, matchOnDescription: true });
  if (!gpu) return;
  const chosen = listGpus().find((g) => g.id === gpu.id);
  const per = await vscode.window.showQuickPick(chosen ? perNodeItems(chosen) : perNodeItems({ name: gpu.label }), { title: 'ShardLens: GPUs per node (2/3)' });
  if (!per) return;
  const nodes = await askInt('ShardLens: number of nodes (3/3)', Math.max(1, cfg.get<number>('cluster.nodes', 1) || 1), 100_000);
  if (nodes === undefined) return;
  const target = settingsTarget();
  await cfg.update('cluster.gpu', gpu.id, target);
  await cfg.update('cluster.gpusPerNode', Number(per.label), target);
  await cfg.update('cluster.nodes', nodes, target);
  void vscode.window.showInformationMessage(`ShardLens: estimating for ${nodes} × ${per.label} × ${gpu.label}.`);
}
