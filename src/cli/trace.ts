import pc from 'picocolors';
import { describeOutcome } from '../loop/outcome.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { renderTrace } from '../trace/render.js';
import { replayTrace } from '../trace/replay.js';
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

/** `reins trace replay FILE`: re-runs the loop from recorded responses and results. Exit 0 when the outcome reproduces. */
export async function traceReplay(file: string, json: boolean): Promise<number> {
  const { events } = readJsonlTrace(file);
  const replay = await replayTrace(events);
  if (json) {
    console.log(
      JSON.stringify(
        {
          matches: replay.matches,
          outcome: replay.outcome,
          recorded: replay.recorded ?? null,
          divergences: replay.divergences,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(renderTrace(replay.trace, { style: cliStyle }));
    console.log('');
    console.log(`recorded ${replay.recorded ? describeOutcome(replay.recorded) : '(no run-end event)'}`);
    console.log(`replayed ${describeOutcome(replay.outcome)}`);
    for (const divergence of replay.divergences) console.log(pc.yellow(`note: ${divergence}`));
    console.log(
      replay.matches
        ? pc.green('reproduced: the replayed outcome matches the recorded one')
        : pc.red('NOT reproduced'),
    );
  }
  return replay.matches ? 0 : 1;
}
