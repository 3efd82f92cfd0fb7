import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { actionFingerprint, DriftMonitor } from './drift-monitor.js';
import { RepeatDetector } from './repeat-detector.js';

describe('canonicalJson', () => {
  it('sorts keys recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":null,"z":0}]},"b":1}',
    );
  });
  it('gives one spelling per number', () => {
    expect(canonicalJson(JSON.parse('[1.0, 1e0, 10E-1, -0, 1e21, 0.1]'))).toBe('[1,1,1,0,1e+21,0.1]');
  });
  it('drops undefined members like JSON, and refuses cycles', () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
  });
  it('keeps a __proto__ key as data', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":2}'))).toBe('{"__proto__":{"x":1},"a":2}');
  });
});

describe('RepeatDetector', () => {
  it('counts per (tool, canonical input), never per tool name', () => {
    const detector = new RepeatDetector(2);
    expect(detector.check('search', { q: 'a' }).repeated).toBe(false);
    expect(detector.check('search', { q: 'b' }).repeated).toBe(false);
    expect(detector.check('search', { q: 'a' })).toEqual({
      key: 'search:{"q":"a"}',
      count: 2,
      repeated: true,
    });
  });
});

describe('DriftMonitor', () => {
  it('normalizes superficial variation in actions', () => {
    expect(actionFingerprint('grep', { q: '  "Discount" ' })).toBe(
      actionFingerprint('grep', { q: 'discount' }),
    );
  });
  it('trips on low novelty only once the window is full, and round-trips its state', () => {
    const monitor = new DriftMonitor({ window: 3, minDistinct: 2 });
    monitor.recordAction('a', {});
    monitor.recordAction('a', {});
    expect(monitor.check()).toBeUndefined();
    monitor.recordAction('a', {});
    expect(monitor.check()?.signal).toBe('novelty');
    const restored = new DriftMonitor({ window: 3, minDistinct: 2 }, monitor.state());
    expect(restored.check()?.signal).toBe('novelty');
  });
});
