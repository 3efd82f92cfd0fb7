import type { JsonValue } from '../model/content.js';

type Schema = { [key: string]: JsonValue };
/** A node a path reaches: a schema, or `open` where the schema says nothing about what is below. */
type Reached = Schema | 'open';

const combinators = ['allOf', 'anyOf', 'oneOf'] as const;
const structural = [
  'type',
  'properties',
  'items',
  'prefixItems',
  'additionalProperties',
  'patternProperties',
  'enum',
  'const',
];
const isSchema = (value: JsonValue | undefined): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The fields of a tool's input, read from its JSON Schema: whether a dotted path names one, and
 * whether an object's key is a field name or data (a record's keys). Local `$ref`s, `allOf`,
 * `anyOf` and `oneOf` are followed; a part of the schema that declares nothing (`{}`, `true`, an
 * object without `properties`) accepts any path below it.
 */
/** Object paths remembered per schema by `isFieldName`. */
const reachedLimit = 1_024;

export class InputFields {
  readonly #root: Schema;

  constructor(root: Schema) {
    this.#root = root;
  }

  /** Whether a dotted path (`to`, `items.*.sku`, `items.0`) reaches a field of the schema. */
  has(path: string): boolean {
    return this.#at(path.split('.')).length > 0;
  }

  /** The declared fields of the object at a path (`[]` for the input), for an error message. */
  names(segments: readonly string[]): string[] {
    const names = new Set<string>();
    for (const node of this.#at(segments))
      if (node !== 'open' && isSchema(node['properties']))
        for (const name of Object.keys(node['properties'])) names.add(name);
    return [...names];
  }

  /**
   * Whether `key` of the object at `objectPath` (its keys from the input down) is a field name
   * rather than data: declared in the schema's `properties` there. Where the schema declares no
   * properties, only the input's own keys are field names.
   */
  isFieldName(objectPath: readonly string[], key: string): boolean {
    // The schema is walked once per object path, not once per key of every call (bounded: a
    // record's keys are data, so paths under one are not remembered past the limit).
    const at = objectPath.length === 0 ? '' : objectPath.join('\u0000');
    let nodes = this.#reached.get(at);
    if (nodes === undefined) {
      nodes = this.#at(objectPath);
      if (this.#reached.size < reachedLimit) this.#reached.set(at, nodes);
    }
    for (const node of nodes) {
      if (node === 'open' || !isSchema(node['properties'])) {
        if (objectPath.length === 0) return true;
      } else if (Object.hasOwn(node['properties'], key)) return true;
    }
    return false;
  }

  /** The schemas each object path reaches, as `isFieldName` found them. */
  readonly #reached = new Map<string, Reached[]>();

  #at(segments: readonly string[]): Reached[] {
    let nodes = this.#branches(this.#root, 0);
    for (const segment of segments) {
      nodes = nodes.flatMap((node) =>
        node === 'open'
          ? ['open' as const]
          : this.#children(node, segment).flatMap((child) => this.#branches(child, 0)),
      );
      if (nodes.length === 0) return [];
    }
    return nodes;
  }

  /** A schema with its `$ref` resolved and its combinators spread into alternatives. */
  #branches(node: JsonValue | undefined, depth: number): Reached[] {
    if (node === true || node === undefined) return ['open'];
    if (!isSchema(node) || depth > 32) return [];
    const reference = node['$ref'];
    if (typeof reference === 'string') {
      const target = this.#resolve(reference);
      return target === undefined ? ['open'] : this.#branches(target, depth + 1);
    }
    const alternatives = combinators.flatMap((name) => {
      const list = node[name];
      return Array.isArray(list) ? list.flatMap((item) => this.#branches(item, depth + 1)) : [];
    });
    if (!structural.some((name) => name in node)) return alternatives.length === 0 ? ['open'] : alternatives;
    return [node, ...alternatives];
  }

  /** The schemas one path segment leads to from `node`: a property, an item, a record's value. */
  #children(node: Schema, segment: string): (JsonValue | undefined)[] {
    const children: (JsonValue | undefined)[] = [];
    const properties = isSchema(node['properties']) ? node['properties'] : undefined;
    if (properties) {
      if (segment === '*') children.push(...Object.values(properties));
      else if (Object.hasOwn(properties, segment)) children.push(properties[segment]);
    }
    const index = /^\d+$/.test(segment) ? Number(segment) : undefined;
    const prefix = Array.isArray(node['prefixItems']) ? node['prefixItems'] : undefined;
    const items = node['items'];
    if (segment === '*' || index !== undefined) {
      if (prefix) children.push(...(index === undefined ? prefix : prefix.slice(index, index + 1)));
      if (isSchema(items) || items === true) children.push(items);
    }
    const patterns = node['patternProperties'];
    if (isSchema(patterns))
      for (const [pattern, schema] of Object.entries(patterns))
        if (segment === '*' || matches(pattern, segment)) children.push(schema);
    // An undeclared key is a field where the schema gives such keys a schema (a record), or where
    // an object declares no properties at all. zod strips the rest, so naming one checks nothing.
    const additional = node['additionalProperties'];
    if (isObjectLike(node) && (isSchema(additional) || additional === true)) children.push(additional);
    else if (isObjectLike(node) && additional === undefined && !properties && !prefix && items === undefined)
      children.push(true);
    return children;
  }

  #resolve(reference: string): JsonValue | undefined {
    if (!reference.startsWith('#')) return undefined;
    let node: JsonValue | undefined = this.#root;
    for (const raw of reference.slice(1).split('/').slice(1)) {
      const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      node = isSchema(node) ? node[key] : undefined;
    }
    return node;
  }
}

/** An object schema: `type: 'object'` (or a list holding it), or no `type` but object keywords. */
function isObjectLike(node: Schema): boolean {
  const type = node['type'];
  if (type === 'object') return true;
  if (Array.isArray(type)) return type.includes('object');
  return type === undefined;
}

function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}
