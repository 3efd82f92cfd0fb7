import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { actionFingerprint, actionFingerprintOfCanonical } from './drift-monitor.js';

describe('actionFingerprintOfCanonical', () => {
  it('equals the fingerprint of the walked input, from the canonical JSON alone', () => {
    // `__proto__` keys are left out: the walk drops them (assigning one sets a prototype), the
    // canonical text keeps them, which is the more faithful of the two.
    const json = fc.jsonValue().filter((value) => !canonicalJson(value).includes('"__proto__"'));
    fc.assert(
      fc.property(fc.string(), json, (tool, value) => {
        expect(actionFingerprintOfCanonical(tool, canonicalJson(value))).toBe(actionFingerprint(tool, value));
      }),
      { numRuns: 3_000 },
    );
    expect(actionFingerprintOfCanonical('grep', canonicalJson({ q: '  "Discount"\tCODE ' }))).toBe(
      'grep:{"q":"discount code"}',
    );
  });
});
