/**
 * Initialises a TensorFlow.js backend in the current thread. wasm and cpu come from the bundled tfjs-core; the native
 * backends come from the optional @tensorflow/tfjs-node(-gpu) packages, which bring their own tf namespace.
 * Facts and traps: ../shared/reference/tfjs-notes.md §1, §2, §5.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import * as tfcore from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
// A named import: the package's sideEffects list would let the bundler drop a bare import (and the cpu backend).
import { version_cpu } from '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import type { TF } from '../model/ops';
import type { BackendName } from '../types';
import { NATIVE_PACKAGE_NAMES } from '../probe/packages';


export interface ReadyBackend {
  readonly tf: TF;
  readonly backend: BackendName;
  readonly detail: string;
}

/**
 * Loads an optional native package from the extension's own node_modules, then from the workspace (the current
 * folder, where a user may `npm install @tensorflow/tfjs-node-gpu`), then from $SHARDLENS_TFJS_NODE_PATH.
 * Throws what the first require threw when none has it.
 */
function requireNative(pkg: string): TF {
  const bases = [__filename, join(process.cwd(), 'index.js'), ...(process.env.SHARDLENS_TFJS_NODE_PATH ? [join(process.env.SHARDLENS_TFJS_NODE_PATH, 'index.js')] : [])];
  let first: unknown;
  for (const base of bases) {
    try {
      // createRequire with a computed name keeps esbuild from trying to bundle the optional package.
      return createRequire(base)(pkg) as TF;
    } catch (e) {
      first ??= e;
      if ((e as { code?: string }).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  throw first;
}

/** Sets up `name`; a wasm failure falls back to cpu explicitly (setBackend returns false, getBackend would still lie). */
export async function initBackend(name: BackendName, assetsDir: string): Promise<ReadyBackend> {
  const pkg = NATIVE_PACKAGE_NAMES[name];
  if (pkg) {
    const tf = requireNative(pkg);
    if (!(await tf.setBackend('tensorflow'))) throw new Error(`${pkg} loaded but the 'tensorflow' backend did not initialise`);
    return { tf, backend: name, detail: `${pkg} (libtensorflow)` };
  }
  const tf = tfcore as unknown as TF;
  if (name === 'wasm') {
    setWasmPaths(assetsDir.endsWith('/') ? assetsDir : `${assetsDir}/`);
    if (await tf.setBackend('wasm')) {
      const simd = Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'));
      return { tf, backend: 'wasm', detail: `wasm (${simd ? 'SIMD' : 'no SIMD'}, 1 thread)` };
    }
  }
  if (!(await tf.setBackend('cpu')) || tf.getBackend() !== 'cpu') throw new Error('the pure-JS cpu backend did not initialise');
  return { tf, backend: 'cpu', detail: `cpu (pure JS, tfjs-backend-cpu ${version_cpu})${name === 'wasm' ? ', wasm failed to initialise' : ''}` };
}
