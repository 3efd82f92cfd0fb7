import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { RunEventStore, RunProgress } from './run-stores.js';

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
 *
 * With `writeBehind` (the log applies an append before any checkpoint commit sent after it: see
 * {@link RunEventStore.orderedBefore}) the appends at `run-start` and `step-end` are sent and not
 * awaited: the step's checkpoint follows them on the same ordered connection, so the order above
 * holds and a step costs one round trip. The next event waits for the append's reply (after a step,
 * the commit's reply has come by then: nothing is added), so no tool runs on an unconfirmed append
 * and a refused one ends the run there (`hard_error`, source `trace`); one append at most is in
 * flight. `run-end` and `flush` wait for every append; `drained` for every write.
 */
export class RunEventSink implements TraceSink {
  /** The log refuses gaps and duplicates, so where it ends is where a resumed run goes on. */
  readonly authoritativeSeq = true;
  readonly #log: RunEventStore;
  readonly #runId: string;
  readonly #onAppend: ((events: readonly TraceEvent[]) => void | Promise<void>) | undefined;
  readonly #writeBehind: boolean;
  readonly #progress: ((events: readonly TraceEvent[]) => RunProgress | undefined) | undefined;
  #buffer: TraceEvent[] = [];
  /** With `writeBehind`: the last append sent and not yet confirmed (kept, rejected, after a failure). */
  #inFlight: Promise<void> | undefined;
  /** Why a write to the log failed, once its reply is in. */
  #failed: unknown;
  /** Settles after the last write handed to the log (never rejects): what `drained` waits for. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: {
    log: RunEventStore;
    runId: string;
    /** Called with each appended batch, after the append (the executor updates the run's record). */
    onAppend?: (events: readonly TraceEvent[]) => void | Promise<void>;
    /** Send appends without waiting for their reply (only when the log is `orderedBefore` the checkpoint store). @default false */
    writeBehind?: boolean;
    /**
     * The record's figures a batch leaves, handed to the append with it (only when the log
     * `recordsProgress` in the run's registry: then no separate record update is made).
     */
    progress?: (events: readonly TraceEvent[]) => RunProgress | undefined;
  }) {
    this.#log = options.log;
    this.#runId = options.runId;
    this.#onAppend = options.onAppend;
    this.#writeBehind = options.writeBehind === true;
    this.#progress = options.progress;
  }

  write(event: TraceEvent): Promise<void> | undefined {
    // A refused append stops the run at its next event (the next step's start, before its tool runs).
    if (this.#failed !== undefined) throw this.#failed;
    // The event after an append waits for its reply: after a step's end that is the commit's reply,
    // which Redis sends after the append's (so no round trip is added); after run-start it is one
    // round trip per segment. No tool runs on an unconfirmed append.
    const inFlight = this.#inFlight;
    if (inFlight) return this.#track(inFlight.then(() => this.write(event)));
    this.#buffer.push(event);
    if (!flushOn.has(event.type)) return undefined;
    return this.#track(this.#writeBehind && event.type !== 'run-end' ? this.#sendBehind() : this.flush());
  }

  async flush(): Promise<void> {
    if (this.#inFlight) await this.#inFlight;
    if (this.#buffer.length > 0) await this.#send();
  }

  /**
   * Resolves once every write handed to the log has settled, failed or not (never rejects). The
   * loop stops waiting for its sinks when the run's signal aborts (a cancel, a drain, the wall
   * clock): the executor waits here before it ends the log, so `run-end` is never behind the end marker.
   */
  async drained(): Promise<void> {
    let tail: Promise<unknown> | undefined;
    while (tail !== this.#tail) {
      tail = this.#tail;
      await tail;
    }
    if (this.#inFlight) await this.#inFlight.catch(() => {});
  }

  /** The last append (or write waiting for one) ended with this error, if it did. */
  get failure(): unknown {
    return this.#failed;
  }

  /** Makes `written` the tail; its failure is kept for the next write (not an unhandled rejection). */
  #track(written: Promise<void> | undefined): Promise<void> | undefined {
    if (written)
      this.#tail = written.catch((error: unknown) => {
        this.#failed ??= error ?? new Error('trace append failed');
      });
    return written;
  }

  async nextSeq(runId: string): Promise<number | undefined> {
    await this.flush();
    return this.#log.nextSeq(runId);
  }

  /** Sends the buffer and returns nothing (`write` has waited for any append in flight). */
  #sendBehind(): undefined {
    const sent: Promise<void> = this.#send().then(() => {
      if (this.#inFlight === sent) this.#inFlight = undefined;
    });
    this.#inFlight = sent;
    this.#track(sent);
    return undefined;
  }

  /** Appends the buffer; the log's command is sent before this returns (its first await). */
  async #send(): Promise<void> {
    const batch = this.#buffer;
    this.#buffer = [];
    // Sent together: over one Redis connection the two writes share a round trip.
    const progress = this.#progress?.(batch);
    const appended = progress
      ? this.#log.append(this.#runId, batch, progress)
      : this.#log.append(this.#runId, batch);
    if (this.#onAppend) await Promise.all([appended, this.#onAppend(batch)]);
    else await appended;
  }
}
