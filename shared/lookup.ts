/**
 * Lookup tables keyed by text from a file (a DeepSpeed key, a Megatron flag, a shell variable) must not answer with
 * inherited members: in a plain object, "constructor", "toString" or "__proto__" find Object.prototype's. These
 * helpers give tables without a prototype, and an own-property read for objects that have one.
 */

/** A frozen copy of `entries` without a prototype: a missing key reads undefined, whatever it is. */
export function lookupTable<T>(entries: Readonly<Record<string, T>>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

/** `o[key]` when `o` has it as its own property, else undefined. */
export function own<T>(o: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return o !== undefined && Object.hasOwn(o, key) ? o[key] : undefined;
}
