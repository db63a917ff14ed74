/**
 * Writing `--flag value` settings into a launch script: values edited where they are defined (the flag's literal or the
 * variable the parser followed), bare flags inserted next to a related flag or removed. Shared by the Megatron and
 * Hugging Face Trainer rewriters.
 */
import type { ConfigFacts } from '../../../shared/plan/facts';
import { applyOffsetEdits, insertNear, removeFlag, valueEdit, type FlagHit, type OffsetEdit } from './shellFlags';
import { lineStarts, offsetAt } from './text';

/**
 * The parser's value range for a flag (it follows variables to their definitions), when it covers a plain number
 * in this file; undefined otherwise, and the script scanner decides.
 */
function factEdit(text: string, facts: ConfigFacts | undefined, flag: string, value: string): OffsetEdit | undefined {
  if (!facts) return undefined;
  const fact = Object.values(facts.facts).find((f) => f.key === flag && f.source.kind === 'explicit' && f.source.range);
  const range = fact?.source.range;
  if (!range || (fact.source.uri && fact.source.uri !== facts.uri)) return undefined;
  const starts = lineStarts(text);
  const from = offsetAt(starts, range.start);
  const to = offsetAt(starts, range.end);
  return /^\d+$/.test(text.slice(from, to)) ? { from, to, text: value } : undefined;
}

/**
 * Writes the desired flags: a value edits the flag's value (or the variable it comes from), true keeps or inserts a
 * bare flag next to `anchor`, undefined removes the flag. Flags whose absence means the value are not inserted.
 */
export function applyFlags(
  text: string, hits: readonly FlagHit[], want: ReadonlyMap<string, string | true | undefined>, anchor: FlagHit | undefined,
  facts: ConfigFacts | undefined, notes: string[], defaults: Readonly<Record<string, string>> = {},
): string {
  const edits: OffsetEdit[] = [];
  const edited = new Set<string>();
  for (const [flag, value] of want) {
    const found = hits.filter((h) => h.flag === flag);
    if (value === undefined) {
      for (const h of found) edits.push(...removeFlag(text, h));
      continue;
    }
    if (found.length === 0) {
      if (typeof value === 'string' && defaults[flag] === value) continue;
      if (!anchor) {
        notes.push(`Add ${flag}${value === true ? '' : ` ${value}`} to the training arguments.`);
        continue;
      }
      edits.push(insertNear(text, anchor, value === true ? flag : `${flag} ${value}`));
      continue;
    }
    if (value === true) continue;
    for (const h of found) {
      const e = factEdit(text, facts, flag, value) ?? valueEdit(text, h, value);
      if (typeof e === 'string') notes.push(e);
      else {
        // One variable can feed several flags: edit its definition once.
        const key = `${e.from}:${e.to}`;
        if (!edited.has(key)) edits.push(e);
        edited.add(key);
      }
    }
  }
  return applyOffsetEdits(text, edits);
}
