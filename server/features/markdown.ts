/**
 * Text from a config file inside hover Markdown: escaped so that a value such as `[x](command:…)`, `<img …>`, a
 * heading or a backtick cannot change the hover's structure. Every value taken from a file goes through one of these
 * two functions before it is interpolated into Markdown.
 */

/**
 * Escapes what lets inline text change structure: links and images (`[`, `]`), code spans (backticks), emphasis
 * (`*`), tables and strike-through (`|`, `~`), backslashes, and HTML or autolinks (`<`, `>`, `&` as entities).
 * Newlines become spaces, so a value cannot start a heading, a list or a block. Values are interpolated mid-line, so
 * `#`, `-` and digits cannot begin a block; `_` and `.` are left as written (file names read as they are).
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/[\\`*[\]|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** "The estimate assumes `v`: why." for an assumption standing in for a value, as the hover and the inlay tooltip say it. */
export function assumedSentence(value: string, detail: string): string {
  return `The estimate assumes ${inlineCode(value.slice(0, 200))}: ${escapeMarkdown(detail)}.`;
}

/** A code span holding `text` literally: fenced by more backticks than any run inside it, padded when needed. */
export function inlineCode(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}
