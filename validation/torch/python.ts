/** Finds a Python interpreter that can import torch, and reports what it offers (CUDA, GPUs, DeepSpeed). */
import { spawn } from 'node:child_process';

export interface PythonInfo {
  readonly python: string;
  readonly executable: string;
  readonly pythonVersion: string;
  readonly torch: string | null;
  readonly cuda: boolean;
  readonly gpus: number;
  readonly distributed: boolean;
  readonly deepspeed: string | null;
}

export type FindPythonResult =
  | { readonly ok: true; readonly info: PythonInfo }
  | { readonly ok: false; readonly code: 'python-not-found' | 'torch-missing'; readonly message: string; readonly tried: readonly string[] };

// Prints one JSON line; DeepSpeed is looked up without importing it (its import takes seconds).
const CHECK = [
  'import json, sys, platform, importlib.util',
  'info = {"executable": sys.executable, "pythonVersion": platform.python_version(), "torch": None, "cuda": False, "gpus": 0, "distributed": False, "deepspeed": None}',
  'try:',
  '    import torch',
  '    info.update(torch=torch.__version__, cuda=bool(torch.cuda.is_available()), distributed=bool(torch.distributed.is_available()))',
  '    info["gpus"] = torch.cuda.device_count() if info["cuda"] else 0',
  'except Exception as e:',
  '    info["torchError"] = str(e)',
  'if importlib.util.find_spec("deepspeed"):',
  '    import importlib.metadata as md',
  '    try: info["deepspeed"] = md.version("deepspeed")',
  '    except Exception: info["deepspeed"] = "unknown"',
  'print("SHARDLENS_PY " + json.dumps(info))',
].join('\n');

/** Runs the check with one interpreter; resolves null when it cannot be started or answers nothing usable. */
export function inspectPython(python: string, timeoutMs = 60_000): Promise<PythonInfo | null> {
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(python, ['-c', CHECK], { stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      resolve(null);
      return;
    }
    const proc = child;
    // Our own timer: spawn's `timeout` option leaves its timer running when the program does not exist.
    const timer = setTimeout(() => { proc.kill('SIGKILL'); done(null); }, timeoutMs);
    let settled = false;
    function done(v: PythonInfo | null): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    }
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('error', () => done(null));
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('SHARDLENS_PY '));
      if (!line) return done(null);
      try {
        done({ python, ...(JSON.parse(line.slice('SHARDLENS_PY '.length)) as Omit<PythonInfo, 'python'>) });
      } catch {
        done(null);
      }
    });
  });
}

/**
 * Interpreters to try, in order: the one given (e.g. the Python extension's selection), $SHARDLENS_PYTHON, Debian's
 * /usr/bin/python3 (pyenv shims on PATH often cannot see Debian's python3-torch), then python3 and python on PATH.
 */
export function pythonCandidates(explicit?: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const list = [explicit, env.SHARDLENS_PYTHON, process.platform === 'win32' ? undefined : '/usr/bin/python3', 'python3', 'python'];
  return [...new Set(list.filter((x): x is string => !!x && x.trim() !== ''))];
}

// Interpreters found with torch, so repeated runs skip the check; failures are not cached (torch may be installed later).
const found = new Map<string, PythonInfo>();

/** The first candidate with torch; otherwise says whether Python or only torch is missing. */
export async function findPython(explicit?: string, env: NodeJS.ProcessEnv = process.env): Promise<FindPythonResult> {
  const tried = explicit ? [explicit] : pythonCandidates(undefined, env);
  const key = tried.join('\0');
  const cached = found.get(key);
  if (cached) return { ok: true, info: cached };
  let withoutTorch: PythonInfo | undefined;
  for (const py of tried) {
    const info = await inspectPython(py);
    if (info?.torch) {
      found.set(key, info);
      return { ok: true, info };
    }
    if (info && !withoutTorch) withoutTorch = info;
  }
  if (withoutTorch) {
    return {
      ok: false, code: 'torch-missing', tried,
      message: `torch is not importable by ${withoutTorch.executable} (Python ${withoutTorch.pythonVersion}); install PyTorch for it (Debian: apt-get install python3-torch) or choose an interpreter that has it`,
    };
  }
  return { ok: false, code: 'python-not-found', tried, message: `no Python interpreter could be started (tried ${tried.join(', ')})` };
}
