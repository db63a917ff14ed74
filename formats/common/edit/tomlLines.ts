/**
 * Line-level editing of TOML `key = value` pairs inside `[section]` tables, keeping comments, quoting and spacing.
 * Covers the flat tables torchtitan job configs use (TOML 1.0 §Table, §Keys); arrays of tables are left alone.
 */
import { applyOffsetEdits, type OffsetEdit } from './shellFlags';

interface KeyLine {
  readonly key: string;
  readonly lineStart: number;
  readonly lineEnd: number;
  readonly valueStart: number;
  readonly valueEnd: number;
  readonly value: string;
  /** The text between key and value, e.g. " = " or "=". */
  readonly eq: string;
}

interface Table {
  readonly name: string;
  /** Offset after the header line ('' table: 0). */
  readonly bodyStart: number;
  readonly keys: KeyLine[];
}

const HEADER = /^\s*\[([^[\]]+)\]\s*(#.*)?$/;
const KEY = /^(\s*)([A-Za-z0-9_-]+)(\s*=\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#]+)/;

function scan(text: string): Table[] {
  const tables: Table[] = [{ name: '', bodyStart: 0, keys: [] }];
  let at = 0;
  for (const line of text.split('\n')) {
    const lineEnd = at + line.length;
    const h = HEADER.exec(line);
    if (h) tables.push({ name: h[1].trim(), bodyStart: Math.min(lineEnd + 1, text.length), keys: [] });
    else {
      const k = KEY.exec(line);
      if (k) {
        const valueStart = at + k[1].length + k[2].length + k[3].length;
        tables[tables.length - 1].keys.push({ key: k[2], lineStart: at, lineEnd, valueStart, valueEnd: valueStart + k[4].length, value: k[4], eq: k[3] });
      }
    }
    at = lineEnd + 1;
  }
  return tables;
}

/** A TOML literal for a value, in the quote style of the value it replaces. */
function literal(value: string | number | boolean | readonly string[], old?: string): string {
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, old?.replace(/^\[\s*/, ''))).join(', ')}]`;
  if (typeof value !== 'string') return String(value);
  return old?.startsWith("'") ? `'${value}'` : JSON.stringify(value);
}

/** Collects edits to a TOML text; `result()` applies them together. */
export class TomlEditor {
  private readonly tables: Table[];
  private readonly edits: OffsetEdit[] = [];
  private readonly newTables = new Map<string, string[]>();

  constructor(private readonly text: string) {
    this.tables = scan(text);
  }

  hasTable(table: string): boolean {
    return this.tables.some((t) => t.name === table);
  }

  /** The raw value text of `table.key`, or undefined. */
  get(table: string, key: string): string | undefined {
    return this.tables.find((t) => t.name === table)?.keys.find((k) => k.key === key)?.value;
  }

  /** Sets `table.key`; inserts the key (after the table's last key) or the table (at the end) when missing. */
  set(table: string, key: string, value: string | number | boolean | readonly string[]): void {
    const t = this.tables.find((x) => x.name === table);
    const k = t?.keys.find((x) => x.key === key);
    if (k) {
      const lit = literal(value, k.value);
      if (lit !== k.value) this.edits.push({ from: k.valueStart, to: k.valueEnd, text: lit });
      return;
    }
    if (!t) {
      const lines = this.newTables.get(table) ?? [];
      lines.push(`${key} = ${literal(value)}`);
      this.newTables.set(table, lines);
      return;
    }
    const last = t.keys[t.keys.length - 1];
    const eq = last?.eq ?? ' = ';
    const indent = last ? /^\s*/.exec(this.text.slice(last.lineStart, last.valueStart))?.[0] ?? '' : '';
    if (last) this.edits.push({ from: last.lineEnd, to: last.lineEnd, text: `\n${indent}${key}${eq}${literal(value)}` });
    else this.edits.push({ from: t.bodyStart, to: t.bodyStart, text: `${key}${eq}${literal(value)}\n` });
  }

  /** Removes the line of `table.key` when present. */
  remove(table: string, key: string): void {
    const k = this.tables.find((x) => x.name === table)?.keys.find((x) => x.key === key);
    if (k) this.edits.push({ from: k.lineStart, to: Math.min(k.lineEnd + 1, this.text.length), text: '' });
  }

  result(): string {
    let out = applyOffsetEdits(this.text, this.edits);
    for (const [name, lines] of this.newTables) {
      const sep = out.length === 0 || out.endsWith('\n\n') ? '' : out.endsWith('\n') ? '\n' : '\n\n';
      out += `${sep}[${name}]\n${lines.join('\n')}\n`;
    }
    return out;
  }
}
