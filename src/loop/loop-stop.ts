import type { Guarded } from './boundary.js';
import type { BudgetPhase, Outcome } from './outcome.js';

/**
 * Thrown inside the loop, never out of it: a stage deep in a step (a sink, a store, a limiter)
 * ends the run with an outcome. `runLoop` catches it and finishes with `outcome`, or, when
 * `aborted`, with whatever the run's signal says (wall clock or cancellation) at `phase`.
 */
/** `instanceof` that a Proxy with a throwing `getPrototypeOf` trap cannot turn into a throw. */
export function isLoopStop(thrown: unknown): thrown is LoopStop {
  try {
    return thrown instanceof LoopStop;
  } catch {
    return false;
  }
}

export class LoopStop {
  readonly outcome: Outcome | undefined;
  readonly phase: BudgetPhase;

  constructor(outcome: Outcome | undefined, phase: BudgetPhase) {
    this.outcome = outcome;
    this.phase = phase;
  }

  /** From a failed {@link Guarded}: its source and error, or the signal's verdict when it stopped. */
  static from(failed: Exclude<Guarded<unknown>, { ok: true }>, phase: BudgetPhase): LoopStop {
    if (failed.stopped) return new LoopStop(undefined, phase);
    return new LoopStop({ kind: 'hard_error', source: failed.source, error: failed.error }, phase);
  }
}
