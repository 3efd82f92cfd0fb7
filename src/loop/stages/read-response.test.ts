import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { malformed } from './read-response.js';

const call = (id: string, input: unknown) => ({ type: 'tool_use', id, name: 'lookup', input });
const response = (...content: unknown[]) => ({ content, stopReason: 'tool_use' });

describe('malformed: what the loop refuses to read from a model', () => {
  it('two calls under one id, wherever they sit among others, are refused; distinct ids are read', () => {
    expect(malformed(response(call('a', {}), call('a', {})))).toMatch(/two tool calls with the id "a"/);
    expect(malformed(response(call('a', {}), call('b', {}), call('c', {}), call('b', {})))).toMatch(
      /two tool calls with the id "b"/,
    );
    expect(malformed(response(call('a', {}), { type: 'text', text: 'x' }, call('b', {})))).toBeUndefined();
  });

  it('a cycle at any depth is refused; the same object twice side by side (not a cycle) is read', () => {
    const shared = { n: 1 };
    expect(
      malformed(response(call('a', { left: shared, right: shared, list: [shared, shared] }))),
    ).toBeUndefined();
    const cyclic: Record<string, unknown> = { a: { b: { c: {} } } };
    ((cyclic['a'] as Record<string, unknown>)['b'] as Record<string, unknown>)['c'] = cyclic;
    expect(malformed(response(call('a', cyclic)))).toMatch(/circular/);
    const list: unknown[] = [1, 2];
    list.push([list]);
    expect(malformed(response(call('a', { list })))).toMatch(/circular/);
  });

  it('any JSON value is read; a cycle planted anywhere in one is found (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(), (value, pick) => {
        expect(malformed(response(call('a', value)))).toBeUndefined();
        // Plant a cycle: an object or array inside `value` made to hold the root.
        const containers: (Record<string, unknown> | unknown[])[] = [];
        const collect = (node: unknown) => {
          if (node === null || typeof node !== 'object') return;
          containers.push(node as Record<string, unknown>);
          for (const member of Object.values(node)) collect(member);
        };
        collect(value);
        if (containers.length === 0) return;
        const target = containers[pick % containers.length] as Record<string, unknown> | unknown[];
        if (Array.isArray(target)) target.push(value);
        else target['__cycle'] = value;
        expect(malformed(response(call('a', value)))).toMatch(/circular/);
      }),
      { numRuns: 500 },
    );
  });
});
