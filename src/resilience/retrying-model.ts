import type { Model } from '../model/model.js';
import { type RetryOptions, retryOrThrow } from './retry.js';

/**
 * A model whose calls retry under the given controls. A failure that is not retried (a 400, a
 * denied retry, an open circuit) reaches the loop as a `RetryError` naming its kind, and the run
 * ends `hard_error` at once instead of re-planning the same request.
 */
export function retryingModel(model: Model, options: Omit<RetryOptions, 'signal'>): Model {
  return {
    name: model.name,
    generate: (request) =>
      retryOrThrow(({ signal }) => model.generate(signal ? { ...request, signal } : request), {
        ...options,
        ...(request.signal ? { signal: request.signal } : {}),
      }),
  };
}
