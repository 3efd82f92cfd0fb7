import type { RunStartEvent, TraceEvent } from './events.js';

/** One continuation of a run: its run-start and the events up to the next one. */
export interface TraceSegment {
  segment: number;
  start: RunStartEvent;
  events: TraceEvent[];
  /** The segment recorded a run-end: it finished (a segment without one was cut off by a crash). */
  ended: boolean;
}

/** One run's trace, in segments. */
export interface RunTrace {
  runId: string;
  segments: TraceSegment[];
  /** Where the events break the trace contract: a `seq` repeated, skipped or out of order. */
  problems: string[];
}

/**
 * Groups a trace (one file may hold many runs, appended) by run, then by segment: each run-start
 * opens a segment, and `seq` must run on without a gap or a repeat across them.
 */
export function splitTrace(events: readonly TraceEvent[]): RunTrace[] {
  const runs = new Map<string, RunTrace>();
  const last = new Map<string, number>();
  for (const event of events) {
    let run = runs.get(event.runId);
    if (!run) {
      run = { runId: event.runId, segments: [], problems: [] };
      runs.set(event.runId, run);
    }
    const previous = last.get(event.runId);
    if (previous === undefined ? event.seq !== 0 && event.type !== 'run-start' : event.seq !== previous + 1) {
      const what =
        previous === undefined
          ? `starts at seq ${event.seq}`
          : event.seq <= previous
            ? `repeats or reorders seq ${event.seq} after ${previous}`
            : `skips from seq ${previous} to ${event.seq}`;
      run.problems.push(`run ${event.runId} ${what}`);
    }
    last.set(event.runId, event.seq);
    if (event.type === 'run-start') {
      run.segments.push({
        segment: event.segment ?? run.segments.length,
        start: event,
        events: [event],
        ended: false,
      });
      continue;
    }
    const segment = run.segments[run.segments.length - 1];
    if (!segment) {
      run.problems.push(`run ${event.runId} has a ${event.type} event before any run-start`);
      continue;
    }
    segment.events.push(event);
    if (event.type === 'run-end') segment.ended = true;
  }
  return [...runs.values()];
}
