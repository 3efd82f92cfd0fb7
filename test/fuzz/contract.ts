import fc from 'fast-check';
import { isConfigurationError, isReinsError } from '../../src/errors/reins-error.js';
import { outcomeKinds } from '../../src/loop/outcome.js';
import type { RunResult } from '../../src/loop/run-result.js';
import { type DrivenClock, drive } from './drive.js';
import { describe } from './hostile.js';
import type { Execution } from './tools.js';

/** A broken promise of the loop's contract, with what the property saw. */
export class Violation extends Error {
  override name = 'Violation';
}

export function violation(message: string): never {
  throw new Violation(message);
}

/**
 * How many runs a property gets: `FUZZ_RUNS` (default 200) shared by weight across every property
 * of the file, so `npm test` stays fast and `FUZZ_RUNS=100000` digs deep.
 */
export function runsFor(weight: number, totalWeight: number): number {
  const total = Number(process.env['FUZZ_RUNS'] ?? 200);
  return Math.max(1, Math.round((total * weight) / totalWeight));
}

/**
 * The default seed is fixed, so `npm test` is deterministic (a failure reproduces on every
 * machine); `FUZZ_SEED=random` explores new inputs (the seed is printed on failure), any number
 * replays a seed. `FUZZ_IGNORE` (a regular expression) lets a long exploration run go
 * past violations already reported (they are logged, not failed); `FUZZ_COLLECT=1` records every
 * distinct violation instead of stopping at the first. Unset, every property is strict.
 */
/** The seed `npm test` runs with. */
export const defaultSeed = 20_261_201;

export function fuzzParameters<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env['FUZZ_SEED'] ?? String(defaultSeed);
  const path = process.env['FUZZ_PATH'];
  return {
    numRuns,
    ...(seed === 'random' ? {} : { seed: Number(seed) }),
    ...(path === undefined ? {} : { path }),
  };
}

const ignore = process.env['FUZZ_IGNORE'] ? new RegExp(process.env['FUZZ_IGNORE']) : undefined;
const collect = process.env['FUZZ_COLLECT'] === '1';
export const collected = new Map<string, { count: number; example: string }>();

/** How often each interesting case came up (`FUZZ_STATS=1` prints them): what the properties covered. */
export const coverage = new Map<string, number>();
export function covered(what: string): void {
  coverage.set(what, (coverage.get(what) ?? 0) + 1);
}

/** Runs one property body: a {@link Violation} fails it, unless ignored or collected. */
export async function checked(label: string, body: () => Promise<void>, input: unknown): Promise<void> {
  try {
    await body();
  } catch (thrown) {
    if (!(thrown instanceof Violation)) throw thrown;
    const signature = `${label}: ${signatureOf(thrown.message)}`;
    if (collect || ignore?.test(thrown.message)) {
      const entry = collected.get(signature);
      if (entry) entry.count++;
      else
        collected.set(signature, {
          count: 1,
          example: `${thrown.message}\n    input: ${fc.stringify(input).slice(0, 1500)}`,
        });
      return;
    }
    throw thrown;
  }
}

/** The message with its numbers and ids blurred, so one defect is counted once. */
function signatureOf(message: string): string {
  return message
    .replace(/\d+(\.\d+)?/g, 'N')
    .replace(/"[^"]{20,}"/g, '"…"')
    .slice(0, 200);
}

export interface ContractOptions {
  clock: DrivenClock;
  maxWallMs: number | undefined;
  /** A resume may also throw `corrupt_state` / `unsupported_state_version` synchronously. */
  stateErrors?: boolean;
  /** Named in violations: `runAgent`, `resumeAgent`. */
  what?: string;
  /** The delay the run's wall-clock timer is armed with (a resume's is what its state has left). */
  wallTimerMs?: number;
}

export type Ran =
  | { kind: 'configuration'; error: unknown }
  | { kind: 'state'; error: unknown }
  | { kind: 'result'; result: RunResult };

/**
 * The contract of `runAgent` / `resumeAgent`: a synchronous ConfigurationError (or, for a resume,
 * a labeled state error), or a promise that resolves, never rejects, to a labeled outcome; never a
 * `hard_error` from reins itself (`internal`); never still running past `maxWallMs`; and nothing
 * reins does leaks onto shared prototypes.
 */
export async function expectContract(
  start: () => Promise<RunResult>,
  options: ContractOptions,
): Promise<Ran> {
  try {
    return await contract(start, options);
  } catch (thrown) {
    if (thrown instanceof Violation && options.what) thrown.message = `${options.what}: ${thrown.message}`;
    throw thrown;
  }
}

