import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';

export interface JsonlTraceSinkOptions {
  /**
   * Bytes buffered before a write. The buffer is also written at every step end and at run end, so a
   * crash loses at most the step in progress.
   * @default 65_536
   */
  bufferBytes?: number;
  /**
   * `append` keeps what the file holds (one file for many runs, or a run and its resumes: replay
   * groups them by run and segment); `truncate` empties it first.
   * @default 'append'
   */
  mode?: 'append' | 'truncate';
}

/**
 * Writes trace events to a file, one JSON object a line, appending by default (`mode`). Memory stays
 * flat however long the run: nothing is kept once written. A resumed run asks the file where its
 * trace ended (`nextSeq`), so events written past the last checkpoint by a crashed process never
 * share a `seq` with the resumed ones.
 */
export class JsonlTraceSink implements TraceSink {
  readonly path: string;
  readonly mode: 'append' | 'truncate';
  readonly #fd: number;
  readonly #bufferBytes: number;
  #pending: string[] = [];
  #pendingBytes = 0;
  #closed = false;

  constructor(path: string, options: JsonlTraceSinkOptions = {}) {
    this.path = path;
    this.mode = options.mode ?? 'append';
    if (this.mode !== 'append' && this.mode !== 'truncate')
      throw new ConfigurationError('mode', `must be 'append' or 'truncate', got ${String(this.mode)}`);
    this.#fd = openSync(path, this.mode === 'append' ? 'a' : 'w');
    this.#bufferBytes = options.bufferBytes ?? 65_536;
  }

  write(event: TraceEvent): void {
    if (this.#closed) throw new ReinsError('sink_closed', `trace file ${this.path} is closed`);
    const line = JSON.stringify(event) + '\n';
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= this.#bufferBytes || event.type === 'step-end' || event.type === 'run-end')
      this.#drain();
  }

  flush(): void {
    this.#drain();
  }

  /** The `seq` after the last event the file holds for `runId`. */
  nextSeq(runId: string): number | undefined {
    this.#drain();
    let next: number | undefined;
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      if (!line.includes(runId)) continue;
      try {
        const event = JSON.parse(line) as { runId?: unknown; seq?: unknown };
        if (
          event.runId === runId &&
          typeof event.seq === 'number' &&
          (next === undefined || event.seq >= next)
        )
          next = event.seq + 1;
      } catch {
        // A line cut off by a crash holds no event.
      }
    }
    return next;
  }

  /** Writes what is buffered and closes the file. */
  close(): void {
    if (this.#closed) return;
    this.#drain();
    closeSync(this.#fd);
    this.#closed = true;
  }

  #drain(): void {
    if (this.#pending.length === 0) return;
    writeSync(this.#fd, this.#pending.join(''));
    this.#pending = [];
    this.#pendingBytes = 0;
  }
}

/** Opens a JSONL trace file (appending unless `mode: 'truncate'`). */
export function jsonlTraceSink(path: string, options?: JsonlTraceSinkOptions): JsonlTraceSink {
  return new JsonlTraceSink(path, options);
}

/**
 * Reads a JSONL trace. A last line cut off by a crash is reported in `truncatedTail` and skipped;
 * a bad line anywhere else is an error naming its line number.
 */
export function readJsonlTrace(path: string): { events: TraceEvent[]; truncatedTail: boolean } {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const events: TraceEvent[] = [];
  let truncatedTail = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    try {
      events.push(JSON.parse(line) as TraceEvent);
    } catch {
      const isLast = lines.slice(i + 1).every((rest) => rest.trim() === '');
      if (isLast && !text.endsWith('\n')) {
        truncatedTail = true;
        continue;
      }
      throw new ReinsError('invalid_trace', `${path}:${i + 1}: not a JSON trace event`);
    }
  }
  return { events, truncatedTail };
}
