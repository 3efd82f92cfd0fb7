import type { MediaBlock } from '../model/content.js';

/** Marks a tool's return value as carrying attachments (a symbol from the global registry, so two copies of reins agree). */
const attached = Symbol.for('reins.toolResultAttachments');

/** A tool's result with images or documents for the model to see beside it. */
export interface WithAttachments<T> {
  readonly value: T;
  readonly attachments: readonly MediaBlock[];
  readonly [attached]: true;
}

/**
 * Returns a tool result with images or documents attached (a screenshot, a rendered PDF page). The
 * `value` is what the model reads as the result's text (serialized, capped, checked against the
 * output schema as usual); each attachment goes to the provider as an image or document part of
 * the tool result (docs/providers.md says how each API takes them).
 *
 * @example
 * execute: async ({ url }) => withAttachments({ url, title }, [
 *   { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: png.toString('base64') } },
 * ]),
 */
export function withAttachments<T>(value: T, attachments: readonly MediaBlock[]): WithAttachments<T> {
  return { value, attachments: [...attachments], [attached]: true };
}

/** The value and the attachments of what a tool returned (none when it used no `withAttachments`). */
export function splitAttachments(output: unknown): {
  value: unknown;
  attachments: readonly unknown[] | undefined;
} {
  if (
    typeof output !== 'object' ||
    output === null ||
    (output as { [attached]?: unknown })[attached] !== true
  )
    return { value: output, attachments: undefined };
  const { value, attachments } = output as WithAttachments<unknown>;
  return { value, attachments: Array.isArray(attachments) ? attachments : [attachments] };
}
