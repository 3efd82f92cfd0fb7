import type { TraceEvent } from './events.js';

/**
 * Where trace events go. `write` may return a promise; the loop awaits it so a slow sink applies
 * back-pressure instead of buffering without bound. A sink that throws ends the run as `hard_error`
 * with source `trace`: a run you cannot reproduce is worth stopping.
 */
export interface TraceSink {
  write(event: TraceEvent): void | Promise<void>;
  /** Called once when the run ends. */
  flush?(): void | Promise<void>;
}

/** Keeps events in an array. */
export class MemoryTraceSink implements TraceSink {
  readonly events: TraceEvent[] = [];
  write(event: TraceEvent): void {
    this.events.push(event);
  }
}

/** A sink that keeps every event in memory; read them from `.events`. */
export function memoryTraceSink(): MemoryTraceSink {
  return new MemoryTraceSink();
}
