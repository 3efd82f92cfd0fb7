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
  return write(value, new Set());
}

function write(value: unknown, ancestors: Set<object>): string {
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
  if (ancestors.has(object)) throw new TypeError('canonicalJson: value contains a cycle');
  const toJson = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return write(toJson.call(object), ancestors);
  ancestors.add(object);
  let out: string;
  if (Array.isArray(object)) {
    out = '[';
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = object[i];
      out +=
        item === undefined || typeof item === 'function' || typeof item === 'symbol'
          ? 'null'
          : write(item, ancestors);
    }
    out += ']';
  } else {
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    out = '{';
    let first = true;
    for (const key of keys) {
      const member = record[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      if (!first) out += ',';
      first = false;
      out += JSON.stringify(key) + ':' + write(member, ancestors);
    }
    out += '}';
  }
  ancestors.delete(object);
  return out;
}
