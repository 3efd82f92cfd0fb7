import { Ajv, type ErrorObject } from 'ajv';
import type { JsonValue } from '../model/content.js';
import type { StandardSchema } from './standard-schema.js';

const ajv = new Ajv({ allErrors: true, strict: false });

/**
 * Wraps a raw JSON Schema (an MCP tool's `inputSchema`, say) as a Standard Schema, validated with
 * Ajv, so `defineTool` accepts it like a zod schema. Every problem is reported, each with its field.
 *
 * @example
 * const input = jsonSchemaInput<{ city: string }>({
 *   type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false,
 * });
 */
export function jsonSchemaInput<T = unknown>(schema: { [key: string]: JsonValue }): StandardSchema<T, T> {
  const validate = ajv.compile(schema);
  return {
    '~standard': {
      version: 1,
      vendor: 'reins-ajv',
      validate: (value) => {
        if (validate(value)) return { value: value as T };
        return { issues: (validate.errors ?? []).map(toIssue) };
      },
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
