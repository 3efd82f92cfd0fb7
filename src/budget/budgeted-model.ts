import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import { approxTokenEstimator, PrefillCounter, type TokenEstimator } from '../tokens/token-estimator.js';
import { failedCallCharge } from './failed-call-charge.js';
import { type JobBudget, JobBudgetExceededError } from './job-budget.js';

/** Options for {@link budgetedModel}. */
export interface BudgetedModelOptions {
  /** Sizes each request's prefill for the reservation. @default approxTokenEstimator */
  estimator?: TokenEstimator;
}

/**
 * A model whose every call is charged to a job's budget: the call's maximum reserved before it is
 * made (prefill estimated, plus `maxOutputTokens`), replaced by the usage it reports, released when
 * it fails before billing (see `failedCallCharge`). When the job cannot afford the call, `generate`
 * rejects with {@link JobBudgetExceededError} and nothing is sent. For a tool that calls a model:
 * wrap it with the budget its context carries (`context.jobBudget`).
 *
 * @example
 * import { budgetedModel, JobBudget } from 'reins';
 * import { scriptedModel } from 'reins/testing';
 * const budget = new JobBudget({ maxTokens: 10_000 });
 * const model = budgetedModel(scriptedModel([{ text: 'ok' }]), budget, 'tool:summarize');
 * await model.generate({ system: '', messages: [], tools: [], toolChoice: 'none', maxOutputTokens: 64 });
 */
export function budgetedModel(
  model: Model,
  budget: JobBudget,
  spender: string,
  options: BudgetedModelOptions = {},
): Model {
  const counter = new PrefillCounter(options.estimator ?? approxTokenEstimator);
  return {
    name: model.name,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const reserved = budget.reserve({
        spender,
        model: model.name,
        inputTokens: counter.request(request),
        maxOutputTokens: request.maxOutputTokens,
      });
      if (!reserved.ok) throw new JobBudgetExceededError(reserved.exceeded);
      let response: ModelResponse;
      try {
        response = await model.generate(request);
      } catch (thrown) {
        if (failedCallCharge(thrown) === 'release') budget.release(reserved.reservation);
        else budget.keep(reserved.reservation);
        throw thrown;
      }
      budget.settle(reserved.reservation, response?.usage, response?.model);
      return response;
    },
  };
}
