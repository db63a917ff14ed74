/** Checks shared by the key-table tests: every key of a format's table documents itself and has a known type. */
import assert from 'node:assert/strict';
import { keyTable } from '../../formats/keyTables';
import type { FormatId } from '../../shared/plan/facts';

/** Asserts that `format`'s table has at least `min` keys, each described and typed with one of `types`. */
export function assertDocumented(format: FormatId, types: Readonly<Record<string, unknown>>, min: number): void {
  const keys = Object.entries(keyTable(format)?.keys ?? {});
  assert.ok(keys.length >= min, `${format}: ${keys.length} keys`);
  for (const [k, d] of keys) {
    assert.ok((d.description?.length ?? 0) > 10, `${k} describes itself`);
    assert.ok(d.type && d.type in types, `${k}: type ${d.type}`);
  }
}
