/** Workspace Trust: estimates work everywhere, but nothing is launched in an untrusted workspace. */
import * as vscode from 'vscode';

/** Returns true when launching processes is allowed; otherwise tells the user why not and returns false. */
export function requireTrust(action: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage(
    `ShardLens: ${action} launches processes, which is disabled in an untrusted workspace. Estimates still work.`,
    'Manage Workspace Trust',
  ).then((pick) => { if (pick) void vscode.commands.executeCommand('workbench.trust.manage'); });
  return false;
}
