import { canonicalJson } from '../controls/canonical-json.js';
import { ConfigurationError, isReinsError } from '../errors/reins-error.js';
import { classifyError } from '../resilience/classify-error.js';
import { type Clock, type IdGenerator, randomIds, systemClock } from '../time/clock.js';
import type { Tool, ToolContext } from '../tools/define-tool.js';
import { isToolError, ToolError } from '../tools/tool-error.js';
import type { IdempotencyStore } from './store.js';

/** What to tell the model about the key field, in its schema description. */
export const idempotencyKeyDescription =
  'A stable ID for this one logical operation (for example the order ID). Reuse the same key when retrying this operation; use a new key for a genuinely new operation.';

/** What a reconcile hook found downstream. */
export type Reconciliation = { happened: true; result: unknown } | { happened: false };

export interface IdempotentOptions<Input> {
  store: IdempotencyStore;
  /**
   * Where the key comes from: an input field the model fills (see {@link idempotencyKeyDescription}),
   * or, when no natural key exists, a fingerprint of the canonical input within a time window.
   */
  key: { field: string } | { fingerprintWindowMs: number };
  /**
   * Whose keys these are. Two scopes never share a record: tenant A's key `1001` and tenant B's are
   * two operations. A string puts every call in that one scope; a function picks the scope per call
   * (a tenant from the actor's attributes, say) and must return a non-empty string. By default the
   * scope is `context.actor.id`; calls with no actor share one fixed scope, stored under the unscoped
   * key `tool:key` (the form earlier versions wrote). See {@link scopedIdempotencyKey}.
   * @default (input, context) => context.actor?.id
   */
  scope?: string | ((input: Input, context: ToolContext) => string);
  /** How long records are kept. @default 86_400_000 (24 h) */
  retentionMs?: number;
  /** How long a holder may run before its reservation can be taken over. Longer than the call. @default 30_000 */
  leaseMs?: number;
  /**
   * Asks the downstream whether an effect with this key already happened (pass the key down with
   * every effect so it can answer). Called before executing on a taken-over key. Without it the
   * tool is at-least-once for the window between the effect landing and its record completing.
   */
  reconcile?: (key: string, input: Input, context: ToolContext) => Promise<Reconciliation>;
  /** Errors certain to have happened before any effect: the reservation is dropped so a retry can run. */
  failedBeforeEffect?: (error: unknown) => boolean;
  clock?: Clock;
  generateId?: IdGenerator;
}

/** How a wrapped tool behaves, stated on the tool. */
export interface IdempotencyInfo {
  key: string;
  /** Whose keys they are: `actor` (the default), `fixed` (one string scope) or `custom` (a function). */
  scope: 'actor' | 'fixed' | 'custom';
  guarantee: 'exactly-once' | 'at-least-once-in-crash-window';
}

/** The result the model sees for a repeat of a completed operation. */
export interface Deduplicated<Output> {
  deduplicated: true;
  note: string;
  result: Output;
}

const beforeEffectCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** The default test for "failed before any effect": the request never reached the service. */
export function failedBeforeEffectDefault(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const value = current as { code?: unknown; details?: { effectApplied?: unknown }; cause?: unknown };
    if (typeof value.code === 'string' && beforeEffectCodes.has(value.code)) return true;
    if (value.details?.effectApplied === false) return true;
    current = value.cause;
  }
  return false;
}

