import pc from 'picocolors';
import { describeOutcome } from '../loop/outcome.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { checkPipelineTrace } from '../pipeline/check-pipeline-trace.js';
import { describePipelineOutcome } from '../pipeline/pipeline-outcome.js';
import { traceVersion } from '../trace/events.js';
import { renderTrace } from '../trace/render.js';
import { type ReplayResult, replayTrace } from '../trace/replay.js';
import { splitTrace } from '../trace/split-trace.js';
import { cliStyle } from './demo.js';
import { printJson, sanitize, sanitizeDeep } from './sanitize.js';

/**
 * `reins trace show FILE`: exit 0 once rendered, 2 for a file that holds no usable trace (empty,
 * not trace events, or a trace version this reins does not read). Every string from the trace is
 * sanitized before it is rendered: tool output is untrusted and may hold terminal escapes.
 */
export function traceShow(file: string): number {
  const { events, truncatedTail } = readJsonlTrace(file);
  const problem = unusableTrace(events, truncatedTail);
  if (problem) {
    console.error(`reins trace show: ${sanitize(file)}: ${problem}`);
    return 2;
  }
  let rendered: string;
  try {
    rendered = renderTrace(sanitizeDeep(events), { style: cliStyle });
  } catch (error) {
    console.error(
      `reins trace show: ${sanitize(file)}: a trace event is malformed (${sanitize(error instanceof Error ? error.message : String(error))})`,
    );
    return 2;
  }
  console.log(rendered);
  if (truncatedTail)
    console.log(
      pc.yellow('\nthe last line of the trace was cut off (the process stopped mid-write); it was skipped'),
    );
  return 0;
}

/**
 * Why `events` cannot be shown, or undefined. An unknown event *type* is skipped (newer writers add
 * events); an unknown *version* means the shapes themselves changed, so it is refused.
 */
export function unusableTrace(events: readonly unknown[], truncatedTail: boolean): string | undefined {
  if (events.length === 0)
    return truncatedTail
      ? 'no complete trace event (the only line was cut off mid-write)'
      : 'no trace events (the file is empty)';
  for (const [index, event] of events.entries()) {
    if (typeof event !== 'object' || event === null || Array.isArray(event))
      return `event ${index + 1} is not a trace event (not a JSON object)`;
    const { v, type } = event as { v?: unknown; type?: unknown };
    if (v === undefined) return `event ${index + 1} has no trace version ("v"); not a reins trace`;
    if (v !== traceVersion)
      return `unsupported trace version ${sanitize(JSON.stringify(v) ?? String(v))} (event ${index + 1}); this reins reads version ${traceVersion}`;
    if (typeof type !== 'string') return `event ${index + 1} has no event type; not a reins trace`;
  }
  return undefined;
}

/**
 * `reins trace replay FILE`: re-runs every run the file holds (by run, then segment) from recorded
 * responses and results. Exit 0 when every run reproduces.
 */
export async function traceReplay(file: string, json: boolean): Promise<number> {
  const { events } = readJsonlTrace(file);
  // Pipelines replay by their own contract (their stages are user code); their sub-agents are runs.
  const pipelines = [
    ...new Set(events.filter((event) => event.type === 'pipeline-start').map((event) => event.runId)),
  ];
  const runs = splitTrace(events).filter((run) => !pipelines.includes(run.runId));
  const checks = pipelines.map((runId) => checkPipelineTrace(events, runId));
  const replays: { runId: string; replay: ReplayResult }[] = [];
  for (const run of runs)
    replays.push({ runId: run.runId, replay: await replayTrace(events, { runId: run.runId }) });
  if (replays.length === 0 && checks.length === 0) await replayTrace(events);
  const all = replays.every(({ replay }) => replay.matches) && checks.every((check) => check.matches);
  if (json) {
    const summary = ({ runId, replay }: (typeof replays)[number]) => ({
      runId,
      matches: replay.matches,
      outcome: replay.outcome,
      recorded: replay.recorded ?? null,
      divergences: replay.divergences,
      problems: replay.problems,
      segments: replay.segments.length,
    });
    const [only] = replays;
    if (checks.length > 0) printJson({ matches: all, runs: replays.map(summary), pipelines: checks });
    else
      printJson(replays.length === 1 && only ? summary(only) : { matches: all, runs: replays.map(summary) });
    return all ? 0 : 1;
  }
  for (const check of checks) {
    console.log(pc.bold(`\n━━ pipeline ${sanitize(check.runId)} ━━`));
    console.log(
      renderTrace(sanitizeDeep(events.filter((event) => event.runId === check.runId)), { style: cliStyle }),
    );
    console.log('');
    console.log(
      `recorded ${check.recorded ? sanitize(describePipelineOutcome(check.recorded)) : '(no pipeline-end event)'}`,
    );
    console.log(
      `replayed ${check.outcome ? sanitize(describePipelineOutcome(check.outcome)) : '(no outcome)'}`,
    );
    for (const problem of check.problems) console.log(pc.red(`trace problem: ${sanitize(problem)}`));
    console.log(
      check.matches
        ? pc.green(`reproduced: ${check.segments} segment(s); the stages lead to the recorded outcome`)
        : pc.red('NOT reproduced'),
    );
  }
  for (const { runId, replay } of replays) {
    if (replays.length > 1) console.log(pc.bold(`\n━━ run ${sanitize(runId)} ━━`));
    console.log(renderTrace(sanitizeDeep(replay.trace), { style: cliStyle }));
    console.log('');
    console.log(
      `recorded ${replay.recorded ? sanitize(describeOutcome(replay.recorded)) : '(no run-end event)'}`,
    );
    console.log(`replayed ${sanitize(describeOutcome(replay.outcome))}`);
    for (const divergence of replay.divergences) console.log(pc.yellow(`note: ${sanitize(divergence)}`));
    for (const problem of replay.problems) console.log(pc.red(`trace problem: ${sanitize(problem)}`));
    console.log(
      replay.matches
        ? pc.green('reproduced: the replayed outcome matches the recorded one')
        : pc.red('NOT reproduced'),
    );
  }
  return all ? 0 : 1;
}
