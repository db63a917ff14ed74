// Writes the key table of each docs/formats/<name>.md that has `<!-- keys:start -->` and `<!-- keys:end -->` markers
// from formats/<name>/keys.json (the text around the markers is written by hand).
// `--check` exits 1 when a page is out of date instead of writing it (the format-docs test runs it).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Pages with a key table: docs/formats/<name>.md shows formats/<name>/keys.json. */
const PAGES = readdirSync('docs/formats').filter((f) => f.endsWith('.md') && readFileSync(`docs/formats/${f}`, 'utf8').includes('<!-- keys:start -->'))
  .map((f) => f.slice(0, -3));

const cell = (v) => String(v ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
const shown = (v) => (v === undefined || v === null ? '' : `\`${JSON.stringify(v)}\``);

function tableOf(name) {
  const t = JSON.parse(readFileSync(`formats/${name}/keys.json`, 'utf8'));
  const rows = Object.entries(t.keys).map(([k, e]) => {
    const aliases = e.aliases?.length ? ` (also ${e.aliases.map((a) => `\`${a}\``).join(', ')})` : '';
    const dep = e.deprecated ? ` Deprecated: use \`${e.deprecated}\`.` : '';
    const auto = e.auto ? ` "auto": ${e.auto}.` : '';
    return `| \`${cell(k)}\`${aliases} | ${e.plan ? `\`${e.plan}\`` : ''} | ${cell(e.type)} | ${cell(shown(e.default))} | ${cell(e.description)}${cell(auto)}${cell(dep)} |`;
  });
  return [`Key table: \`formats/${name}/keys.json\` (${rows.length} keys).`, '', '| key | plan input | type | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

const check = process.argv.includes('--check');
let stale = 0;
for (const page of PAGES) {
  const names = [page];
  const path = `docs/formats/${page}.md`;
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf('<!-- keys:start -->');
  const end = text.indexOf('<!-- keys:end -->');
  if (start < 0 || end < start) throw new Error(`${path}: missing <!-- keys:start --> / <!-- keys:end --> markers`);
  const out = `${text.slice(0, start)}<!-- keys:start -->\n${names.map(tableOf).join('\n\n')}\n${text.slice(end)}`;
  if (out === text) continue;
  stale++;
  if (check) console.error(`${path} is out of date: run node scripts/gen-format-docs.mjs`);
  else writeFileSync(path, out);
}
if (check && stale) process.exit(1);
