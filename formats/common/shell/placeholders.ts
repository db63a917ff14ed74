/**
 * Template placeholders such as `DATA=<path to data>` or `--container-image <image>`: bash would read `<` as a
 * redirection, and so does the parser, which then swallows the rest of the script. They are masked as quoted words
 * of the same length (offsets stay valid) and reported, so the script still reads and says what it left open.
 */
import type { FactSink } from '../sink';
import type { LineIndex } from '../text';

/** `<words>` not preceded by `<`, a word character or `$` (heredocs, redirections and `$(<file)` stay). */
const PLACEHOLDER = /(?<![<\w$])<([A-Za-z{][^<>\n]{0,100}?)>/y;

export interface Masked { readonly text: string; readonly found: readonly { readonly start: number; readonly end: number; readonly text: string }[] }

/**
 * The text with each placeholder's angle brackets turned into double quotes. Only unquoted placeholders are masked
 * (inside quotes `<` is an ordinary character); comments are skipped.
 */
export function maskPlaceholders(text: string): Masked {
  const found: { start: number; end: number; text: string }[] = [];
  if (!text.includes('<')) return { text, found };
  const out = text.split('');
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '\\') { i++; continue; }
    if (c === '"' || c === "'") { quote = c; continue; }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) { const nl = text.indexOf('\n', i); i = nl < 0 ? text.length : nl; continue; }
    if (c !== '<') continue;
    PLACEHOLDER.lastIndex = i;
    const m = PLACEHOLDER.exec(text);
    if (!m || (i > 0 && /[<\w$]/.test(text[i - 1]!))) continue;
    found.push({ start: i, end: i + m[0].length, text: m[0] });
    out[i] = '"';
    out[i + m[0].length - 1] = '"';
    i += m[0].length - 1;
  }
  return { text: out.join(''), found };
}

/** One information diagnostic on the first placeholder, naming a few of them. */
export function reportPlaceholders(s: FactSink, m: Masked, li: LineIndex): void {
  if (!m.found.length) return;
  const names = [...new Set(m.found.map((f) => f.text))].slice(0, 3).join(', ');
  s.diag('template-placeholders', 'info',
    `This script is a template: ${m.found.length} placeholder${m.found.length > 1 ? 's' : ''} (${names}${m.found.length > 3 ? ', …' : ''}) must be filled in before it runs; values that depend on them are not read.`,
    li.range(m.found[0]!.start, m.found[0]!.end));
}
