import fc from 'fast-check';

/**
 * Values no well-behaved callback returns or throws, built fresh per use (a Proxy or a revoked
 * one cannot be generated as data). Named by tag so fast-check can shrink to the one that matters.
 */
export const hostileTags = [
  'null',
  'undefined',
  'number',
  'nan',
  'string',
  'hugeString',
  'symbol',
  'bigint',
  'function',
  'nullProtoCircular',
  'circular',
  'throwingProxy',
  'revokedProxy',
  'errorThrowingMessage',
  'errorCircularCause',
  'throwingToJSON',
  'throwingToString',
  'deep',
  'frozenError',
  'thenableThrows',
  'array',
  'protoKey',
] as const;
export type HostileTag = (typeof hostileTags)[number];

export const hostileTag: fc.Arbitrary<HostileTag> = fc.constantFrom(...hostileTags);

export function throwingProxy(): object {
  const trap = () => {
    throw new Error('proxy trap');
  };
  return new Proxy(
    {},
    {
      get: trap,
      has: trap,
      ownKeys: trap,
      getPrototypeOf: trap,
      getOwnPropertyDescriptor: trap,
      set: trap,
      defineProperty: trap,
      deleteProperty: trap,
    },
  );
}

export function deep(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

export function hostile(tag: HostileTag): unknown {
  switch (tag) {
    case 'null':
      return null;
    case 'undefined':
      return undefined;
    case 'number':
      return -1;
    case 'nan':
      return Number.NaN;
    case 'string':
      return 'boom';
    case 'hugeString':
      return 'x'.repeat(200_000);
    case 'symbol':
      return Symbol('hostile');
    case 'bigint':
      return 10n ** 30n;
    case 'function':
      return () => 'a function';
    case 'nullProtoCircular': {
      const value = Object.create(null) as Record<string, unknown>;
      value['self'] = value;
      value['message'] = value;
      return value;
    }
    case 'circular': {
      const value: Record<string, unknown> = { a: 1 };
      value['self'] = value;
      return value;
    }
    case 'throwingProxy':
      return throwingProxy();
    case 'revokedProxy': {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case 'errorThrowingMessage': {
      const error = new Error('x');
      // `stack` first: redefining it makes V8 read `name` and `message`.
      for (const key of ['stack', 'message', 'name', 'cause', 'code', 'status'])
        Object.defineProperty(error, key, {
          get() {
            throw new Error(`${key} getter`);
          },
        });
      return error;
    }
    case 'errorCircularCause': {
      const error = new Error('circular cause') as Error & { cause?: unknown };
      error.cause = error;
      return error;
    }
    case 'throwingToJSON':
      return {
        toJSON() {
          throw new Error('toJSON');
        },
      };
    case 'throwingToString':
      return {
        toString() {
          throw new Error('toString');
        },
        valueOf() {
          throw new Error('valueOf');
        },
      };
    case 'deep':
      return deep(5_000);
    case 'frozenError':
      return Object.freeze(Object.assign(new TypeError('frozen'), { status: 503 }));
    case 'thenableThrows':
      return {
        // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is the point
        then() {
          throw new Error('then');
        },
      };
    case 'array':
      return [1, 'two', null];
    case 'protoKey':
      return JSON.parse(
        '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}',
      );
  }
}

/** A short description of anything, for violation messages. Never throws. */
export function describe(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`.slice(0, 300);
  } catch {
    return '[hostile Error]';
  }
  try {
    const json = JSON.stringify(value);
    if (typeof json === 'string') return json.slice(0, 300);
  } catch {
    // fall through
  }
  try {
    return String(value).slice(0, 300);
  } catch {
    return `[unprintable ${typeof value}]`;
  }
}
