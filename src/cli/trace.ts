import pc from 'picocolors';
import { describeOutcome } from '../loop/outcome.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
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
  const runs = splitTrace(events);
  const replays: { runId: string; replay: ReplayResult }[] = [];
  for (const run of runs)
    replays.push({ runId: run.runId, replay: await replayTrace(events, { runId: run.runId }) });
  if (replays.length === 0) await replayTrace(events);
  const all = replays.every(({ replay }) => replay.matches);
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
    printJson(replays.length === 1 && only ? summary(only) : { matches: all, runs: replays.map(summary) });
    return all ? 0 : 1;
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
