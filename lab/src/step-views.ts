import { canonicalJson, type TraceEvent } from '../../src/index.js';

/** One step of a run as the stepper shows it: think → act → observe, and the counters after it. */
export interface StepView {
  step: number;
  toolsEnabled: boolean;
  thought: string;
  answer: string | undefined;
  acts: { call: string; observation: string; status: string; isError: boolean; tokens: number }[];
  /** The prefill the next call would send, after this step's results. */
  contextTokens: number;
  /** Billed tokens so far, after this step's call. */
  billedTokens: number;
}

/**
 * Groups a run's trace into steps. Every number comes from the trace the real loop wrote. A trace
 * still being written (the run viewer's live stream) groups the same way: a call with no result
 * yet is waiting for a verdict when the run asked for one, and not run otherwise.
 */
export function stepViews(trace: readonly TraceEvent[]): StepView[] {
  const views: StepView[] = [];
  const results = new Map<string, Extract<TraceEvent, { type: 'tool-result' }>>();
  const asked = new Set<string>();
  for (const event of trace) {
    if (event.type === 'tool-result') results.set(event.callId, event);
    if (event.type === 'approval-request') asked.add(event.request.callId);
  }
  const runEnd = trace.findLast((event) => event.type === 'run-end');
  for (const event of trace) {
    if (event.type === 'step-start') {
      views.push({
        step: event.step,
        toolsEnabled: event.toolsEnabled,
        thought: '',
        answer: undefined,
        acts: [],
        contextTokens: event.contextTokens,
        billedTokens: event.billedTokens,
      });
    }
    const view = views.at(-1);
    if (!view) continue;
    if (event.type === 'model-response') {
      const calls = event.response.content.filter((block) => block.type === 'tool_use');
      view.billedTokens = event.billedTokens;
      view.contextTokens = event.contextTokens;
      if (calls.length === 0) view.answer = event.thought;
      else view.thought = event.thought;
      for (const call of calls) {
        if (call.type !== 'tool_use') continue;
        const result = results.get(call.id);
        const waiting = !result && asked.has(call.id);
        view.acts.push({
          call: `${call.name}(${canonicalJson(call.input)})`,
          observation: result
            ? result.content
            : waiting
              ? 'waiting for a person’s verdict'
              : 'the run stopped before this call ran',
          status: result ? result.status : waiting ? 'awaiting approval' : 'not executed',
          isError: result ? result.isError : !waiting,
          tokens: result ? result.resultTokens : 0,
        });
      }
    }
    if (event.type === 'step-end') {
      view.contextTokens = event.contextTokens;
      view.billedTokens = event.billedTokens;
    }
  }
  const last = views.at(-1);
  if (last && runEnd?.type === 'run-end') {
    last.contextTokens = runEnd.contextTokens;
    last.billedTokens = runEnd.billedTokens;
  }
  return views;
}
