/**
 * Backend probe classification, from the failure modes of @tensorflow/tfjs-node(-gpu) 4.22 recorded in
 * ../shared/reference/tfjs-notes.md §1 (require errors, dlopen errors, CUDA libraries missing), and one real probe run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyProbe, type ProbeOutcome } from '../../validation/probe/classify';
import { backendLabel, chooseBackend } from '../../validation/probe/launch';
import { probeBackends } from '../../validation/index';

const out = (line: object | null, stderr = '', extra: Partial<ProbeOutcome> = {}): ProbeOutcome => ({
  stdout: line ? `${JSON.stringify(line)}\n` : '', stderr, exitCode: 0, signal: null, timedOut: false, ...extra,
});

describe('backend probe classification', () => {
  const cases: [string, Parameters<typeof classifyProbe>[0], ProbeOutcome, boolean, RegExp][] = [
    ['package absent (optional dependency dropped by npm)', 'tensorflow-gpu',
      out({ loaded: false, code: 'MODULE_NOT_FOUND', error: "Cannot find module '@tensorflow/tfjs-node-gpu'" }), false, /not installed/],
    ['installed with --ignore-scripts: addon missing', 'tensorflow',
      out({ loaded: false, error: 'The Node.js native addon module (tfjs_binding.node) can not be found at path: …' }), false, /addon .*not built/],
    ['libtensorflow missing at dlopen', 'tensorflow',
      out({ loaded: false, error: 'libtensorflow.so.2: cannot open shared object file: No such file or directory' }), false, /libtensorflow could not be loaded/],
    ['GPU package without CUDA 11 / cuDNN 8: silently CPU', 'tensorflow-gpu',
      out({ loaded: true, detail: 'x' }, "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'"), false, /CUDA 11 \/ cuDNN 8/],
    ['GPU device created', 'tensorflow-gpu',
      out({ loaded: true }, 'I tensorflow/core/common_runtime/gpu/gpu_device.cc:1532] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 79000 MB memory'), true, /GPU device created/],
    ['native addon crashes the probe', 'tensorflow',
      out(null, 'Segmentation fault', { exitCode: null, signal: 'SIGSEGV' }), false, /crashed \(signal SIGSEGV\)/],
    ['probe hangs and is killed', 'tensorflow-gpu', out(null, '', { timedOut: true, exitCode: null, signal: 'SIGKILL' }), false, /did not finish/],
    ['wasm binary missing: setBackend returned false', 'wasm',
      out({ loaded: false, backend: 'cpu', error: 'wasm did not initialise' }), false, /did not initialise/],
    ['native addon loads, but not in a worker thread', 'tensorflow',
      out({ loaded: true, workerError: 'Module did not self-register' }), false, /not in a worker thread/],
    ['wasm works', 'wasm', out({ loaded: true, detail: 'wasm (SIMD, 1 thread)' }), true, /test matmul/],
  ];
  for (const [name, backend, o, ok, reason] of cases) {
    test(name, () => {
      const p = classifyProbe(backend, o);
      assert.equal(p.ok, ok);
      assert.match(p.reason, reason);
    });
  }

  test('the first usable backend in the order tensorflow-gpu → tensorflow → wasm → cpu is chosen', () => {
    const probes = [
      { name: 'cpu' as const, ok: true, reason: '' }, { name: 'wasm' as const, ok: true, reason: '' },
      { name: 'tensorflow' as const, ok: false, reason: '' }, { name: 'tensorflow-gpu' as const, ok: false, reason: '' },
    ];
    assert.equal(chooseBackend(probes), 'wasm');
    assert.equal(chooseBackend(probes.map((p) => ({ ...p, ok: p.name === 'tensorflow' }))), 'tensorflow');
    assert.equal(chooseBackend(probes.map((p) => ({ ...p, ok: false }))), null);
  });

  test('labels say that GPU memory is estimated unless the GPU backend ran', () => {
    assert.match(backendLabel('wasm', 'wasm (SIMD, 1 thread)'), /measured tensor bytes on wasm \(SIMD, 1 thread\); GPU memory is estimated/);
    assert.match(backendLabel('cpu'), /GPU memory is estimated/);
    assert.doesNotMatch(backendLabel('tensorflow-gpu'), /GPU memory is estimated/);
  });

  test('real probes in child processes: wasm and cpu start here; every backend has a reason', async () => {
    const probes = await probeBackends();
    assert.deepEqual(probes.map((p) => p.name), ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']);
    for (const p of probes) assert.ok(p.reason.length > 0);
    assert.equal(probes.find((p) => p.name === 'wasm')?.ok, true);
    assert.equal(probes.find((p) => p.name === 'cpu')?.ok, true);
  });
});
