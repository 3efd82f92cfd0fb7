import { ConfigurationError } from '../errors/reins-error.js';
import { sleep } from '../resilience/sleep.js';
import { type Clock, type RandomSource, systemClock } from '../time/clock.js';
import type { Tool, ToolContext } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';

/** Every fault {@link withFault} can inject, in the order a fault matrix lists them. */
export const toolFaults = [
  'timeout',
  'http_500',
  'http_429',
  'malformed_json',
  'empty',
  'truncated',
  'schema_invalid',
  'slow',
] as const;

/**
 * How a faulty tool misbehaves:
 * - `timeout`: never settles until the call's signal aborts, so the run's `toolTimeoutMs` ends it.
 * - `http_500`: throws a ToolError `http_500`, retry `yes`.
 * - `http_429`: throws a ToolError `rate_limited`, retry `after`, with `retryAfterSeconds`.
 * - `malformed_json`: answers a string of invalid JSON (a body cut mid-object), without running the tool.
 * - `empty`: answers `null`, without running the tool (an upstream that found nothing and said nothing).
 * - `truncated`: runs the tool and answers the first half of its result's JSON text, with no marker.
 * - `schema_invalid`: runs the tool and answers its result reshaped (keys renamed, types changed).
 * - `slow`: waits `delayMs` on the clock (abortable), then runs the tool.
 */
export type ToolFault = (typeof toolFaults)[number];

/** When a fault fires, and the figures it needs. */
export interface FaultFiring {
  /**
   * Chance that any one call misbehaves, drawn from `random` on every call. Not with `atCall`.
   * @default unset: `atCall: 1` applies
   */
  rate?: number;
  /** The call (1-based, per tool) that misbehaves; every other call behaves. @default 1 when `rate` is unset */
  atCall?: number;
  /** What `http_429` tells the model to wait. @default 30 */
  retryAfterSeconds?: number;
  /** How long `slow` waits before answering. @default 10_000 */
  delayMs?: number;
}

/** Options for {@link withFault}. */
export interface WithFaultOptions extends FaultFiring {
  fault: ToolFault;
  /** Draws the per-call chance under `rate`; pass a seeded source so a run replays. */
  random: RandomSource;
  /** The clock `slow` waits on: give it the run's clock so the loop's timeouts race it fairly. @default systemClock */
  clock?: Clock;
}

/** How often a faulty tool was called and misbehaved. Live: read it after the run. */
export interface FaultCount {
  readonly calls: number;
  readonly injected: number;
}

/** A tool with a fault wired in, and its count. */
export type FaultyTool<Input = unknown> = Tool<Input, unknown> & { readonly faultCount: FaultCount };

/**
 * Wraps a tool so that it misbehaves as a real dependency does (a 429, a timeout, a cut body),
 * keeping its name, schemas, effect and checks: the loop sees the same tool, so its own controls
 * (timeouts, output checks, error labels) meet the fault as they would in production.
 *
 * @example
 * import { seededRandom } from 'reins/testing';
 * const flaky = withFault(getOrder, { fault: 'http_429', rate: 0.2, random: seededRandom(7) });
 * // later: flaky.faultCount.injected
 */
export function withFault<Input, Output>(
  tool: Tool<Input, Output>,
  options: WithFaultOptions,
): FaultyTool<Input> {
  const fires = firingRule(tool.name, options);
  const clock = options.clock ?? systemClock;
  const count = { calls: 0, injected: 0 };
  const execute = (input: Input, context: ToolContext): Promise<unknown> | unknown => {
    count.calls++;
    if (!fires(count.calls)) return tool.execute(input, context);
    count.injected++;
    return misbehave(tool, options, clock, input, context);
  };
  return Object.freeze({ ...tool, execute, faultCount: count as FaultCount });
}

/** The rule for the n-th call; bad options are a programmer error, caught before any run. */
function firingRule(name: string, options: WithFaultOptions): (call: number) => boolean {
  const where = `withFault(${name})`;
  if (!(toolFaults as readonly string[]).includes(options.fault))
    throw new ConfigurationError(`${where}.fault`, `must be one of ${toolFaults.join(', ')}`);
  if (options.rate !== undefined && options.atCall !== undefined)
    throw new ConfigurationError(where, 'give rate or atCall, not both');
  if (options.retryAfterSeconds !== undefined && !(options.retryAfterSeconds >= 0))
    throw new ConfigurationError(`${where}.retryAfterSeconds`, 'must be a number ≥ 0');
  if (options.delayMs !== undefined && !(options.delayMs >= 0))
    throw new ConfigurationError(`${where}.delayMs`, 'must be a number ≥ 0');
  const { rate, random } = options;
  if (rate !== undefined) {
    if (!(rate >= 0 && rate <= 1)) throw new ConfigurationError(`${where}.rate`, 'must be in [0, 1]');
    // One draw on every call, fired or not, so the sequence (and the replay) does not depend on the rate.
    return () => random() < rate;
  }
  const atCall = options.atCall ?? 1;
  if (!(Number.isInteger(atCall) && atCall >= 1))
    throw new ConfigurationError(`${where}.atCall`, 'must be a whole number ≥ 1');
  return (call) => call === atCall;
}

async function misbehave<Input, Output>(
  tool: Tool<Input, Output>,
  options: WithFaultOptions,
  clock: Clock,
  input: Input,
  context: ToolContext,
): Promise<unknown> {
  switch (options.fault) {
    case 'timeout':
      return hangUntilAborted(context.signal);
    case 'http_500':
      throw new ToolError(`${tool.name}: the service answered HTTP 500 (internal server error).`, {
        code: 'http_500',
        retry: 'yes',
      });
    case 'http_429': {
      const retryAfterSeconds = options.retryAfterSeconds ?? 30;
      throw new ToolError(`${tool.name}: rate limited (HTTP 429); try again in ${retryAfterSeconds} s.`, {
        code: 'rate_limited',
        retry: 'after',
        retryAfterSeconds,
      });
    }
    case 'malformed_json':
      // A body cut mid-object: unbalanced braces, an unterminated string.
      return '{"status": "ok", "data": {"items": [{"id": "';
    case 'empty':
      return null;
    case 'truncated': {
      const text = jsonText(await tool.execute(input, context));
      return text.slice(0, Math.floor(text.length / 2));
    }
    case 'schema_invalid':
      return reshaped(await tool.execute(input, context));
    case 'slow':
      await sleep(options.delayMs ?? 10_000, { signal: context.signal, clock });
      return tool.execute(input, context);
  }
}

/** Settles only when the call is stopped: the loop's timeout (or the run's abort) decides. */
function hangUntilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    const stop = () => reject(signal.reason ?? new Error('aborted'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}

function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

/**
 * The result with the shape an upstream schema change gives: every key renamed, every number a
 * string, every string a number or null, every boolean a string. A primitive becomes an object.
 */
function reshaped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reshaped);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, field]) => [`${key}_v2`, reshaped(field)]),
    );
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value === '' ? null : value.length;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return { unexpected: value ?? true };
}
