/** "Select Model": a bundled preset or a Hugging Face config.json for files that do not name their model. */
import * as vscode from 'vscode';
import { SETTINGS_SECTION } from '../../shared/protocol';
import { settingsTarget } from './cluster';

/** A bundled preset: id and display name. */
export interface PresetItem { readonly id: string; readonly name: string }

export async function selectModel(presets: readonly PresetItem[]): Promise<void> {
  const browse = { label: '$(folder-opened) Choose a config.json…', id: '' };
  const clear = { label: '$(close) Clear (use what the file says)', id: '' };
  const items = [browse, ...presets.map((p) => ({ label: p.name, description: p.id, id: p.id })), clear];
  const pick = await vscode.window.showQuickPick(items, { title: 'ShardLens: model for files that do not name one', matchOnDescription: true });
  if (!pick) return;
  let value = pick.id;
  if (pick === browse) {
    const uris = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Hugging Face config': ['json'] }, openLabel: 'Use this config.json' });
    if (!uris?.[0]) return;
    value = vscode.workspace.asRelativePath(uris[0], false);
  }
  await vscode.workspace.getConfiguration(SETTINGS_SECTION).update('model', pick === clear ? undefined : value, settingsTarget());
  if (pick !== clear) void vscode.window.showInformationMessage(`ShardLens: model set to ${value}.`);
}
