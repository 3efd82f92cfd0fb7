import { type JobBudget, JobBudgetExceededError } from '../budget/job-budget.js';
import type { Model } from '../model/model.js';
import { type RetryOptions, retryOrThrow } from './retry.js';

/** Options for {@link retryingModel}: the retry's controls, and the job's budget. */
export interface RetryingModelOptions extends Omit<RetryOptions, 'signal'> {
  /**
   * The job's budget: each retry (an attempt after the first) takes one of its `maxRetries`, and a
   * retry the job cannot afford rejects with {@link JobBudgetExceededError} (the loop ends
   * `over_budget` with `job_retries`, naming `spender`). Tokens are charged by whoever makes the
   * call (the loop, a pipeline stage, `budgetedModel`): an attempt that failed with an HTTP error
   * was not billed. @default none
   */
  jobBudget?: JobBudget;
  /** This model's name on the job's bill. @default `retry:<model name>` */
  spender?: string;
}

/**
 * A model whose calls retry under the given controls. A failure that is not retried (a 400, a
 * denied retry, an open circuit) reaches the loop as a `RetryError` naming its kind, and the run
 * ends `hard_error` at once instead of re-planning the same request.
 */
export function retryingModel(model: Model, options: RetryingModelOptions): Model {
  const { jobBudget, spender, ...retry } = options;
  if (jobBudget === undefined)
    return {
      name: model.name,
      generate: (request) =>
        retryOrThrow(({ signal }) => model.generate(signal ? { ...request, signal } : request), {
          ...retry,
          ...(request.signal ? { signal: request.signal } : {}),
        }),
    };
  const name = spender ?? `retry:${model.name}`;
  return {
    name: model.name,
    generate: (request) => {
      let refused: JobBudgetExceededError | undefined;
      return retryOrThrow(
        ({ signal, attempt }) => {
          if (attempt > 1) {
            const granted = jobBudget.retry(name);
            // Unclassified, so terminal: the retry loop stops here.
            if (!granted.ok) {
              refused = new JobBudgetExceededError(granted.exceeded);
              throw refused;
            }
          }
          return model.generate(signal ? { ...request, signal } : request);
        },
        { ...retry, ...(request.signal ? { signal: request.signal } : {}) },
      ).catch((thrown: unknown) => {
        throw refused ?? thrown;
      });
    },
  };
}
