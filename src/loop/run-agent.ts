import type { RunOptions } from './options.js';
import { resolveRun } from './resolve-run.js';
import { runLoop } from './run-loop.js';
import type { RunResult } from './run-result.js';
import type { RunState } from './run-state.js';

/**
 * Runs an agent to one labeled {@link Outcome}. Never throws for how a run ends (limits, budgets,
 * loops, model or tool failures, cancellation); throws {@link ConfigurationError} for invalid options.
 *
 * @example
 * import { runAgent } from 'reins';
 * import { scriptedModel } from 'reins/testing';
 * const result = await runAgent({
 *   model: scriptedModel([{ text: 'All good.' }]),
 *   input: 'Is checkout healthy?',
 *   maxSteps: 6,
 * });
 * if (result.outcome.kind === 'answered') console.log(result.outcome.text);
 */
export function runAgent(options: RunOptions): Promise<RunResult> {
  return runLoop(resolveRun(options));
}

/**
 * Continues a run from its last completed step. Pass the same tools and limits as the original run;
 * the conversation, counters and budgets come from the state. Steps that completed are never
 * repeated, so their tool calls never run again. A run that ended `hard_error` or `cancelled`
 * continues from its last completed step; one that ended `awaiting_approval` runs its paused batch
 * with the verdicts in `options.approvals`; any other ended run returns its outcome at once.
 *
 * One state is continued at most once: the resume claims the state's next checkpoint revision
 * before anything runs (compare-and-set in the store, or this process's memory without one), and a
 * second resume of the same state ends `stale_state` with nothing run.
 * Throws {@link ConfigurationError} for invalid options and a `ReinsError` for a corrupt state.
 */
export function resumeAgent(
  state: RunState,
  options: Omit<RunOptions, 'input' | 'runId' | 'system'>,
): Promise<RunResult> {
  return runLoop(resolveRun({ ...options, input: [] }, state));
}

export { giveUpDefinition, resolveLimits } from './resolve-run.js';
