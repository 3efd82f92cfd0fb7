import { canonicalJson } from '../controls/canonical-json.js';
import type { Outcome } from '../loop/outcome.js';
import type { TraceEvent } from '../trace/events.js';
import { malformedStatuses, unproductiveStatuses } from './call-statuses.js';
import type { TrialTrajectory } from './eval-types.js';

/**
 * A trial's trajectory from its trace: how many calls the model asked for, how many were malformed
 * or named a tool that does not exist, how many repeated an earlier `(tool, input)`, and how many
 * steps did nothing useful (every call failed, was refused or repeated an earlier one).
 */
export function trajectoryOf(trace: readonly TraceEvent[], outcome: Outcome, steps: number): TrialTrajectory {
  // Made only when a call repeats (most trials have none): a Set per trial is not free.
  let repeatedIds: Set<string> | undefined;
  let toolCalls = 0;
  let repeatedCalls = 0;
  let checked = false;
  let invalidToolCalls = 0;
  let unknownToolCalls = 0;
  // Steps are small whole numbers in order: a step is wasted when it had calls and none was useful.
  // Counted here as if no call repeated; a trial with a repeat counts again below, once its
  // repeated calls are known. One pass over the trace for most trials, and indexed loops: this
  // runs per trial, much of it before the JIT has optimized it, where an iterator is not free.
  let wastedSteps = 0;
  let currentStep = -1;
  let currentUseful = false;
  for (let i = 0; i < trace.length; i++) {
    const event = trace[i] as TraceEvent;
    if (event.type === 'model-response') {
      const content = event.response.content;
      for (let j = 0; j < content.length; j++) if (content[j]?.type === 'tool_use') toolCalls++;
    } else if (event.type === 'repeat-check') {
      // The loop's repeat detector already keyed every call by (tool, canonical input): read its
      // `repeat-check` events when the run had it on, and key the calls below only when it was off.
      checked = true;
      if (event.count > 1) {
        repeatedCalls++;
        repeatedIds ??= new Set();
        repeatedIds.add(event.callId);
      }
    } else if (event.type === 'tool-result') {
      if (event.step !== currentStep) {
        if (currentStep !== -1 && !currentUseful) wastedSteps++;
        currentStep = event.step;
        currentUseful = false;
      }
      // An output that failed the tool's checks is the tool's failure, not a malformed call.
      if (malformedStatuses.has(event.status) || event.status === 'unknown_tool') invalidToolCalls++;
      if (event.status === 'unknown_tool') unknownToolCalls++;
      if (!unproductiveStatuses.has(event.status)) currentUseful = true;
    }
  }
  if (currentStep !== -1 && !currentUseful) wastedSteps++;
  if (!checked && toolCalls > 0) {
    const seen = new Set<string>();
    for (const event of trace) {
      if (event.type !== 'model-response') continue;
      for (const block of event.response.content) {
        if (block.type !== 'tool_use') continue;
        let key: string;
        try {
          key = `${block.name}\u0000${canonicalJson(block.input)}`;
        } catch {
          key = `${block.name}\u0000${String(block.id)}`;
        }
        if (seen.has(key)) {
          repeatedCalls++;
          repeatedIds ??= new Set();
          repeatedIds.add(block.id);
        } else seen.add(key);
      }
    }
  }
  if (repeatedIds) wastedSteps = wastedStepsOf(trace, repeatedIds);
  return {
    steps,
    toolCalls,
    invalidToolCalls,
    unknownToolCalls,
    repeatedCalls,
    wastedSteps,
    terminal: outcome.kind,
  };
}

/** Steps whose calls were all unproductive or repeats of an earlier call. */
function wastedStepsOf(trace: readonly TraceEvent[], repeatedIds: ReadonlySet<string>): number {
  let wastedSteps = 0;
  let currentStep = -1;
  let currentUseful = false;
  for (const event of trace) {
    if (event.type !== 'tool-result') continue;
    if (event.step !== currentStep) {
      if (currentStep !== -1 && !currentUseful) wastedSteps++;
      currentStep = event.step;
      currentUseful = false;
    }
    if (!unproductiveStatuses.has(event.status) && !repeatedIds.has(event.callId)) currentUseful = true;
  }
  if (currentStep !== -1 && !currentUseful) wastedSteps++;
  return wastedSteps;
}
