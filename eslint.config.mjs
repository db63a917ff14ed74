import tseslint from 'typescript-eslint';

/** Imports that would make the estimation core impure (editor, LSP, Node or DOM). */
const impure = [
  'vscode', 'vscode-languageserver', 'vscode-languageserver/*', 'vscode-languageclient', 'vscode-languageclient/*',
  'vscode-languageserver-textdocument', 'node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'worker_threads',
  'url', 'http', 'https', 'net', 'crypto', 'stream', 'util', 'events',
];

/** File-content reads: outside server/io every read of a file goes through its bounded reader (issue 16). */
const rawReads = ['readFileSync', 'readFile', 'createReadStream', 'openSync', 'open', 'readSync', 'read'];
const boundedReadsOnly = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
  name, importNames: rawReads, message: 'Read files through server/io/read.ts (bounded, regular files only, inside the workspace).',
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/e2e/.cache/**', '**/*.js', '**/*.mjs', '.gl/**', '.whl/**', '.scratch/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['shared/**/*.ts'],
    ignores: ['shared/**/*.test.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: impure, message: 'shared/ is the pure core: no editor, LSP, Node or DOM imports.' }] }],
      'no-restricted-globals': ['error', 'window', 'document', 'navigator', 'process', 'require', 'Buffer', '__dirname', 'fetch', 'localStorage'],
    },
  },
  {
    files: ['formats/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['vscode', 'vscode-languageserver', 'vscode-languageserver/*', 'vscode-languageclient', 'vscode-languageclient/*'], message: 'formats/ is read by the CLI and validation too: no editor or LSP imports.' },
        { group: ['**/server/*', '**/extension/*', '**/cli/*', '**/validation/*', '**/webview/*'], message: 'formats/ depends only on shared/.' },
      ] }],
    },
  },
  {
    files: ['cli/**/*.ts', 'server/**/*.ts', 'formats/**/*.ts', 'extension/**/*.ts', 'validation/**/*.ts'],
    ignores: ['server/io/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: boundedReadsOnly }],
      // Prototype pollution has no legitimate use here.
      'no-proto': 'error',
      'no-prototype-builtins': 'error',
    },
  },
  {
    // The dashboards' browser bundle imports the webview and settings parts of the protocol, never the barrel: its LSP
    // part carries the JSON-RPC library's RequestType values.
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)shared/protocol$', message: 'Import shared/protocol/webview (or /settings) in the webview bundle.' }, { group: ['vscode-jsonrpc', 'vscode-jsonrpc/*'], message: 'The webview bundle has no JSON-RPC.' }] }],
    },
  },
);
