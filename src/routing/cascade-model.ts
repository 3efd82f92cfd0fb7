import { costUsdOf, type PriceTable, resolvePrice } from '../controls/price.js';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { Model, ModelRequest, ModelResponse, Usage } from '../model/model.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { classifyError } from '../resilience/classify-error.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/clock.js';
import type { CascadeAttempt, CascadeRecord } from './cascade-record.js';
import type { EscalationTrigger, TriggerSpend, TriggerVerdict } from './escalation-trigger.js';

/** A tier: a model, optionally behind a circuit breaker. */
export type CascadeTier = Model | { model: Model; breaker?: Breaker };

export interface CascadeModelOptions {
  /** Cheapest first, strongest last. At least one. */
  tiers: readonly CascadeTier[];
  /** Asked about every tier's answer but the last's; `escalate` sends the request to the next tier. */
  escalate: EscalationTrigger;
  /** @default `cascade(<tier names>)` */
  name?: string;
  /** Prices for the costs in the routing record (the loop prices the bill itself). @default none */
  prices?: PriceTable;
  /** Times each tier's call. @default systemClock */
  clock?: Clock;
}

/** An answer from a cascade: a `ModelResponse` carrying what the cascade did. */
export type CascadeResponse = ModelResponse & { routing: CascadeRecord };

/**
 * A `Model` that asks the cheap tier first and escalates on a trigger (post-06), so it drops into
 * `runAgent` (or anything that takes a `Model`) unchanged.
 *
 * - The answer is the answering tier's; the tiers it escalated from, and a judge's tokens, ride in
 *   `additionalUsage`, so the loop's budgets and bill charge every call at its model's price.
 * - `response.routing` ({@link CascadeRecord}) says which tier answered and why each escalation
 *   happened, with both costs; the loop writes it into the trace's `model-response` event.
 * - A tier behind a breaker that is open is skipped (no call). One whose call fails transiently
 *   (5xx, 429, a dropped connection) is recorded on its breaker and the next tier answers; a
 *   terminal error (a 400) or a cancellation is rethrown, as is any error from a tier without a breaker.
 * - Not streaming: each tier's answer is complete before the trigger reads it, so no cheap text
 *   reaches a user before the cascade has decided to keep it.
 *
 * @example
 * import { scriptedModel } from 'reins/testing';
 * const model = cascadeModel({
 *   tiers: [scriptedModel([{ text: 'ok' }], { name: 'cheap' }), scriptedModel([], { name: 'strong' })],
 *   escalate: structuralTrigger({ minChars: 1 }),
 * });
 */
