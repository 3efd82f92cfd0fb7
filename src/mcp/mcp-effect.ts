import type { ToolEffect } from '../tools/define-tool.js';

/** The behaviour hints an MCP server attaches to a tool (all optional; hints, not guarantees). */
export interface McpToolAnnotations {
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
  title?: string | undefined;
}

/**
 * What a tool from an MCP server does to the world. The user's declaration wins; a server's own
 * annotations count only when the user trusts the server, read with the spec's defaults (a tool
 * that says nothing is not read-only and is destructive). An untrusted server's tool the user said
 * nothing about is therefore destructive, so it pauses for approval.
 *
 * @example
 * mcpEffectOf(undefined, { readOnlyHint: true }, false); // 'destructive': the server is not trusted
 * mcpEffectOf(undefined, { readOnlyHint: true }, true); // 'read'
 * mcpEffectOf('write', { destructiveHint: true }, true); // 'write': the user's word wins
 */
export function mcpEffectOf(
  declared: ToolEffect | undefined,
  annotations: McpToolAnnotations | undefined,
  trustAnnotations: boolean,
): ToolEffect {
  if (declared !== undefined) return declared;
  if (!trustAnnotations || annotations === undefined) return 'destructive';
  if (annotations.readOnlyHint === true) return 'read';
  return annotations.destructiveHint === false ? 'write' : 'destructive';
}

/**
 * Whether calling a tool twice with the same arguments does nothing more than calling it once: the
 * user's word, else a trusted server's `idempotentHint` (default false), else true only for reads.
 *
 * @example
 * mcpIdempotentOf(undefined, 'write', { idempotentHint: true }, true); // true
 */
export function mcpIdempotentOf(
  declared: boolean | undefined,
  effect: ToolEffect,
  annotations: McpToolAnnotations | undefined,
  trustAnnotations: boolean,
): boolean {
  if (declared !== undefined) return declared;
  if (effect === 'read') return true;
  return trustAnnotations && annotations?.idempotentHint === true;
}

/**
 * The annotations a reins tool is served with: read-only for reads; otherwise destructive or not as
 * its effect says. Reads are idempotent; for writes reins does not know, so the hint is left out.
 *
 * @example
 * annotationsOfEffect('destructive'); // { readOnlyHint: false, destructiveHint: true }
 */
export function annotationsOfEffect(effect: ToolEffect): McpToolAnnotations {
  switch (effect) {
    case 'read':
      return { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
    case 'write':
      return { readOnlyHint: false, destructiveHint: false };
    case 'destructive':
      return { readOnlyHint: false, destructiveHint: true };
  }
}
