// Builds every entry point with esbuild: extension, server, CLI, webview and the validation runner.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, existsSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** Prints esbuild problems as `file:line:col` so editors can match them. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
    });
  },
};

const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [problemMatcher],
};

/** Node entry points (cjs), keyed by output name. Missing sources are skipped while the tree grows. */
const nodeEntries = {
  extension: 'extension/main.ts',
  server: 'server/main.ts',
  'analysis-worker': 'server/analysis/worker.ts',
  cli: 'cli/main.ts',
  'validation-runner': 'validation/runner/main.ts',
  'validation-worker': 'validation/runner/worker.ts',
  'backend-probe': 'validation/runner/probeBackend.ts',
};
const browserEntries = {
  webview: 'webview/main.ts',
};

const pick = (entries) => Object.fromEntries(Object.entries(entries).filter(([, src]) => existsSync(src)));

const contexts = [
  await esbuild.context({
    ...common,
    entryPoints: pick(nodeEntries),
    outdir: 'dist',
    platform: 'node',
    // jsonc-parser's UMD entry requires its files dynamically; its ESM entry bundles cleanly.
    mainFields: ['module', 'main'],
    format: 'cjs',
    target: 'node20',
    external: ['vscode', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu'],
    // Node strips a hashbang in any module, so the bins (cli, server) run directly and IPC/require use is unaffected.
    banner: { js: '#!/usr/bin/env node\nvar __shardlensImportMetaUrl = require("url").pathToFileURL(__filename).href;' },
    // web-tree-sitter reads import.meta.url, which a cjs bundle lacks: point it at the bundle's own file.
    define: { 'import.meta.url': '__shardlensImportMetaUrl' },
  }),
  await esbuild.context({
    ...common,
    entryPoints: pick(browserEntries),
    outdir: 'dist/webview',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    loader: { '.css': 'text' },
  }),
];

/** Copies runtime assets that are loaded from disk rather than bundled. */
function copyAssets() {
  mkdirSync('dist/assets', { recursive: true });
  const assets = [
    ['node_modules/web-tree-sitter/tree-sitter.wasm', 'dist/assets/tree-sitter.wasm'],
    ['node_modules/tree-sitter-bash/tree-sitter-bash.wasm', 'dist/assets/tree-sitter-bash.wasm'],
  ];
  for (const [from, to] of assets) if (existsSync(from)) cpSync(from, to);
  for (const dir of ['node_modules/@tensorflow/tfjs-backend-wasm/dist']) {
    if (!existsSync(dir)) continue;
    for (const f of ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm']) {
      if (existsSync(`${dir}/${f}`)) cpSync(`${dir}/${f}`, `dist/assets/${f}`);
    }
  }
  if (existsSync('probe')) cpSync('probe', 'dist/probe', { recursive: true, filter: (p) => !p.includes('__pycache__') });
}

if (watch) {
  copyAssets();
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('watching…');
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  copyAssets();
}
