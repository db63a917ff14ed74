/** Deterministic mutations of config text for the fuzz test: truncations, deletions, duplications, odd values. */

const ODD_VALUES = ['0', '-1', '-7', '1e30', '1e-30', 'NaN', 'Infinity', '"auto"', 'auto', '""', 'null', 'true', '3.5', '99999999999', '$((1/0))', '${X:-}', '[]', '{}', '0x10'];
const ODD_CHARS = ['{', '}', '"', ':', '\n', '$', '(', ')', '[', ']', '\\', '=', '#', '`', '\t', ' ', ',', "'", '-', '\u0000', '\u{1F600}'];

/** One mutation of `text` chosen by `r`. */
export function mutate(text: string, r: () => number): string {
  const n = text.length;
  const at = Math.floor(r() * (n + 1));
  const len = Math.floor(r() * Math.min(40, n - at + 1));
  switch (Math.floor(r() * 7)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return text.slice(0, at) + text.slice(at + len);
    case 2:
      return text.slice(0, at) + text.slice(at, at + len).repeat(1 + Math.floor(r() * 3)) + text.slice(at + len);
    case 3: {
      const numbers = [...text.matchAll(/-?\d+(\.\d+)?(e[+-]?\d+)?/gi)];
      const m = numbers[Math.floor(r() * numbers.length)];
      if (!m || m.index === undefined) return text.slice(0, at);
      const v = ODD_VALUES[Math.floor(r() * ODD_VALUES.length)];
      return text.slice(0, m.index) + v + text.slice(m.index + m[0].length);
    }
    case 4:
      return text.slice(0, at) + ODD_CHARS[Math.floor(r() * ODD_CHARS.length)] + text.slice(at);
    case 5: {
      const lines = text.split('\n');
      const i = Math.floor(r() * lines.length);
      const j = Math.floor(r() * lines.length);
      [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
      return lines.join('\n');
    }
    default:
      return mutate(mutate(text, r), r);
  }
}