async function sha256(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Encoded scopes longer than this are stored as a digest, so a long actor id cannot bloat a key. */
const maxScopeLength = 200;

/**
 * The store key of `key` for `tool` in `scope`: `tool:key` without a scope (calls with no actor, and
 * every record written before keys were scoped), `tool@scope:key` with one. The scope is
 * URI-encoded, so it holds no `:`; tool names hold no `@` or `:`, so no two (scope, key) pairs share
 * a store key. A scope whose encoding is longer than 200 characters is stored as `#` and the first
 * 32 hex digits of its SHA-256 (`#` never appears in an encoded scope). Use it to find or migrate
 * records, and to answer `reconcile`, which is given this key.
 */
export async function scopedIdempotencyKey(tool: string, key: string, scope?: string): Promise<string> {
  if (scope === undefined) return `${tool}:${key}`;
  const encoded = encodeURIComponent(scope);
  return `${tool}@${encoded.length > maxScopeLength ? `#${(await sha256(scope)).slice(0, 32)}` : encoded}:${key}`;
}

/**
 * Makes a tool safe to retry: reserve the key (with a lease) → execute → record the result. A
 * repeat of a completed key returns the stored result marked `deduplicated` without executing; a
 * concurrent repeat gets `idempotency_key_in_use`; the same key with different input gets
 * `key_reused_with_different_input`; a terminal failure is stored and replayed. "Done" is recorded
 * only after the effect completed. If the store cannot be reached the tool does not run. Keys are
 * scoped by the actor (or `scope`): two tenants sending the same key are two operations.
 *
 * @example
 * const charge = idempotent(chargeTool, { store, key: { field: 'idempotencyKey' }, reconcile: (key) => payments.lookup(key) });
 */
export function idempotent<Input, Output>(
  tool: Tool<Input, Output>,
  options: IdempotentOptions<Input>,
): Tool<Input, Output | Deduplicated<Output>> & { idempotency: IdempotencyInfo } {
  const retentionMs = options.retentionMs ?? 86_400_000;
  const leaseMs = options.leaseMs ?? 30_000;
  if (!(leaseMs > 0) || !(retentionMs > leaseMs))
    throw new ConfigurationError(
      'idempotent',
      `need 0 < leaseMs (${leaseMs}) < retentionMs (${retentionMs})`,
    );
  const clock = options.clock ?? systemClock;
  const generateId = options.generateId ?? randomIds;
  const failedBeforeEffect = options.failedBeforeEffect ?? failedBeforeEffectDefault;
  const keySpec = options.key;
  const scopeSpec = options.scope;
  if (
    scopeSpec !== undefined &&
    typeof scopeSpec !== 'function' &&
    !(typeof scopeSpec === 'string' && scopeSpec.length > 0)
  )
    throw new ConfigurationError('scope', 'must be a non-empty string or a function returning one');

  const invalidScope = (cause?: unknown) =>
    new ToolError(
      'The idempotency scope for this call could not be determined, so the operation was not run.',
      { code: 'invalid_idempotency_scope', retry: 'no', ...(cause === undefined ? {} : { cause }) },
    );

  /** The scope of one call: undefined is the fixed scope of calls with no actor. */
  const scopeOf = (input: Input, context: ToolContext): string | undefined => {
    if (scopeSpec === undefined) {
      const id: unknown = context?.actor?.id;
      if (id === undefined) return undefined;
      if (typeof id !== 'string') throw invalidScope();
      return id;
    }
    if (typeof scopeSpec === 'string') return scopeSpec;
    let scope: unknown;
    try {
      scope = scopeSpec(input, context);
    } catch (error) {
      throw invalidScope(error);
    }
    if (typeof scope !== 'string' || scope.length === 0) throw invalidScope();
    return scope;
  };

  const keyOf = async (input: Input, context: ToolContext): Promise<{ key: string; rest: unknown }> => {
    const scope = scopeOf(input, context);
    if ('field' in keySpec) {
      const { [keySpec.field]: raw, ...rest } = (input ?? {}) as Record<string, unknown>;
      if (typeof raw !== 'string' || raw.length === 0 || raw.length > 255) {
        throw new ToolError(
          `\`${keySpec.field}\` must be a non-empty string of at most 255 characters: ${idempotencyKeyDescription}`,
          { code: 'invalid_idempotency_key', retry: 'no' },
        );
      }
      return { key: await scopedIdempotencyKey(tool.name, raw, scope), rest };
    }
    const window = Math.floor(clock.now() / keySpec.fingerprintWindowMs);
    const fingerprint = `fp:${(await sha256(canonicalJson(input))).slice(0, 32)}:${window}`;
    return { key: await scopedIdempotencyKey(tool.name, fingerprint, scope), rest: input };
  };

  const storeCall = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      if (isReinsError(error) && error.reason === 'corrupt_record') {
        throw new ToolError(
          'The record of this operation is unreadable, so it was not run. A person needs to look at it.',
          { code: 'idempotency_record_corrupt', retry: 'no', cause: error },
        );
      }
      throw new ToolError(
        'The idempotency store cannot be reached, so the operation was not run. Try again shortly.',
        { code: 'idempotency_store_unavailable', retry: 'after', retryAfterSeconds: 5, cause: error },
      );
    }
  };

  const deduplicated = (result: unknown): Deduplicated<Output> => ({
    deduplicated: true,
    note: 'This operation already ran with this idempotency key. This is its original result; it was not performed again.',
    result: result as Output,
  });

  return {
    ...tool,
    idempotency: {
      key:
        'field' in keySpec
          ? `input.${keySpec.field}`
          : `fingerprint of the input per ${keySpec.fingerprintWindowMs} ms`,
      scope: scopeSpec === undefined ? 'actor' : typeof scopeSpec === 'string' ? 'fixed' : 'custom',
      guarantee: options.reconcile ? 'exactly-once' : 'at-least-once-in-crash-window',
    },
    async execute(input, context) {
      const { key, rest } = await keyOf(input, context);
      const fingerprint = await sha256(canonicalJson(rest));
      const token = generateId('lease');
      const reserved = await storeCall(() =>
        options.store.reserve({ key, fingerprint, token, nowMs: clock.now(), leaseMs, retentionMs }),
      );
      switch (reserved.kind) {
        case 'completed':
          return deduplicated(reserved.result);
        case 'failed':
          throw new ToolError(reserved.failure.message, {
            code: reserved.failure.code,
            retry: 'no',
            details: { replayed: true },
          });
        case 'fingerprint_mismatch':
          throw new ToolError(
            'This idempotency key was already used for a different operation, so nothing was done. Use a new key for a new operation; reuse a key only to retry the same one.',
            {
              code: 'key_reused_with_different_input',
              retry: 'no',
            },
          );
        case 'in_progress': {
          const waitSeconds = Math.max(1, Math.ceil((reserved.leaseUntilMs - clock.now()) / 1_000));
          throw new ToolError(
            `This operation is already running under the same key. Wait about ${waitSeconds} s and retry with the same key.`,
            {
              code: 'idempotency_key_in_use',
              retry: 'after',
              retryAfterSeconds: waitSeconds,
            },
          );
        }
        case 'taken_over':
          if (options.reconcile) {
            const found = await options.reconcile(key, input, context);
            if (found.happened) {
              await storeCall(() =>
                options.store.complete({ key, token, result: found.result, nowMs: clock.now(), retentionMs }),
              );
              return deduplicated(found.result);
            }
          }
          break;
        case 'reserved':
          break;
      }

      let output: Output;
      try {
        output = await tool.execute(input, context);
      } catch (error) {
        const classification = classifyError(error);
        const terminal = classification.kind === 'terminal' && !failedBeforeEffect(error);
        if (terminal) {
          const failure = {
            code: isToolError(error) ? error.code : 'operation_failed',
            message: isToolError(error)
              ? error.message
              : `${tool.name} failed and will fail the same way again.`,
          };
          await storeCall(() => options.store.fail({ key, token, failure, nowMs: clock.now(), retentionMs }));
        } else if (failedBeforeEffect(error)) {
          await storeCall(() => options.store.release({ key, token }));
        } else {
          // In doubt: the effect may have landed. Keep the record and end the lease, so the next
          // attempt with this key reconciles before it runs anything.
          await storeCall(() => options.store.expireLease({ key, token, nowMs: clock.now() }));
          if (!isToolError(error)) {
            throw new ToolError(
              `${tool.name} ended without a clear answer (${classification.reason}). Retry with the same key: it checks whether the operation already happened.`,
              {
                code: 'outcome_uncertain',
                retry: 'yes',
                cause: error,
              },
            );
          }
        }
        throw error;
      }
      try {
        await options.store.complete({ key, token, result: output, nowMs: clock.now(), retentionMs });
      } catch {
        // The effect happened; only its record did not. A retry takes over after the lease and reconciles.
      }
      return output;
    },
  };
}
