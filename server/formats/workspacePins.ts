/**
 * The bitsandbytes release a workspace pins, for a config that quantizes its base with bitsandbytes' 4-bit linear:
 * whether that linear keeps its input for the backward changed in 0.43.2 (shared/memory/loraSaves.ts
 * `bitsandbytesSavesInputUnder`), and a config file does not say which release runs it; the project's dependency files
 * do. Read through the workspace host (its bounds: inside the workspace, regular files, size cap), from the config's
 * folder up to the workspace folder and never above it; the nearest folder with a pin that decides wins, lock files
 * first. The winning fact is the reader's own, with the pin as its value's source, and the file a dependency.
 */
import { dirname, join, relative, isAbsolute } from 'node:path';
import type { ConfigFacts, Fact } from '../../shared/plan/facts';
import { bitsandbytesSavesInputUnder, BNB_4BIT_DROPS_INPUT } from '../../shared/memory/loraSaves';
import { findPins, PIN_FILES, type PackagePin } from '../../formats/common/packagePins';
import type { WorkspaceHost } from './workspace';
import { read } from './hostRead';
import { within } from '../io/roots';

/** Folders walked up at most (the config's own included). */
const MAX_LEVELS = 12;

/** A pin that decides whether the 4-bit linear keeps its input, and where it is. */
export interface DecidingPin {
  readonly path: string;
  readonly pin: PackagePin;
  readonly saves: boolean;
}

/** The nearest bitsandbytes pin that decides the 4-bit linear's saves, from `configPath`'s folder up to the workspace root. */
export function bitsandbytesPin(configPath: string, host: WorkspaceHost): DecidingPin | undefined {
  if (!isAbsolute(configPath)) return undefined;
  const root = host.root;
  let dir = dirname(configPath);
  for (let level = 0; level < MAX_LEVELS; level++) {
    // Without a workspace folder only the config's own folder is read.
    if (root ? !within(dir, root) : level > 0) return undefined;
    for (const name of PIN_FILES) {
      const path = join(dir, name);
      const text = read(host, path);
      if (text === undefined) continue;
      for (const pin of findPins(name, text, 'bitsandbytes')) {
        const saves = bitsandbytesSavesInputUnder(4, pin.spec);
        if (saves !== undefined) return { path, pin, saves };
      }
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
  return undefined;
}

/**
 * The primary facts with `lora.baseSavesInputs` taken from the workspace's bitsandbytes pin, where a reader derived it
 * for a 4-bit bitsandbytes base (formats/common/finetune.ts `bnbSavesInputs`) and a pin decides it; the pin's file
 * joins `deps`. Facts a file states, and 8-bit bases (which keep their inputs in every release), are left as read.
 */
export function withBitsandbytesPin(primary: ConfigFacts, related: readonly ConfigFacts[], path: string, host: WorkspaceHost, deps: string[]): ConfigFacts {
  const files = [primary, ...related];
  // The fact the merge keeps (shared/plan/resolve.ts merge): the first file's that is not a default.
  const facts = files.map((f) => f.facts['lora.baseSavesInputs']).filter((f) => f !== undefined);
  const fact = facts.find((f) => f.source.kind !== 'default') ?? facts[0];
  const dtype = files.map((f) => f.facts['lora.baseDtype']?.value).find((v) => v !== undefined);
  if (!fact || fact.source.kind !== 'derived' || dtype !== 'nf4') return primary;
  const found = bitsandbytesPin(path, host);
  if (!found) return primary;
  deps.push(found.path);
  const where = `${relative(dirname(path), found.path) || found.path}:${found.pin.line + 1}`;
  const kept = found.saves
    ? `releases before ${BNB_4BIT_DROPS_INPUT} keep each 4-bit linear's input for the backward (bitsandbytes/autograd/_functions.py MatMul4Bit: ctx.tensors = (A, B))`
    : `from ${BNB_4BIT_DROPS_INPUT} on its 4-bit linear keeps only its packed weight for the backward (MatMul4Bit: ctx.tensors = (None, B))`;
  // A related file's key range is not a place in the primary file: the fact then has none.
  const { keyRange: _r, key: _k, ...unplaced } = fact;
  const pinned: Fact = {
    ...(primary.facts['lora.baseSavesInputs'] === fact ? fact : unplaced),
    value: found.saves,
    source: {
      kind: 'derived',
      detail: `${where} ${found.pin.locked ? `locks bitsandbytes at ${found.pin.spec.slice(2)}` : `pins bitsandbytes${found.pin.spec}`}: ${kept}`,
      uri: found.path,
      range: { start: { line: found.pin.line, character: found.pin.start }, end: { line: found.pin.line, character: found.pin.end } },
    },
  };
  // In the primary file's facts, which the merge prefers to a related file's derived one.
  return { ...primary, facts: { ...primary.facts, 'lora.baseSavesInputs': pinned } };
}
