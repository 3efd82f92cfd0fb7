/**
 * One spelling for one JSON value: object keys sorted recursively (by UTF-16 code units), no
 * whitespace, numbers in their shortest round-trip form (`1.0`, `1e0` and `1` all print `1`; `-0`
 * prints `0`). Two inputs the model means the same way get the same key, which is what repeat
 * detection needs. `undefined` members are dropped as `JSON.stringify` drops them; non-finite numbers
 * print `null`, as in JSON.
 *
 * @example
 * canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' } }); // '{"a":{"c":"x","d":[1,2]},"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return write(value, undefined);
}

/**
 * The objects being written, outermost first, to refuse a cycle. A list, not a set: inputs are
 * shallow, and a list costs no hashing; past `deepAncestors` levels a set takes over so a deep
 * value stays linear. Made at the first object (a string or number needs none), at length one:
 * a list grown by push from empty reserves 17 slots.
 */
type Ancestors = object[] & { set?: Set<object> };
const deepAncestors = 32;

function enter(ancestors: Ancestors | undefined, object: object): Ancestors {
  if (ancestors === undefined) return [object];
  if (ancestors.set) {
    if (ancestors.set.has(object)) throw new TypeError('canonicalJson: value contains a cycle');
    ancestors.set.add(object);
  } else if (ancestors.includes(object)) throw new TypeError('canonicalJson: value contains a cycle');
  ancestors.push(object);
  if (!ancestors.set && ancestors.length > deepAncestors) ancestors.set = new Set(ancestors);
  return ancestors;
}

function leave(ancestors: Ancestors): void {
  const object = ancestors.pop() as object;
  ancestors.set?.delete(object);
}

/** Keys in code-unit order; short lists by insertion sort, which allocates nothing. */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

function write(value: unknown, ancestors: Ancestors | undefined): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? (Object.is(value, -0) ? '0' : String(value)) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'null';
  }
  if (value === null) return 'null';
  const object = value as object;
  const path = enter(ancestors, object);
  const toJson = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') {
    leave(path);
    return write(toJson.call(object), path);
  }
  let out: string;
  if (Array.isArray(object)) {
    out = '[';
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = object[i];
      out +=
        item === undefined || typeof item === 'function' || typeof item === 'symbol'
          ? 'null'
          : write(item, path);
    }
    out += ']';
  } else {
    const record = object as Record<string, unknown>;
    const keys = sortedKeys(record);
    out = '{';
    let first = true;
    for (const key of keys) {
      const member = record[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      if (!first) out += ',';
      first = false;
      out += JSON.stringify(key) + ':' + write(member, path);
    }
    out += '}';
  }
  leave(path);
  return out;
}
