import type { RunStartEvent, TraceEvent } from './events.js';

/**
 * Where trace events go. `write` may return a promise; the loop awaits it so a slow sink applies
 * back-pressure instead of buffering without bound. A sink that throws ends the run as `hard_error`
 * with source `trace`: a run you cannot reproduce is worth stopping. The other sinks still get that
 * run's `run-end` (those after the failed one in the list miss the event it failed on).
 */
export interface TraceSink {
  write(event: TraceEvent): void | Promise<void>;
  /** Called once when the run ends. */
  flush?(): void | Promise<void>;
  /**
   * The `seq` after the last event this sink holds for `runId`, if it keeps earlier segments (a file,
   * a database). A resumed run starts there, so events written after its last checkpoint by a
   * process that crashed are never given a duplicate `seq`.
   */
  nextSeq?(runId: string): number | undefined | Promise<number | undefined>;
  /**
   * `nextSeq` is the whole truth about the run's trace (a shared event log that refuses gaps): a
   * resumed run starts exactly there (at 0 when it answers `undefined`), even below the `seq` its
   * checkpoint recorded, whose events a crashed worker may have counted and never written.
   * @default false: a resumed run starts at the largest `seq` its state or any sink reports
   */
  readonly authoritativeSeq?: boolean;
  /**
   * Asked once a run's `run-start` has been written to this sink: `true` means the sink keeps nothing
   * of this run (a telemetry sink with no backend to send it to), and the loop writes it none of the
   * run's (or the resumed segment's) later events. `flush` is still called at the end.
   * @default every event is written
   */
  ignores?(runStart: RunStartEvent): boolean;
}

/** Keeps events in an array. */
export class MemoryTraceSink implements TraceSink {
  readonly events: TraceEvent[] = [];
  write(event: TraceEvent): void {
    this.events.push(event);
  }

  nextSeq(runId: string): number | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const event = this.events[i] as TraceEvent;
      if (event.runId === runId) return event.seq + 1;
    }
    return undefined;
  }
}

/** A sink that keeps every event in memory; read them from `.events`. */
export function memoryTraceSink(): MemoryTraceSink {
  return new MemoryTraceSink();
}
