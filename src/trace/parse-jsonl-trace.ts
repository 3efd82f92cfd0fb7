import { ReinsError } from '../errors/reins-error.js';
import { CompactTraceDecoder } from './compact-trace-decoder.js';
import type { TraceEvent } from './events.js';

export interface ParseJsonlTraceOptions {
  /** Names the text in errors (`trace.jsonl:12: …`). @default 'trace' */
  source?: string;
}

/**
 * Reads the text of a JSONL trace, plain or compact (docs/trace-format.md) or both mixed, as writers
 * appended it. A last line cut off by a crash is reported in `truncatedTail` and skipped; a bad line
 * anywhere else is a `ReinsError` (`invalid_trace`) naming its line number.
 *
 * @example
 * const { events, truncatedTail } = parseJsonlTrace(await file.text(), { source: file.name });
 * const runs = splitTrace(events);
 */
export function parseJsonlTrace(
  text: string,
  options: ParseJsonlTraceOptions = {},
): { events: TraceEvent[]; truncatedTail: boolean } {
  const source = options.source ?? 'trace';
  const lines = text.split('\n');
  const decoder = new CompactTraceDecoder();
  const events: TraceEvent[] = [];
  let truncatedTail = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      const isLast = lines.slice(i + 1).every((rest) => rest.trim() === '');
      if (isLast && !text.endsWith('\n')) {
        truncatedTail = true;
        continue;
      }
      throw new ReinsError('invalid_trace', `${source}:${i + 1}: not a JSON trace event`);
    }
    let event: TraceEvent | undefined;
    try {
      event = decoder.decode(parsed);
    } catch (error) {
      throw new ReinsError('invalid_trace', `${source}:${i + 1}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (event !== undefined) events.push(event);
  }
  return { events, truncatedTail };
}
