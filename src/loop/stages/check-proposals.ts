import { actionFingerprint, actionFingerprintOfCanonical } from '../../controls/drift-monitor.js';
import type { LoopState } from '../loop-state.js';
import type { Outcome } from '../outcome.js';
import type { ProposedCall } from './proposed-call.js';

/**
 * Check the proposed batch before anything in it runs: the repeat key of every call (`looped`
 * `repeated_call` at the limit), then the drift window (`looped` `no_progress`).
 */
export async function checkProposals(
  state: LoopState,
  step: number,
  proposed: readonly ProposedCall[],
): Promise<Outcome | undefined> {
  const { repeats, drift, trace } = state;
  if (repeats) {
    for (const { call, canonical } of proposed) {
      const check = repeats.checkKey(`${call.name}:${canonical}`);
      if (trace.on)
        await trace.emit({
          type: 'repeat-check',
          step,
          callId: call.id,
          tool: call.name,
          key: check.key,
          count: check.count,
          limit: repeats.limit,
          repeated: check.repeated,
        });
      if (check.repeated) {
        state.completedSteps = step;
        return {
          kind: 'looped',
          reason: 'repeated_call',
          key: check.key,
          tool: call.name,
          input: call.input,
          count: check.count,
          limit: repeats.limit,
        };
      }
    }
  }
  if (!drift) return undefined;
  for (const { call, canonical } of proposed)
    drift.recordFingerprint(
      call.input === undefined
        ? actionFingerprint(call.name, call.inputText)
        : actionFingerprintOfCanonical(call.name, canonical),
    );
  const verdict = drift.check();
  if (!verdict) return undefined;
  await trace.emit({ type: 'progress-check', step, worldState: null, drifting: verdict });
  state.completedSteps = step;
  return { kind: 'looped', reason: 'no_progress', signal: verdict.signal, detail: verdict.detail };
}
