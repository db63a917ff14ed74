/**
 * Splits a pasted log into clean lines, with bounded work: at most MAX_LINES lines and MAX_LINE_CHARS characters of
 * each are read. Line ends are `\r\n`, `\n` or a lone `\r` (tqdm redraws its bar with `\r`; VS Code counts a lone `\r`
 * as a line end too, so line numbers agree with the editor). Cleaning removes ANSI escapes (torchtitan colours every
 * field: `Color` in torchtitan/tools/utils.py) and the rank labels launchers put before each line: torchrun's
 * `[rank0]:` / `[default0]:`, srun and torchrun `--label`'s `0: `, and Open MPI `--tag-output`'s `[1,0]<stdout>:`.
 */

/** Most lines read; the rest of a longer log is left out with a warning. */
export const MAX_LINES = 200_000;
/** Most characters read of one line; the rest is left out with a warning. */
export const MAX_LINE_CHARS = 2_000;

/** One cleaned line of the log. */
export interface LogLine {
  /** The line without ANSI escapes, rank label and line end. */
  readonly text: string;
  /** 1-based line number in the pasted text. */
  readonly no: number;
}

/** The lines read and what was left out. */
export interface SplitLog {
  readonly lines: readonly LogLine[];
  readonly warnings: readonly string[];
}

const LINE_END = /\r\n|\r|\n/g;
// CSI sequences (colours, cursor moves), then any escape character left over.
const ANSI = /\u001b\[[0-9;:?]*[ -/]*[@-~]|\u001b/g;
const RANK_LABEL = /^\s*(?:\[(?:rank|default)?\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|\d+:(?=\s))\s*/;
// A line that may be cut off and stops in a number may hold half a number: `1234.5` cut to `12`.
const ENDS_IN_NUMBER = /(?:[\d.,+-]|\d[eE])\s*$/;

/** Removes ANSI escapes and a leading rank label. */
export function cleanLine(raw: string): string {
  return raw.replace(ANSI, '').replace(RANK_LABEL, '');
}

/** The log's first MAX_LINES lines, cleaned, each cut to MAX_LINE_CHARS; a cut line that stops in a number is left out. */
export function splitLog(text: string): SplitLog {
  const lines: LogLine[] = [];
  const warnings: string[] = [];
  const cutLines: number[] = [];
  let cutDropped = 0;
  let start = 0;
  let no = 0;
  let more = false;
  LINE_END.lastIndex = 0;
  while (start <= text.length) {
    if (no === MAX_LINES) { more = start < text.length; break; }
    const m = LINE_END.exec(text);
    const end = m ? m.index : text.length;
    no++;
    const long = end - start > MAX_LINE_CHARS;
    const cleaned = cleanLine(text.slice(start, long ? start + MAX_LINE_CHARS : end));
    const unterminated = !m;
    if (long) cutLines.push(no);
    if ((long || unterminated) && ENDS_IN_NUMBER.test(cleaned)) {
      if (unterminated && !long) warnings.push(`The last line (${no}) has no line end and stops in a number, so it may be cut off; it was left out.`);
      else cutDropped++;
    } else if (cleaned.trim() !== '') {
      lines.push({ text: cleaned, no });
    }
    if (!m) break;
    start = m.index + m[0].length;
    if (start === text.length) break;
  }
  if (more) warnings.push(`The log has more than ${MAX_LINES.toLocaleString('en-US')} lines; only the first ${MAX_LINES.toLocaleString('en-US')} were read.`);
  if (cutLines.length > 0) {
    const one = cutLines.length === 1;
    const dropped = cutDropped === 0 ? '' : ` ${cutDropped === 1 ? 'One' : cutDropped} of them stopped in a number there and ${cutDropped === 1 ? 'was' : 'were'} left out.`;
    warnings.push(`${cutLines.length} line${one ? ' was' : 's were'} longer than ${MAX_LINE_CHARS.toLocaleString('en-US')} characters; only ${one ? 'its' : 'their'} first ${MAX_LINE_CHARS.toLocaleString('en-US')} were read (${listLines(cutLines)}).${dropped}`);
  }
  return { lines, warnings };
}

/** "line 4" or "lines 4, 9, 12, …" (at most five numbers). */
export function listLines(nos: readonly number[]): string {
  const shown = nos.slice(0, 5).join(', ');
  return `line${nos.length === 1 ? '' : 's'} ${shown}${nos.length > 5 ? ', …' : ''}`;
}
