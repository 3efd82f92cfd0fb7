import fc from 'fast-check';

/** What to do to one place in a JSON value. */
export type MutationOp =
  | 'delete'
  | 'null'
  | 'nan'
  | 'negative'
  | 'huge'
  | 'unsafe'
  | 'fraction'
  | 'infinity'
  | 'string'
  | 'number'
  | 'true'
  | 'emptyArray'
  | 'emptyObject'
  | 'wrapArray'
  | 'protoKey'
  | 'bigString';

export const mutationOps: readonly MutationOp[] = [
  'delete',
  'null',
  'nan',
  'negative',
  'huge',
  'unsafe',
  'fraction',
  'infinity',
  'string',
  'number',
  'true',
  'emptyArray',
  'emptyObject',
  'wrapArray',
  'protoKey',
  'bigString',
];

export interface Mutation {
  /** Which place: an index into every place the value has, wrapped around. */
  at: number;
  op: MutationOp;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom(...mutationOps),
});

type Place = { parent: Record<string, unknown> | unknown[]; key: string | number };

function places(value: unknown, out: Place[]): Place[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push({ parent: value, key: index });
      places(item, out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      out.push({ parent: value as Record<string, unknown>, key });
      places((value as Record<string, unknown>)[key], out);
    }
  }
  return out;
}

function replacement(op: MutationOp, current: unknown): unknown {
  switch (op) {
    case 'null':
      return null;
    case 'nan':
      return Number.NaN;
    case 'negative':
      return -1;
    case 'huge':
      return 1e300;
    case 'unsafe':
      return 2 ** 53 + 2;
    case 'fraction':
      return typeof current === 'number' ? current + 0.5 : 0.5;
    case 'infinity':
      return Number.POSITIVE_INFINITY;
    case 'string':
      return typeof current === 'string' ? `${current}!` : String(JSON.stringify(current) ?? 'x');
    case 'number':
      return 7;
    case 'true':
      return true;
    case 'emptyArray':
      return [];
    case 'emptyObject':
      return {};
    case 'wrapArray':
      return [current];
    case 'protoKey':
      return JSON.parse('{"__proto__": {"polluted": true}}');
    case 'bigString':
      return 'z'.repeat(100_000);
    case 'delete':
      return undefined;
  }
}

/** Applies mutations to a copy of a JSON value (NaN and Infinity survive: this is the in-memory state). */
export function mutate<T>(value: T, mutations: readonly Mutation[]): T {
  const root = { root: structuredClone(value) as unknown };
  for (const { at, op } of mutations) {
    const all = places(root, []);
    if (all.length === 0) break;
    const place = all[at % all.length] as Place;
    const { parent, key } = place;
    if (op === 'delete') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      continue;
    }
    const current = (parent as Record<string | number, unknown>)[key];
    if (op === 'protoKey' && current !== null && typeof current === 'object' && !Array.isArray(current)) {
      Object.defineProperty(current, '__proto__', {
        value: { polluted: true },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      continue;
    }
    (parent as Record<string | number, unknown>)[key] = replacement(op, current);
  }
  return root.root as T;
}
