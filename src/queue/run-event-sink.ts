import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { RunEventStore } from './run-stores.js';

/** Events after which the buffer is written: the first one (a follower sees the run start), each step's end, the run's end. */
const flushOn = new Set<TraceEvent['type']>(['run-start', 'step-end', 'run-end']);

/**
 * A trace sink that writes a run's events to a {@link RunEventStore} a step at a time: events are
 * buffered and appended in one call (one round trip to Redis) at `run-start`, `step-end` and
 * `run-end`. The loop awaits those writes, and writes a step's checkpoint after its `step-end`, so
 * a step's events are in the log before its checkpoint is. `nextSeq` asks the log and the sink is
 * `authoritativeSeq`, so a resumed run continues exactly after whatever a crashed worker appended
 * (more than its checkpoint counted, or less: the events held until a segment's claim are counted
 * in the claim's checkpoint before they are written).
 */
export class RunEventSink implements TraceSink {
  /** The log refuses gaps and duplicates, so where it ends is where a resumed run goes on. */
  readonly authoritativeSeq = true;
  readonly #log: RunEventStore;
  readonly #runId: string;
  readonly #onAppend: ((events: readonly TraceEvent[]) => void | Promise<void>) | undefined;
  #buffer: TraceEvent[] = [];

  constructor(options: {
    log: RunEventStore;
    runId: string;
    /** Called with each appended batch, after the append (the executor updates the run's record). */
    onAppend?: (events: readonly TraceEvent[]) => void | Promise<void>;
  }) {
    this.#log = options.log;
    this.#runId = options.runId;
    this.#onAppend = options.onAppend;
  }

  write(event: TraceEvent): Promise<void> | undefined {
    this.#buffer.push(event);
    return flushOn.has(event.type) ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.#buffer.length === 0) return;
    const batch = this.#buffer;
    this.#buffer = [];
    // Sent together: over one Redis connection the two writes share a round trip.
    const appended = this.#log.append(this.#runId, batch);
    if (this.#onAppend) await Promise.all([appended, this.#onAppend(batch)]);
    else await appended;
  }

  async nextSeq(runId: string): Promise<number | undefined> {
    await this.flush();
    return this.#log.nextSeq(runId);
  }
}