export function cascadeModel(options: CascadeModelOptions): Model {
  const tiers = (options.tiers ?? []).map((tier, index) => {
    const entry = 'generate' in tier ? { model: tier } : tier;
    if (typeof entry?.model?.generate !== 'function')
      throw new ConfigurationError(`tiers[${index}]`, 'must be a Model or { model, breaker? }');
    return entry;
  });
  if (tiers.length === 0) throw new ConfigurationError('tiers', 'needs at least one tier');
  if (typeof options.escalate?.check !== 'function')
    throw new ConfigurationError('escalate', 'must be a trigger (structuralTrigger, confidenceTrigger…)');
  const { escalate, prices } = options;
  const clock = options.clock ?? systemClock;
  const name = options.name ?? `cascade(${tiers.map((tier) => tier.model.name).join(' → ')})`;
  const costOf = (model: string | undefined, tierName: string, usage: Usage | undefined) => {
    if (!prices || !usage) return undefined;
    const price = resolvePrice(prices, model, tierName);
    return price ? costUsdOf(usage, price.price) : undefined;
  };

  return {
    name,
    async generate(request: ModelRequest): Promise<CascadeResponse> {
      const attempts: CascadeAttempt[] = [];
      const doubted: Doubted[] = [];
      let lastError: unknown;
      for (let tier = 0; tier < tiers.length; tier++) {
        const { model, breaker } = tiers[tier] as { model: Model; breaker?: Breaker };
        // Awaited only when asynchronous (a shared breaker): each await is a microtask per stage.
        const acquired = breaker?.acquire();
        const permit = acquired instanceof Promise ? await acquired : acquired;
        if (permit?.kind === 'open') {
          attempts.push({
            kind: 'skipped',
            tier,
            name: model.name,
            reason: 'breaker_open',
            retryInMs: permit.retryInMs,
          });
          continue;
        }
        const startedAt = clock.now();
        let response: ModelResponse;
        try {
          response = await model.generate(request);
        } catch (error) {
          const classification = classifyError(error);
          // The caller's own cancellation says nothing about the tier; a 400 says it is up and the
          // request is wrong (as retry records it): neither may open its circuit.
          if (breaker && permit && classification.kind !== 'cancelled') {
            const dependencyFailed =
              classification.kind === 'transient' || classification.kind === 'throttled';
            const recorded = breaker.record(permit, !dependencyFailed);
            if (recorded instanceof Promise) await recorded;
          }
          if (request.signal?.aborted || classification.kind === 'cancelled') throw error;
          // Before any tier has answered, an error the next tier cannot help with (no breaker to
          // route around, or a 400: the next model would get the same request) is the caller's. Once
          // a tier has answered and been paid for, that answer is the fallback below (billed, degraded).
          const outage = classification.kind === 'transient' || classification.kind === 'throttled';
          if (doubted.length === 0 && (!breaker || !outage)) throw error;
          lastError = error;
          const message = error instanceof Error ? error.message : String(error);
          attempts.push({
            kind: 'failed',
            tier,
            name: model.name,
            error: message,
            durationMs: clock.now() - startedAt,
          });
          continue;
        }
        if (breaker && permit) {
          const recorded = breaker.record(permit, true);
          if (recorded instanceof Promise) await recorded;
        }
        const durationMs = clock.now() - startedAt;
        const costUsd = costOf(response.model, model.name, response.usage);
        const last = tier === tiers.length - 1;
        let verdict: TriggerVerdict | undefined;
        if (!last) {
          // A trigger that fails (a judge that errors) cannot vouch for the answer: escalate.
          try {
            const checked = escalate.check({ request, response, tier });
            verdict = checked instanceof Promise ? await checked : checked;
          } catch (error) {
            verdict = {
              kind: 'escalate',
              trigger: escalate.name,
              reason: `the trigger failed: ${error instanceof Error ? error.message : String(error)}`,
            } as TriggerVerdict;
          }
        }
        if (verdict?.kind === 'escalate') {
          const attempt: CascadeAttempt = {
            kind: 'escalated',
            tier,
            name: model.name,
            trigger: verdict.trigger,
            reason: verdict.reason,
            durationMs,
          };
          if (verdict.score !== undefined) attempt.score = verdict.score;
          if (response.usage) attempt.usage = response.usage;
          if (costUsd !== undefined) attempt.costUsd = costUsd;
          const triggerCostUsd = spendCost(verdict.spent, costOf);
          if (triggerCostUsd !== undefined) attempt.triggerCostUsd = triggerCostUsd;
          attempts.push(attempt);
          doubted.push({ response, tier, name: model.name, spent: verdict.spent ?? [] });
          continue;
        }
        const attempt: CascadeAttempt = { kind: 'answered', tier, name: model.name, durationMs };
        if (response.usage) attempt.usage = response.usage;
        if (costUsd !== undefined) attempt.costUsd = costUsd;
        attempts.push(attempt);
        const record: CascadeRecord = {
          version: 1,
          answeredBy: { tier, name: model.name },
          attempts,
          degraded: false,
        };
        return answer(response, doubted, verdict?.spent ?? [], record);
      }
      const fallback = doubted.at(-1);
      if (fallback) {
        const { tier, name: tierName } = fallback;
        const record: CascadeRecord = {
          version: 1,
          answeredBy: { tier, name: tierName },
          attempts,
          degraded: true,
        };
        return answer(fallback.response, doubted, [], record);
      }
      throw new ReinsError(
        'circuit_open',
        `${name}: no tier could answer (${attempts.map(describe).join('; ')})`,
        {
          cause: lastError,
        },
      );
    },
  };
}

/** An answer a trigger sent on, kept to be billed (and returned, degraded, if nothing better comes). */
interface Doubted {
  response: ModelResponse;
  tier: number;
  name: string;
  spent: readonly TriggerSpend[];
}

/**
 * The answering tier's response with the routing record, and every other call billed beside it:
 * the tiers escalated from (at their own models' prices) and what the triggers spent.
 */
function answer(
  response: ModelResponse,
  doubted: readonly Doubted[],
  spent: readonly TriggerSpend[],
  routing: CascadeRecord,
): CascadeResponse {
  // Plain loops, no spread pushes: this runs once per request and dominated the cascade's overhead.
  const additional: { model: string; usage: Usage }[] = [];
  for (const earlier of doubted) {
    if (earlier.response !== response) {
      const model = earlier.response.model?.trim() ? earlier.response.model : earlier.name;
      if (earlier.response.usage) additional.push({ model, usage: earlier.response.usage });
      if (earlier.response.additionalUsage)
        for (const entry of earlier.response.additionalUsage) additional.push(entry);
    }
    for (const entry of earlier.spent) additional.push(entry);
  }
  for (const entry of spent) additional.push(entry);
  if (response.additionalUsage) for (const entry of response.additionalUsage) additional.push(entry);
  // Priced as the tier that answered when the provider names no model (the cascade's own name
  // resolves to no price, and the call would drop out of the bill).
  const model = response.model?.trim() ? response.model : routing.answeredBy.name;
  const answered: CascadeResponse = Object.assign({}, response, { routing, model });
  if (additional.length > 0) answered.additionalUsage = additional;
  return answered;
}

function spendCost(
  spent: readonly TriggerSpend[] | undefined,
  costOf: (model: string | undefined, name: string, usage: Usage | undefined) => number | undefined,
): number | undefined {
  if (!spent || spent.length === 0) return undefined;
  let total = 0;
  for (const entry of spent) {
    const cost = costOf(entry.model, entry.model, entry.usage);
    if (cost === undefined) return undefined;
    total += cost;
  }
  return total;
}

function describe(attempt: CascadeAttempt): string {
  switch (attempt.kind) {
    case 'skipped':
      return `${attempt.name}: breaker open`;
    case 'failed':
      return `${attempt.name}: ${attempt.error}`;
    case 'escalated':
      return `${attempt.name}: escalated (${attempt.reason})`;
    case 'answered':
      return `${attempt.name}: answered`;
  }
}
