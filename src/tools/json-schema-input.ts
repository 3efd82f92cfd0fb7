import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { importOptionalPeer, missingPeerError } from '../errors/missing-peer.js';
import type { JsonValue } from '../model/content.js';
import type { StandardSchema } from './standard-schema.js';

// Ajv is an optional peer dependency, imported on the first `jsonSchemaInput` call, so `reins/tools`
// loads without it. (Not a top-level await: that would make the module async for every importer,
// which CommonJS bundles, `require` and module workers handle badly.)
let ajvLoad: Promise<Ajv> | undefined;

function loadAjv(): Promise<Ajv> {
  ajvLoad ??= importOptionalPeer('ajv', () => import('ajv')).then((ajv) => {
    if (!ajv) throw missingPeerError('jsonSchemaInput (reins/tools)', [{ name: 'ajv', range: '^8' }]);
    return new ajv.Ajv({ allErrors: true, strict: false });
  });
  return ajvLoad;
}

/**
 * Wraps a raw JSON Schema (an MCP tool's `inputSchema`, say) as a Standard Schema, validated with
 * Ajv, so `defineTool` accepts it like a zod schema. Every problem is reported, each with its field.
 * Ajv 8 is an optional peer dependency (`npm install ajv@^8`), imported on the first call; without
 * it, or with a schema Ajv cannot compile, the first validation throws a labeled error.
 *
 * @example
 * const input = jsonSchemaInput<{ city: string }>({
 *   type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false,
 * });
 */
export function jsonSchemaInput<T = unknown>(schema: { [key: string]: JsonValue }): StandardSchema<T, T> {
  let compiled: ValidateFunction | undefined;
  const ready = loadAjv().then((ajv) => {
    compiled = ajv.compile(schema);
    return compiled;
  });
  // A missing Ajv or an invalid schema is reported by the first validation, not as an unhandled rejection.
  ready.catch(() => {});
  const check = (validate: ValidateFunction, value: unknown) =>
    validate(value) ? { value: value as T } : { issues: (validate.errors ?? []).map(toIssue) };
  return {
    '~standard': {
      version: 1,
      vendor: 'reins-ajv',
      // Synchronous once Ajv has compiled the schema; a promise until then (Standard Schema allows both).
      validate: (value) =>
        compiled ? check(compiled, value) : ready.then((validate) => check(validate, value)),
      jsonSchema: { input: () => schema as Record<string, unknown> },
    },
  };
}

function toIssue(error: ErrorObject): { message: string; path: string[] } {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { additionalProperty?: string; missingProperty?: string };
  if (params.missingProperty) return { message: 'is required', path: [...path, params.missingProperty] };
  if (params.additionalProperty)
    return { message: 'is not an allowed field', path: [...path, params.additionalProperty] };
  return { message: error.message ?? 'is invalid', path };
}
