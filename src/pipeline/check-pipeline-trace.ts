import { canonicalJson } from '../controls/canonical-json.js';
import type { TraceEvent } from '../trace/events.js';
import type { PipelineOutcome } from './pipeline-outcome.js';

/** What {@link checkPipelineTrace} found. */
export interface PipelineTraceCheck {
  runId: string;
  /** True when the trace keeps the contract and its recorded outcome is what its stages say. */
  matches: boolean;
  /** The outcome the stages' events lead to. */
  outcome: PipelineOutcome<unknown> | undefined;
  /** The outcome the `pipeline-end` event recorded. */
  recorded: PipelineOutcome<unknown> | undefined;
  segments: number;
  problems: string[];
}

/**
 * Replays a pipeline's trace without its code: `seq` runs on without a gap or a repeat across
 * segments (each `pipeline-start` opens one), every stage that started ended, and in each segment
 * the outcome recorded by `pipeline-end` is what the root stage's end says (its output, or its
 * failure). The stages themselves are user code and are not re-run; sub-agents' runs in the same
 * file replay as loop runs. `reins trace replay` calls this for pipeline runs.
 */
export function checkPipelineTrace(events: readonly TraceEvent[], runId: string): PipelineTraceCheck {
  const own = events.filter((event) => event.runId === runId);
  const problems: string[] = [];
  let outcome: PipelineOutcome<unknown> | undefined;
  let recorded: PipelineOutcome<unknown> | undefined;
  let segments = 0;
  let root: string | undefined;
  let open = new Map<string, number>();
  let previous: number | undefined;
  const closeSegment = () => {
    for (const [stage, count] of open)
      if (count > 0) problems.push(`segment ${segments - 1}: stage ${stage} started and never ended`);
    open = new Map();
  };
  for (const event of own) {
    if (
      previous === undefined ? event.seq !== 0 && event.type !== 'pipeline-start' : event.seq !== previous + 1
    )
      problems.push(
        previous === undefined
          ? `starts at seq ${event.seq}`
          : `seq ${event.seq} follows ${previous}: a gap or a repeat`,
      );
    previous = event.seq;
    switch (event.type) {
      case 'pipeline-start':
        if (segments > 0) closeSegment();
        segments++;
        root = event.pipeline;
        outcome = undefined;
        recorded = undefined;
        break;
      case 'stage-start':
        open.set(event.stage, (open.get(event.stage) ?? 0) + 1);
        break;
      case 'stage-end':
        if (event.status !== 'restored') {
          const count = open.get(event.stage) ?? 0;
          if (count === 0) problems.push(`stage ${event.stage} ended without starting`);
          else open.set(event.stage, count - 1);
        }
        if (event.stage === root)
          outcome =
            event.status === 'failed' && event.failure
              ? event.failure
              : { kind: 'completed', output: event.output };
        break;
      case 'pipeline-end':
        recorded = event.outcome;
        // A failure no stage recorded (a stale store, a sink that threw) stands as recorded.
        if (outcome === undefined && event.outcome.kind !== 'completed') outcome = event.outcome;
        break;
      default:
        break;
    }
  }
  closeSegment();
  if (segments === 0) problems.push(`no pipeline-start event for run ${runId}`);
  if (recorded === undefined && segments > 0) problems.push('the last segment has no pipeline-end (cut off)');
  const same =
    outcome !== undefined && recorded !== undefined && canonicalJson(outcome) === canonicalJson(recorded);
  if (outcome !== undefined && recorded !== undefined && !same)
    problems.push(`recorded ${recorded.kind} but the stages lead to ${outcome.kind}`);
  return { runId, matches: problems.length === 0 && same, outcome, recorded, segments, problems };
}
