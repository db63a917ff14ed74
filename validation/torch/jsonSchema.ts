/**
 * A small JSON Schema (2020-12) checker for the keywords the probe report's schema uses: type, const, enum, required,
 * properties, additionalProperties, items, minItems, minimum, $ref (local), if/then/else. Unknown keywords are ignored.
 */

export type Schema = { readonly [k: string]: unknown };

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;

function typeMatches(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === 'number' && actual === 'integer');
}

function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'object' && node !== null ? (node as Schema) : undefined;
}

/** Returns every violation as "path: message"; an empty list means the value matches. */
export function checkSchema(value: unknown, schema: Schema, root: Schema = schema, path = '$'): string[] {
  const errs: string[] = [];
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(root, schema.$ref);
    if (!target) return [`${path}: unresolved $ref ${schema.$ref}`];
    errs.push(...checkSchema(value, target, root, path));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeMatches(value, t))) return [...errs, `${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`];
  }
  if ('const' in schema && value !== schema.const) errs.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) errs.push(`${path}: not one of ${schema.enum.join(', ')}`);
  if (typeof schema.minimum === 'number' && typeof value === 'number' && value < schema.minimum) {
    errs.push(`${path}: ${value} is below ${schema.minimum}`);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) errs.push(`${path}: not a finite number`);
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) errs.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.items && typeof schema.items === 'object') {
      value.forEach((v, i) => errs.push(...checkSchema(v, schema.items as Schema, root, `${path}[${i}]`)));
    }
  } else if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const key of (schema.required as string[] | undefined) ?? []) if (!(key in obj)) errs.push(`${path}: missing ${key}`);
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [key, v] of Object.entries(obj)) {
      if (props[key]) errs.push(...checkSchema(v, props[key], root, `${path}.${key}`));
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        errs.push(...checkSchema(v, schema.additionalProperties as Schema, root, `${path}.${key}`));
      } else if (schema.additionalProperties === false) errs.push(`${path}: unexpected ${key}`);
    }
  }
  if (schema.if && typeof schema.if === 'object') {
    const branch = checkSchema(value, schema.if as Schema, root, path).length === 0 ? schema.then : schema.else;
    if (branch && typeof branch === 'object') errs.push(...checkSchema(value, branch as Schema, root, path));
  }
  return errs;
}