async function contract(start: () => Promise<RunResult>, options: ContractOptions): Promise<Ran> {
  const { clock, maxWallMs } = options;
  const startedAt = clock.now();
  const armedBefore = clock.timers.length;
  let promise: Promise<RunResult>;
  try {
    promise = start();
  } catch (thrown) {
    checkPollution();
    if (isConfigurationError(thrown)) return { kind: 'configuration', error: thrown };
    if (
      options.stateErrors &&
      isReinsError(thrown) &&
      (thrown.reason === 'corrupt_state' || thrown.reason === 'unsupported_state_version')
    )
      return { kind: 'state', error: thrown };
    violation(`threw synchronously ${describeThrown(thrown)}`);
  }
  if (!(promise instanceof Promise)) violation('did not return a promise');
  const driven = await drive(clock, promise);
  checkPollution();
  // The wall-clock timer is the first one a run arms, for what is left of maxWallMs.
  const wallMs = options.wallTimerMs ?? maxWallMs;
  const first = clock.timers[armedBefore];
  const wall = first && first.ms === wallMs ? first : undefined;
  const phase = !wall
    ? ''
    : wall.cleared
      ? ' after the run released its wall-clock timer (finish)'
      : wall.fired
        ? ' after the wall clock fired'
        : '';
  if (!driven.settled)
    violation(
      `hang${phase}: still running at +${driven.at - startedAt} ms fake time (${driven.why}; maxWallMs ${String(maxWallMs)})`,
    );
  if (!driven.ok) violation(`rejected ${describeThrown(driven.error)}`);
  const result = driven.value;
  const kind = (result as { outcome?: { kind?: unknown } } | undefined)?.outcome?.kind;
  if (!outcomeKinds.includes(kind as never))
    violation(`resolved without a labeled outcome: ${describe(result)}`);
  const outcome = result.outcome;
  if (outcome.kind === 'hard_error' && outcome.source === 'internal')
    violation(
      `hard_error internal: ${outcome.error.name}: ${outcome.error.message}${whereIn(outcome.error.stack)}`,
    );
  if (maxWallMs !== undefined && driven.at - startedAt > maxWallMs)
    violation(
      `ran past maxWallMs${phase}: settled at +${driven.at - startedAt} ms, maxWallMs ${maxWallMs} (outcome ${outcome.kind})`,
    );
  return { kind: 'result', result };
}

function describeThrown(thrown: unknown): string {
  if (isReinsError(thrown)) return `ReinsError(${thrown.reason}): ${thrown.message}`;
  let stack: unknown;
  try {
    stack = (thrown as { stack?: unknown } | null)?.stack;
  } catch {
    stack = undefined;
  }
  return describe(thrown) + whereIn(typeof stack === 'string' ? stack : undefined);
}

/** The first frame of reins' own code in a stack: where a defect is. */
export function whereIn(stack: string | undefined): string {
  const frame = stack?.split('\n').find((line) => line.includes('/src/') && !line.includes('/test/'));
  const at = frame?.match(/\/src\/([^):]+)/);
  return at ? ` (at src/${at[1]})` : '';
}

/** No execution of one proposed call more often than the model proposed it. */
export function expectOncePerProposal(
  executions: readonly Execution[],
  proposals: ReadonlyMap<string, number>,
) {
  const seen = new Map<string, number>();
  for (const execution of executions) {
    const count = (seen.get(execution.callId) ?? 0) + 1;
    seen.set(execution.callId, count);
    if (count > (proposals.get(execution.callId) ?? 0))
      violation(
        `side effect twice: ${execution.tool} call ${execution.callId} executed ${count}× (proposed ${proposals.get(execution.callId) ?? 0}×)`,
      );
  }
}

const statKeys = [
  'calls',
  'ok',
  'errors',
  'validationFailures',
  'validationFailureRate',
  'truncated',
  'denied',
];

/** Tool stats written onto Object.prototype or its members (a tool named `toString`, `__proto__`). */
export function checkPollution(): void {
  const polluted: string[] = [];
  const holders: [string, object][] = [['Object.prototype', Object.prototype]];
  for (const name of Object.getOwnPropertyNames(Object.prototype)) {
    if (name === '__proto__') continue;
    const member = (Object.prototype as Record<string, unknown>)[name];
    if ((typeof member === 'function' || typeof member === 'object') && member !== null)
      holders.push([`Object.prototype.${name}`, member]);
  }
  for (const [where, holder] of holders)
    for (const key of statKeys)
      if (Object.hasOwn(holder, key)) {
        polluted.push(`${where}.${key}`);
        delete (holder as Record<string, unknown>)[key];
      }
  if (polluted.length > 0) violation(`prototype pollution: ${polluted.join(', ')}`);
}
