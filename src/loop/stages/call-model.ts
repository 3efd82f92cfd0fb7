import { isJobBudgetExceeded } from '../../budget/job-budget.js';
import { costUsdOf, resolvePrice } from '../../controls/price.js';
import { errorInfo } from '../../errors/error-info.js';
import {
  type AssistantMessage,
  carriesExternalData,
  type ToolUseBlock,
  textOf,
  toolCallsOf,
} from '../../model/content.js';
import {
  addUsage,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Usage,
} from '../../model/model.js';
import { traceVersion } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { LoopState, PreparedCall } from '../loop-state.js';
import { isLoopStop, LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import { chargedCall, jobOutcome } from './job-charge.js';
import { malformed, validUsage } from './read-response.js';

/** A model's answer as the later stages read it. */
export interface ModelTurn {
  response: ModelResponse;
  calls: ToolUseBlock[];
  text: string;
  prefillTokens: number;
}

/**
 * Call the model: the prepared request raced with the run's signal (the wall clock aborts it), the
 * answer checked for shape, its usage taken as the truth for the bill and the next prefill, its
 * cost charged to the run and to the account's shared ceiling. Throws {@link LoopStop} to end the
 * run; returns the turn otherwise.
 */
export function callModel(state: LoopState, step: number, prepared: PreparedCall): Promise<ModelTurn> {
  const startedAt = state.setup.clock.now();
  const request: ModelRequest = {
    system: prepared.system,
    messages: prepared.messages,
    tools: prepared.tools,
    toolChoice: prepared.toolChoice,
    signal: state.run.signal,
  };
  if (prepared.maxOutputTokens !== undefined) request.maxOutputTokens = prepared.maxOutputTokens;
  if (prepared.settings !== undefined) request.settings = prepared.settings;
  const job = state.setup.jobBudget;
  const answer =
    job === undefined
      ? answerOf(state, prepared.model, request)
      : chargedCall(job, state.setup.spender ?? `agent:${state.setup.runId}`, prepared, () =>
          answerOf(state, prepared.model, request),
        );
  return answer.then(
    (response) => readAnswer(state, step, prepared, response, startedAt),
    (thrown: unknown) => modelFailed(state, step, thrown, startedAt),
  );
}

/** The model threw or rejected: a `model-error` event, and the run ends `hard_error` (source `model`). */
async function modelFailed(
  state: LoopState,
  step: number,
  thrown: unknown,
  startedAt: number,
): Promise<never> {
  state.onModelAbort = undefined;
  if (isLoopStop(thrown))
    throw thrown.outcome?.kind === 'over_budget' ? thrown : new LoopStop(undefined, 'during-call');
  if (state.run.signal.aborted) throw new LoopStop(undefined, 'during-call');
  // A model that charges the job itself (`budgetedModel`, `retryingModel` with a job budget) and was
  // refused: the job has run out, and the run says who ran it out.
  if (isJobBudgetExceeded(thrown))
    throw new LoopStop(jobOutcome(thrown.exceeded, 'during-call'), 'during-call');
  const error = errorInfo(thrown);
  const written = state.trace.emit({
    type: 'model-error',
    step,
    error,
    durationMs: state.setup.clock.now() - startedAt,
  });
  if (written) await written;
  throw new LoopStop({ kind: 'hard_error', source: 'model', error }, 'during-call');
}

/** An answer checked for shape (a malformed one ends the run), then accounted. */
function readAnswer(
  state: LoopState,
  step: number,
  prepared: PreparedCall,
  response: ModelResponse,
  startedAt: number,
): ModelTurn | Promise<ModelTurn> {
  state.onModelAbort = undefined;
  let problem: string | undefined;
  try {
    problem = malformed(response);
  } catch (thrown) {
    // A getter or Proxy in the response: unreadable, like any malformed one.
    problem = `the response could not be read (${errorInfo(thrown).message})`;
  }
  if (problem) return malformedAnswer(state, step, response, problem, startedAt);
  return account(state, step, prepared, response, startedAt);
}

async function malformedAnswer(
  state: LoopState,
  step: number,
  response: ModelResponse,
  problem: string,
  startedAt: number,
): Promise<never> {
  const error = { name: 'MalformedResponse', message: problem };
  const now = state.setup.clock.now();
  const written = state.trace.emit(
    { type: 'model-error', step, error, response: jsonSafe(response), durationMs: now - startedAt },
    now,
  );
  if (written) await written;
  throw new LoopStop({ kind: 'hard_error', source: 'malformed_response', error }, 'during-call');
}

/**
 * The model's answer, or a {@link LoopStop} as soon as the run's signal aborts (the wall clock, a
 * cancellation): a model that ignores its signal cannot hold the run. One callback slot on the run
 * serves the call; no listener and no race per call. A late answer or error is dropped.
 */
function answerOf(state: LoopState, model: Model, request: ModelRequest): Promise<ModelResponse> {
  if (state.run.signal.aborted) return Promise.reject(new LoopStop(undefined, 'during-call'));
  let pending: ModelResponse | PromiseLike<ModelResponse>;
  try {
    pending = model.generate(request);
  } catch (thrown) {
    return Promise.reject(thrown);
  }
  // The signal may have aborted while `generate` ran (a clock advanced inside it).
  if (state.run.signal.aborted) {
    Promise.resolve(pending).then(undefined, () => {});
    return Promise.reject(new LoopStop(undefined, 'during-call'));
  }
  return new Promise<ModelResponse>((resolve, reject) => {
    // Cleared when the answer is read (readAnswer, modelFailed); an abort after the answer rejects
    // a promise already resolved, which does nothing.
    state.onModelAbort = reject;
    Promise.resolve(pending).then(resolve, reject);
  });
}

/** Usage, bill, spend and the transcript after a well-formed response. */
function account(
  state: LoopState,
  step: number,
  prepared: PreparedCall,
  response: ModelResponse,
  startedAt: number,
): ModelTurn | Promise<ModelTurn> {
  const { setup } = state;
  const assistant: AssistantMessage = { role: 'assistant', content: response.content };
  let reported: Usage | undefined;
  try {
    reported = validUsage(response.usage);
  } catch {
    reported = undefined;
  }
  const callUsage: Usage = reported ?? {
    inputTokens: prepared.contextTokens,
    outputTokens: setup.counter.message(assistant),
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  const prefillTokens = callUsage.inputTokens + callUsage.cacheReadTokens + callUsage.cacheWriteTokens;
  state.usage = addUsage(state.usage, callUsage);
  state.billedTokens += prefillTokens + callUsage.outputTokens;
  // A blank id (Azure reports `model: ''`) says nothing about the model: keep the last one.
  const reportedModel = response.model?.trim() ? response.model : undefined;
  state.lastModelId = reportedModel ?? state.lastModelId;
  // Priced by the id the provider reported (often dated), else by the name the call was made with.
  const price = state.prices ? state.prices.resolve(reportedModel, prepared.model.name) : undefined;
  // Tokens billed at other models' prices count whether or not the main usage could be read.
  const extra: AdditionalCost = additionalCost(state, response.additionalUsage);
  const callCost = (price ? costUsdOf(callUsage, price.price) : 0) + extra.costUsd;
  state.costUsd += callCost;
  const bill: Bill = { assistant, reported, callUsage, prefillTokens, callCost, reportedModel };
  // An unpriced call matters only under a spend budget (without one, costs are figures, not limits).
  const unpricedCall =
    (price === undefined || extra.unpriced !== undefined) &&
    (setup.limits.maxSpendUsd !== null || setup.accountSpend !== undefined);
  if (unpricedCall || (setup.accountSpend && callCost > 0)) {
    // Named as the call was made (as the before-call check names it), else as the provider reported.
    const unpricedModel =
      price !== undefined && extra.unpriced !== undefined
        ? extra.unpriced
        : prepared.model.name.trim()
          ? prepared.model.name
          : (reportedModel ?? '');
    return accountSpend(state, step, response, startedAt, bill, unpricedCall ? unpricedModel : undefined);
  }
  return recordTurn(state, step, response, startedAt, bill);
}

/** What one call cost, for the transcript and the `model-response` event. */
interface Bill {
  assistant: AssistantMessage;
  reported: Usage | undefined;
  callUsage: Usage;
  prefillTokens: number;
  callCost: number;
  reportedModel: string | undefined;
}

/**
 * The account's shared ceiling and an unpriced call under a spend budget: the limiter is the
 * user's (maybe asynchronous), and an unpriced call ends the run once it is recorded.
 */
async function accountSpend(
  state: LoopState,
  step: number,
  response: ModelResponse,
  startedAt: number,
  bill: Bill,
  unpricedModel: string | undefined,
): Promise<ModelTurn> {
  const spend = state.setup.accountSpend;
  const unpriced = unpricedModel !== undefined ? await unpricedSpend(state) : undefined;
  if (spend && bill.callCost > 0) {
    const added = await guard(
      'limiter',
      () => spend.limiter.add(spend.accountId, bill.callCost),
      state.run.signal,
    );
    if (!added.ok) throw LoopStop.from(added, 'during-call');
  }
  const recorded = recordTurn(state, step, response, startedAt, bill);
  const turn = recorded instanceof Promise ? await recorded : recorded;
  if (unpriced) throw new LoopStop({ ...unpriced, unpriced: unpricedModel as string }, 'during-call');
  return turn;
}

/** The answer joins the transcript and the trace. */
function recordTurn(
  state: LoopState,
  step: number,
  response: ModelResponse,
  startedAt: number,
  bill: Bill,
): ModelTurn | Promise<ModelTurn> {
  const { reported, callUsage, prefillTokens } = bill;
  // The provider's count of what it just read is the truth; the answer joins the next prefill. A
  // turn with server-side iterations says itself what the next prefill holds.
  const told = reported ? response.contextTokens : undefined;
  state.contextTokens = validCount(told) ? told : prefillTokens + callUsage.outputTokens;
  state.messages.push(bill.assistant);
  // A server-side tool's result (a web page, search hits) is untrusted data, as a client tool's is.
  if (carriesExternalData(response.content)) state.taint.noteResult(true, []);
  const calls = toolCallsOf(response.content);
  const text = textOf(response.content);
  let written: Promise<void> | undefined;
  if (state.trace.on) {
    const now = state.setup.clock.now();
    written = state.trace.emit(
      {
        type: 'model-response',
        step,
        response,
        thought: text,
        usageEstimated: reported === undefined,
        prefillTokens,
        costUsd: bill.callCost,
        contextTokens: state.contextTokens,
        billedTokens: state.billedTokens,
        durationMs: now - startedAt,
        v: traceVersion,
        runId: '',
        seq: 0,
        at: 0,
      },
      now,
    );
  }
  const turn: ModelTurn = { response, calls, text, prefillTokens };
  return written ? written.then(() => turn) : turn;
}

/**
 * Under a spend budget, a call no price resolves for is not free: the budget it leaves unenforced
 * (the run's `maxSpendUsd` first, else the account's ceiling) with the spend so far, to end the
 * run `over_budget`. Undefined without a spend budget (costs are then figures, not limits).
 */
const validCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

interface AdditionalCost {
  costUsd: number;
  unpriced?: string;
}

/** Most calls bill nothing at other models' prices: one answer for them all. */
const noAdditionalCost: AdditionalCost = Object.freeze({ costUsd: 0 });

/**
 * Tokens the call billed at other models' prices: added to usage and the bill, priced each by its
 * model. `unpriced` names a model without a price (the spend limit then fails closed).
 */
function additionalCost(state: LoopState, additional: ModelResponse['additionalUsage']): AdditionalCost {
  if (!Array.isArray(additional)) return noAdditionalCost;
  let costUsd = 0;
  let unpriced: string | undefined;
  for (const entry of additional) {
    let usage: Usage | undefined;
    try {
      usage = validUsage(entry?.usage);
    } catch {
      usage = undefined;
    }
    if (!usage) continue;
    // Tokens are tokens whoever names them: a model that is not a name is counted, and unpriced.
    const named = typeof entry?.model === 'string' && entry.model.trim() !== '' ? entry.model : undefined;
    state.usage = addUsage(state.usage, usage);
    state.billedTokens +=
      usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
    const prices = state.setup.prices;
    const price = prices && named ? resolvePrice(prices, named, named) : undefined;
    if (price) costUsd += costUsdOf(usage, price.price);
    else unpriced ??= named ?? String(entry?.model);
  }
  return unpriced === undefined ? { costUsd } : { costUsd, unpriced };
}

async function unpricedSpend(
  state: LoopState,
): Promise<Extract<Outcome, { kind: 'over_budget' }> | undefined> {
  const { limits, accountSpend } = state.setup;
  const phase = 'during-call' as const;
  if (limits.maxSpendUsd !== null)
    return {
      kind: 'over_budget',
      budget: 'spend_usd',
      limit: limits.maxSpendUsd,
      actual: state.costUsd,
      phase,
    };
  if (!accountSpend) return undefined;
  const spent = await guard(
    'limiter',
    () => accountSpend.limiter.spent(accountSpend.accountId),
    state.run.signal,
  );
  if (!spent.ok) throw LoopStop.from(spent, phase);
  return {
    kind: 'over_budget',
    budget: 'account_spend_usd',
    limit: accountSpend.limitUsd,
    actual: spent.value,
    phase,
  };
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value) ?? 'null');
  } catch {
    return errorInfo(value).message;
  }
}
