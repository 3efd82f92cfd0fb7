import pc from 'picocolors';
import { describeOutcome } from '../loop/outcome.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { renderTrace } from '../trace/render.js';
import { type ReplayResult, replayTrace } from '../trace/replay.js';
import { splitTrace } from '../trace/split-trace.js';
import { cliStyle } from './demo.js';

/** `reins trace show FILE`. */
export function traceShow(file: string): number {
  const { events, truncatedTail } = readJsonlTrace(file);
  console.log(renderTrace(events, { style: cliStyle }));
  if (truncatedTail)
    console.log(
      pc.yellow('\nthe last line of the trace was cut off (the process stopped mid-write); it was skipped'),
    );
  return 0;
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
    console.log(
      JSON.stringify(
        replays.length === 1 && only ? summary(only) : { matches: all, runs: replays.map(summary) },
        null,
        2,
      ),
    );
    return all ? 0 : 1;
  }
  for (const { runId, replay } of replays) {
    if (replays.length > 1) console.log(pc.bold(`\n━━ run ${runId} ━━`));
    console.log(renderTrace(replay.trace, { style: cliStyle }));
    console.log('');
    console.log(`recorded ${replay.recorded ? describeOutcome(replay.recorded) : '(no run-end event)'}`);
    console.log(`replayed ${describeOutcome(replay.outcome)}`);
    for (const divergence of replay.divergences) console.log(pc.yellow(`note: ${divergence}`));
    for (const problem of replay.problems) console.log(pc.red(`trace problem: ${problem}`));
    console.log(
      replay.matches
        ? pc.green('reproduced: the replayed outcome matches the recorded one')
        : pc.red('NOT reproduced'),
    );
  }
  return all ? 0 : 1;
}
