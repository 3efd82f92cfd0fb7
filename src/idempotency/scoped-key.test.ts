import { describe, expect, it } from 'vitest';
import { scopedIdempotencyKey } from './idempotent.js';

describe('scopedIdempotencyKey', () => {
  it('keeps the unscoped form for calls with no scope and encodes a scope so it holds no colon', async () => {
    expect(await scopedIdempotencyKey('charge', '1001')).toBe('charge:1001');
    expect(await scopedIdempotencyKey('charge', '1001', 'tenant-a')).toBe('charge@tenant-a:1001');
    expect(await scopedIdempotencyKey('charge', 'x', 'a:b')).toBe('charge@a%3Ab:x');
    // A key that looks scoped, sent with no actor, is still in the actor-less scope.
    expect(await scopedIdempotencyKey('charge', '@tenant-a:1001')).not.toBe(
      await scopedIdempotencyKey('charge', '1001', 'tenant-a'),
    );
  });

  it('stores a long scope as a digest, distinct per scope', async () => {
    const a = await scopedIdempotencyKey('charge', 'k', 'a'.repeat(500));
    const b = await scopedIdempotencyKey('charge', 'k', `${'a'.repeat(499)}b`);
    expect(a).toMatch(/^charge@#[0-9a-f]{32}:k$/);
    expect(a).not.toBe(b);
  });
});
