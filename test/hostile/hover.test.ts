/**
 * Issue 16, medium: text from a config file (values, keys, file names in sources) is escaped in hover Markdown, so a
 * repository cannot put links, images, HTML or broken code spans into ShardLens's hovers.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { analyzeDocument } from '../../server/analysis/analyze';
import { core, initCore } from '../../server/analysis/core';
import { createHost } from '../../server/analysis/host';
import { buildHover } from '../../server/features/hover';
import { escapeMarkdown, inlineCode } from '../../server/features/markdown';
import { normalizeSettings } from '../../server/settings';

before(async () => { await initCore(); });

describe('escapeMarkdown and inlineCode', () => {
  // CommonMark: a backslash before ASCII punctuation makes it literal; entities make HTML inert.
  const CASES: [string, string][] = [
    ['[click](command:workbench.action.terminal.new)', '\\[click\\](command:workbench.action.terminal.new)'],
    ['<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert(1)&gt;'],
    ['**bold** `code` |a|b| ~~s~~', '\\*\\*bold\\*\\* \\`code\\` \\|a\\|b\\| \\~\\~s\\~\\~'],
    ['line\n# heading', 'line # heading'],
    ['ds_zero2.json', 'ds_zero2.json'],
  ];
  for (const [raw, want] of CASES) test(JSON.stringify(raw), () => assert.equal(escapeMarkdown(raw), want));

  test('a code span holds backticks literally', () => {
    assert.equal(inlineCode('a`b'), '``a`b``');
    assert.equal(inlineCode('`x`'), '`` `x` ``');
  });
});

test('a hover on a file whose name carries a link, parentheses and HTML keeps them inert', () => {
  const name = 'ds_config_(x)[y](command:evil)<b>.json';
  const uri = pathToFileURL(`/ws/${name}`).toString();
  const text = '{\n  "zero_optimization": {"stage": 2},\n  "train_micro_batch_size_per_gpu": 4\n}\n';
  const a = analyzeDocument({ uri, version: 1, text, settings: normalizeSettings({}) }, createHost(() => undefined, () => '/ws'), core());
  const h = buildHover(a, { line: 1, character: 25 }, core());
  const md = (h?.contents as { value: string } | undefined)?.value ?? '';
  assert.match(md, /zero_optimization\.stage/, 'the hover is on the stage key');
  // The only link is ShardLens's own, and its destination holds no bracket or parenthesis that could end it early.
  const links = [...md.matchAll(/\]\(([^)\s]*)\)/g)].map((m) => m[1]);
  assert.equal(links.length, 1, md);
  assert.match(links[0] ?? '', /^command:shardlens\.showDerivation\?[^()[\]<>\s]*$/);
  assert.doesNotMatch(md, /<b>/);
});
