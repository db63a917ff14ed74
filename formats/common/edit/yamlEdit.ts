/**
 * Editing YAML mapping keys in place: values are replaced at their source range (the `yaml` package's node ranges),
 * missing keys are inserted as lines after the last key of their block mapping, in its indentation.
 * Comments, quoting and key order stay as written.
 */
import { isMap, isPair, isScalar, parseDocument, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { applyOffsetEdits, type OffsetEdit } from './shellFlags';

type Value = string | number | boolean;

/** A YAML literal for a value, in the quote style of the scalar it replaces. */
function literal(value: Value, oldType?: string): string {
  if (typeof value !== 'string') return String(value);
  if (oldType === 'QUOTE_DOUBLE') return JSON.stringify(value);
  if (oldType === 'QUOTE_SINGLE') return `'${value.replace(/'/g, "''")}'`;
  return /^[A-Za-z0-9_./-]+$/.test(value) && !/^(true|false|null|yes|no|~|[-+]?\d[\d.e+-]*)$/i.test(value) ? value : JSON.stringify(value);
}

export class YamlEditor {
  private readonly doc: Document;
  private readonly edits: OffsetEdit[] = [];

  constructor(private readonly text: string) {
    this.doc = parseDocument(text);
  }

  /** True when the text parsed without errors (edits are only made then). */
  get ok(): boolean {
    return this.doc.errors.length === 0 && (this.doc.contents === null || isMap(this.doc.contents));
  }

  /** The JS value at a key path, or undefined. */
  get(path: readonly string[]): unknown {
    const n = this.doc.getIn(path, true);
    return isScalar(n) ? n.value : n === undefined ? undefined : (n as Node).toJSON();
  }

  private lineStart(offset: number): number {
    return this.text.lastIndexOf('\n', offset - 1) + 1;
  }

  private lineEnd(offset: number): number {
    const i = this.text.indexOf('\n', offset);
    return i < 0 ? this.text.length : i;
  }

  /** Sets a scalar at a key path, inserting missing keys (and parent mappings) as block lines. */
  set(path: readonly string[], value: Value): boolean {
    if (!this.ok) return false;
    const n = this.doc.getIn(path, true);
    if (isScalar(n) && n.range) {
      const lit = literal(value, n.type);
      if (this.text.slice(n.range[0], n.range[1]) !== lit && n.value !== value) this.edits.push({ from: n.range[0], to: n.range[1], text: lit });
      return true;
    }
    if (n !== undefined) return false;
    // Find the deepest existing block mapping on the path.
    let depth = path.length - 1;
    let parent: unknown = depth === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, depth), true);
    while (depth > 0 && parent === undefined) {
      depth--;
      parent = depth === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, depth), true);
    }
    const map = parent as YAMLMap | null;
    if (map !== null && (!isMap(map) || map.flow)) return false;
    const pairs = (map?.items ?? []).filter(isPair) as Pair<Node, Node>[];
    const first = pairs[0]?.key?.range;
    const last = pairs[pairs.length - 1];
    const column = first ? first[0] - this.lineStart(first[0]) : depth * 2;
    const lines: string[] = [];
    for (let i = depth; i < path.length; i++) {
      const indent = ' '.repeat(column + (i - depth) * 2);
      lines.push(i === path.length - 1 ? `${indent}${path[i]}: ${literal(value)}` : `${indent}${path[i]}:`);
    }
    const end = last?.value?.range?.[1] ?? last?.key?.range?.[1];
    if (end === undefined) {
      const sep = this.text.length && !this.text.endsWith('\n') ? '\n' : '';
      this.edits.push({ from: this.text.length, to: this.text.length, text: `${sep}${lines.join('\n')}\n` });
    } else {
      const at = this.lineEnd(Math.max(0, end - 1));
      this.edits.push({ from: at, to: at, text: `\n${lines.join('\n')}` });
    }
    return true;
  }

  /** Removes the lines of a key (and its nested block) when present. */
  remove(path: readonly string[]): void {
    if (!this.ok) return;
    const parent = path.length === 1 ? this.doc.contents : this.doc.getIn(path.slice(0, -1), true);
    if (!isMap(parent) || parent.flow) return;
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === path[path.length - 1]) as Pair<Node, Node> | undefined;
    const from = pair?.key?.range?.[0];
    const to = pair?.value?.range?.[1] ?? pair?.key?.range?.[1];
    if (from === undefined || to === undefined) return;
    const lineEnd = this.lineEnd(Math.max(from, to - 1));
    this.edits.push({ from: this.lineStart(from), to: Math.min(lineEnd + 1, this.text.length), text: '' });
  }

  result(): string {
    return applyOffsetEdits(this.text, this.edits);
  }
}
