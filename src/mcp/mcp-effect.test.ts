import { describe, expect, it } from 'vitest';
import { annotationsOfEffect, mcpEffectOf, mcpIdempotentOf } from './mcp-effect.js';

describe('mcpEffectOf', () => {
  it('an untrusted server’s annotations count for nothing: undeclared tools are destructive', () => {
    expect(mcpEffectOf(undefined, { readOnlyHint: true }, false)).toBe('destructive');
    expect(mcpEffectOf(undefined, undefined, false)).toBe('destructive');
  });

  it('reads a trusted server’s hints with the spec’s defaults (not read-only, destructive)', () => {
    expect(mcpEffectOf(undefined, undefined, true)).toBe('destructive');
    expect(mcpEffectOf(undefined, {}, true)).toBe('destructive');
    expect(mcpEffectOf(undefined, { readOnlyHint: true }, true)).toBe('read');
    expect(mcpEffectOf(undefined, { readOnlyHint: true, destructiveHint: true }, true)).toBe('read');
    expect(mcpEffectOf(undefined, { readOnlyHint: false }, true)).toBe('destructive');
    expect(mcpEffectOf(undefined, { destructiveHint: false }, true)).toBe('write');
  });

  it('the user’s declaration wins over any annotation', () => {
    expect(mcpEffectOf('read', { destructiveHint: true }, true)).toBe('read');
    expect(mcpEffectOf('destructive', { readOnlyHint: true }, true)).toBe('destructive');
  });
});

describe('mcpIdempotentOf', () => {
  it('false unless declared, a read, or a trusted idempotentHint', () => {
    expect(mcpIdempotentOf(undefined, 'write', { idempotentHint: true }, false)).toBe(false);
    expect(mcpIdempotentOf(undefined, 'write', { idempotentHint: true }, true)).toBe(true);
    expect(mcpIdempotentOf(undefined, 'destructive', {}, true)).toBe(false);
    expect(mcpIdempotentOf(undefined, 'read', undefined, false)).toBe(true);
    expect(mcpIdempotentOf(false, 'read', undefined, false)).toBe(false);
  });
});

describe('annotationsOfEffect', () => {
  it('round-trips through a trusted reading', () => {
    for (const effect of ['read', 'write', 'destructive'] as const)
      expect(mcpEffectOf(undefined, annotationsOfEffect(effect), true)).toBe(effect);
  });
});
