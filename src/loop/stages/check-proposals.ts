import { actionFingerprint, actionFingerprintOfCanonical } from '../../controls/drift-monitor.js';
import { traceVersion } from '../../trace/events.js';
import type { LoopState } from '../loop-state.js';
import type { Outcome } from '../outcome.js';
import type { ProposedCall } from './proposed-call.js';

/**
 * Check the proposed batch before anything in it runs: the repeat key of every call (`looped`
 * `repeated_call` at the limit), then the drift window (`looped` `no_progress`). Synchronous unless
 * a sink is not.
 */
export function checkProposals(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
): Outcome | undefined | Promise<Outcome | undefined> {
  return checkRepeats(state, step, proposed, 0);
}

/** The repeat checks from call `from` on, then drift. */
function checkRepeats(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  from: number,
): Outcome | undefined | Promise<Outcome | undefined> {
  const { repeats, drift, trace } = state;
  if (repeats) {
    for (let index = from; index < proposed.length; index++) {
      const { call, canonical } = proposed[index] as ProposedCall;
      // Joined, not concatenated: the detector keeps every distinct key for the run, and a
      // concatenation stays a tree of cons strings beside the flat copy the map's hashing makes.
      const check = repeats.checkKey([call.name, ':', canonical].join(''));
      const looped: Outcome | undefined = check.repeated
        ? {
            kind: 'looped',
            reason: 'repeated_call',
            key: check.key,
            tool: call.name,
            input: call.input,
            count: check.count,
            limit: repeats.limit,
          }
        : undefined;
      if (looped) state.completedSteps = step;
      const written = trace.on
        ? trace.emit({
            type: 'repeat-check',
            step,
            callId: call.id,
            tool: call.name,
            key: check.key,
            count: check.count,
            limit: repeats.limit,
            repeated: check.repeated,
            v: traceVersion,
            runId: '',
            seq: 0,
            at: 0,
          })
        : undefined;
      if (looped) return written ? written.then(() => looped) : looped;
      // A sink that went async: the rest of the batch is checked after it.
      if (written) return written.then(() => checkRepeats(state, step, proposed, index + 1));
    }
  }
  return checkDrift(state, step, proposed, drift);
}

function checkDrift(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
  drift: LoopState['drift'],
): Outcome | undefined | Promise<Outcome | undefined> {
  if (!drift) return undefined;
  for (const { call, canonical } of proposed)
    drift.recordFingerprint(
      call.input === undefined
        ? actionFingerprint(call.name, call.inputText)
        : actionFingerprintOfCanonical(call.name, canonical),
    );
  const verdict = drift.check();
  if (!verdict) return undefined;
  state.completedSteps = step;
  const looped: Outcome = {
    kind: 'looped',
    reason: 'no_progress',
    signal: verdict.signal,
    detail: verdict.detail,
  };
  const written = state.trace.emit({ type: 'progress-check', step, worldState: null, drifting: verdict });
  return written ? written.then(() => looped) : looped;
}
