import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ConfigurationError, ReinsError } from '../errors/reins-error.js';
import type { IdGenerator } from '../time/clock.js';
import { CompactTraceEncoder } from '../trace/compact-trace-encoder.js';
import type { TraceEvent } from '../trace/events.js';
import { jsonlNextSeq } from '../trace/jsonl-next-seq.js';
import { parseJsonlTrace } from '../trace/parse-jsonl-trace.js';
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
  /**
   * `plain` writes each event as its JSON object. `compact` writes a header line per run segment
   * (`v`, `runId` once) and then, for each event, only what changed since the last event of its type
   * (docs/trace-format.md): about a third of the bytes. Every reader takes both, mixed in one file.
   * @default 'plain'
   */
  encoding?: 'plain' | 'compact';
  /**
   * Names the compact encoding's headers (short: every line carries one; unique among the writers of
   * one file).
   * @default eight random base64url characters after `h`
   */
  generateId?: IdGenerator;
}

/**
 * Writes trace events to a file, one a line, appending by default (`mode`), as plain JSON objects or
 * compact lines (`encoding`). Memory stays flat however long the run: nothing is kept once written
 * (the compact encoding keeps the last event of each type of each open run). A resumed run asks the
 * file where its trace ended (`nextSeq`), so events written past the last checkpoint by a crashed
 * process never share a `seq` with the resumed ones.
 */
export class JsonlTraceSink implements TraceSink {
  readonly path: string;
  readonly mode: 'append' | 'truncate';
  readonly encoding: 'plain' | 'compact';
  readonly #fd: number;
  readonly #encoder: CompactTraceEncoder | undefined;
  readonly #bufferBytes: number;
  #pending: string[] = [];
  #pendingBytes = 0;
  #closed = false;

  constructor(path: string, options: JsonlTraceSinkOptions = {}) {
    this.path = path;
    this.mode = options.mode ?? 'append';
    if (this.mode !== 'append' && this.mode !== 'truncate')
      throw new ConfigurationError('mode', `must be 'append' or 'truncate', got ${String(this.mode)}`);
    this.encoding = options.encoding ?? 'plain';
    if (this.encoding !== 'plain' && this.encoding !== 'compact')
      throw new ConfigurationError('encoding', `must be 'plain' or 'compact', got ${String(this.encoding)}`);
    this.#encoder =
      this.encoding === 'compact'
        ? new CompactTraceEncoder(options.generateId ? { generateId: options.generateId } : {})
        : undefined;
    this.#fd = openSync(path, this.mode === 'append' ? 'a' : 'w');
    this.#bufferBytes = options.bufferBytes ?? 65_536;
  }

  write(event: TraceEvent): void {
    if (this.#closed) throw new ReinsError('sink_closed', `trace file ${this.path} is closed`);
    const line = this.#encoder ? this.#encoder.encode(event) : JSON.stringify(event) + '\n';
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= this.#bufferBytes || event.type === 'step-end' || event.type === 'run-end')
      this.#drain();
  }

  flush(): void {
    this.#drain();
  }

  /** The `seq` after the last event the file holds for `runId`, whichever encoding wrote it. */
  nextSeq(runId: string): number | undefined {
    this.#drain();
    return jsonlNextSeq(readFileSync(this.path, 'utf8'), runId);
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
 * Reads a JSONL trace, plain or compact (or both, appended by different writers). A last line cut off
 * by a crash is reported in `truncatedTail` and skipped; a bad line anywhere else is an error naming
 * its line number.
 */
export function readJsonlTrace(path: string): { events: TraceEvent[]; truncatedTail: boolean } {
  return parseJsonlTrace(readFileSync(path, 'utf8'), { source: path });
}
