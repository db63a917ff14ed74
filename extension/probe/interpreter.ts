/** The Python interpreter the user selected in the Python extension, if it is installed and says so. */
import * as vscode from 'vscode';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null;

/**
 * Asks ms-python.python: the environments API (`getActiveEnvironmentPath`), then the older `getExecutionDetails`.
 * Returns undefined when the extension is absent or answers nothing usable; ShardLens then tries its own candidates.
 */
export async function selectedPython(resource?: vscode.Uri): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const api: unknown = ext.isActive ? ext.exports : await ext.activate();
    if (!isObj(api)) return undefined;
    const envs = api.environments;
    if (isObj(envs) && typeof envs.getActiveEnvironmentPath === 'function') {
      const p: unknown = envs.getActiveEnvironmentPath(resource);
      if (isObj(p) && typeof p.path === 'string' && p.path) return p.path;
    }
    const settings = api.settings;
    if (isObj(settings) && typeof settings.getExecutionDetails === 'function') {
      const d: unknown = settings.getExecutionDetails(resource);
      if (isObj(d) && Array.isArray(d.execCommand) && typeof d.execCommand[0] === 'string') return d.execCommand[0];
    }
  } catch {
    return undefined;
  }
  return undefined;
}
