/**
 * Loads web-tree-sitter and the bash grammar once. The wasm files are looked up next to the bundle
 * (dist/assets, copied by scripts/build.mjs) and in node_modules (tests, development).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

function candidates(file: string, pkg: string): string[] {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  const out = [join(here, 'assets', file), join(here, file), join(here, '..', 'assets', file), join(here, '..', 'dist', 'assets', file)];
  for (let d = here, i = 0; i < 8; i++, d = dirname(d)) out.push(join(d, 'node_modules', pkg, file));
  out.push(resolve('node_modules', pkg, file), resolve('dist', 'assets', file));
  return out;
}

function find(file: string, pkg: string): string | undefined {
  return candidates(file, pkg).find((p) => existsSync(p));
}

/** Initialises the shell parser; safe to call more than once. */
export function initShellParser(): Promise<void> {
  loading ??= (async () => {
    const core = find('tree-sitter.wasm', 'web-tree-sitter');
    const bash = find('tree-sitter-bash.wasm', 'tree-sitter-bash');
    if (!bash) throw new Error('tree-sitter-bash.wasm not found (looked in dist/assets and node_modules)');
    await Parser.init(core ? { locateFile: () => core } : undefined);
    const lang = await Language.load(bash);
    const p = new Parser();
    p.setLanguage(lang);
    parser = p;
  })();
  return loading;
}

/** The ready parser, or undefined before `initShellParser` finished. */
export function shellParser(): Parser | undefined {
  return parser;
}
