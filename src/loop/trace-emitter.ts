import { errorInfo } from '../errors/error-info.js';
import { type RunStartEvent, type TraceEvent, type TraceEventBody, traceVersion } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import { guard } from './boundary.js';
import type { LoopSetup } from './loop-setup.js';
import { LoopStop } from './loop-stop.js';
import type { TraceCursor } from './run-state.js';

/**
 * Stamps events with version, run id, `seq` and time and hands them to the sinks, inside the error
 * boundary. `seq` continues across resumes: a resumed run opens a new segment at the next `seq`
 * its state (or, after a crash, its sinks) recorded, so a run's trace has no gap and no duplicate.
 */
export class TraceEmitter {
  /** False when there is no sink: stages skip building events nobody reads. */
  readonly on: boolean;
  readonly segment: number;
  #seq: number;
  #broken = false;
  /** The sink whose write failed and broke the run's trace: the others still get the run's end. */
  #failed: TraceSink | undefined;
  /** Where events are written: the run's sinks less those that ignore it (see `TraceSink.ignores`). */
  #sinks: readonly TraceSink[];
  /** Every sink of the run: flushed at its end and asked where its trace ended. */
  readonly #all: readonly TraceSink[];
  readonly #runId: string;
  readonly #setup: LoopSetup;
  #signal: AbortSignal | undefined;
  /** {@link emit} as a function value, made once (the dispatcher takes one per call). */
  readonly write = (body: TraceEventBody): Promise<void> | undefined => this.emit(body);
  /** Events held until the run is claimed: a refused resume must leave no trace of itself. */
  #held: TraceEvent[] | undefined;

  constructor(setup: LoopSetup) {
    const cursor = setup.state.trace;
    this.#setup = setup;
    this.#sinks = setup.sinks;
    this.#all = setup.sinks;
    this.#runId = setup.runId;
    this.on = setup.sinks.length > 0;
    this.segment = setup.resumed ? (cursor?.segment ?? 0) + 1 : 0;
    this.#seq = setup.resumed ? (cursor?.nextSeq ?? 0) : 0;
    this.#held = setup.exactlyOnce && this.on ? [] : undefined;
  }

  /** Writes the held events: the run is claimed (or nothing it did needs a claim). */
  async release(): Promise<void> {
    const held = this.#held;
    this.#held = undefined;
    if (!held) return;
    for (const event of held) {
      const written = this.#write(event, 0);
      if (written) await written;
    }
  }

  /** Forgets the held events and their `seq`s: the resume was refused. */
  drop(): void {
    if (!this.#held) return;
    this.#seq -= this.#held.length;
    this.#held = undefined;
    this.#broken = true;
  }

  /** Where the trace goes on from here, for the next checkpoint. */
  cursor(): TraceCursor {
    return { segment: this.segment, nextSeq: this.#seq };
  }

  /** Asks sinks that remember earlier segments where this run's trace ended (after a crash, past the checkpoint). */
  async open(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    if (!this.#setup.resumed) return;
    for (const sink of this.#all) {
      if (typeof sink.nextSeq !== 'function') continue;
      const next = await guard('trace', () => sink.nextSeq?.(this.#runId), signal);
      if (!next.ok) throw LoopStop.from(next, 'before-call');
      const known = typeof next.value === 'number' && Number.isInteger(next.value) && next.value >= 0;
      if (sink.authoritativeSeq === true) {
        // The log is the truth: events the checkpoint counted but a crash kept from it never existed.
        this.#seq = known ? (next.value as number) : 0;
        return;
      }
      if (known && (next.value as number) > this.#seq) this.#seq = next.value as number;
    }
  }

  /**
   * Writes one event to every sink; a failing sink ends the run `hard_error` (source `trace`).
   * Returns a promise only when a sink's `write` did (await it then): with synchronous sinks an event
   * costs no promise and no microtask. The body is stamped in place (version, run id, `seq`, time), not
   * copied: callers pass a fresh object literal and never touch it again. Events written every step
   * end their literal with the stamp's slots (`v: traceVersion, runId: '', seq: 0, at: 0`), which
   * this overwrites: adding four fields to a finished literal makes V8 grow the object's
   * out-of-object property store twice, about 100 bytes an event.
   */
  emit(body: TraceEventBody | TraceEvent, at: number = this.#setup.clock.now()): Promise<void> | undefined {
    if (!this.on || this.#broken) return undefined;
    const event = this.#stamp(body, at);
    if (this.#held) {
      this.#held.push(event);
      return undefined;
    }
    return this.#write(event, 0);
  }

  /** Stamps the body in place as the run's next event: version, run id, `seq`, time. */
  #stamp(body: TraceEventBody | TraceEvent, at: number): TraceEvent {
    const event = body as TraceEvent;
    event.v = traceVersion;
    event.runId = this.#runId;
    event.seq = this.#seq++;
    event.at = at;
    return event;
  }

  /** Writes to the sinks from `from` on; goes async only at the first sink whose write returned a thenable. */
  #write(event: TraceEvent, from: number): Promise<void> | undefined {
    if (this.#broken) return undefined;
    const sinks = this.#sinks;
    for (let i = from; i < sinks.length; i++) {
      const sink = sinks[i] as TraceSink;
      let written: void | Promise<void>;
      try {
        written = sink.write(event);
      } catch (thrown) {
        this.#broken = true;
        this.#failed = sink;
        throw LoopStop.from(
          { ok: false, stopped: false, source: 'trace', error: errorInfo(thrown) },
          'during-call',
        );
      }
      if (written !== undefined && written !== null) return this.#settle(event, written, i + 1);
    }
    if (event.type === 'run-start') this.#dropIgnoring(event);
    return undefined;
  }

  /** Every sink has the run's start: those that ignore the run get none of its later events. */
  #dropIgnoring(event: RunStartEvent): void {
    let kept: TraceSink[] | undefined;
    const sinks = this.#sinks;
    for (let i = 0; i < sinks.length; i++) {
      const sink = sinks[i] as TraceSink;
      let ignores = false;
      try {
        ignores = typeof sink.ignores === 'function' && sink.ignores(event) === true;
      } catch {
        // A sink that cannot say keeps getting every event.
      }
      if (ignores) kept ??= sinks.slice(0, i);
      else kept?.push(sink);
    }
    if (kept) this.#sinks = kept;
    const wrapping = this.#setup.dispatchOptions;
    const wrap = wrapping?.wrapToolExecution;
    if (wrapping && typeof wrap?.ignores === 'function') {
      try {
        if (wrap.ignores(event.runId) === true) wrapping.wrapToolExecution = undefined;
      } catch {
        // A wrapper that cannot say keeps wrapping.
      }
    }
  }

  async #settle(event: TraceEvent, written: unknown, next: number): Promise<void> {
    const settled = await guard('trace', () => written as PromiseLike<void>, this.#signal ?? neverAborted);
    if (!settled.ok) {
      this.#broken = true;
      this.#failed = this.#sinks[next - 1];
      throw LoopStop.from(settled, 'during-call');
    }
    const rest = this.#write(event, next);
    if (rest) await rest;
  }

  /**
   * A sink failed mid-run (the run ends `hard_error`, source `trace`): the other sinks still get the
   * run's end, so their traces say how the run ended and a sink that keeps a run open until its end
   * (an OpenTelemetry span) closes it. Sinks after the failed one in the list missed the event it
   * failed on: their trace has that one gap.
   */
  async #endAfterFailure(body: TraceEventBody | TraceEvent): Promise<void> {
    const event = this.#stamp(body, this.#setup.clock.now());
    for (const sink of this.#sinks) {
      if (sink === this.#failed) continue;
      try {
        const written = sink.write(event);
        if (written !== undefined && written !== null)
          await guard('trace', () => written as PromiseLike<void>, this.#signal ?? neverAborted);
      } catch {
        // Another sink failing now changes nothing either.
      }
    }
  }

  /** Writes the last event and flushes, without letting a failing sink change the outcome. */
  async close(body: TraceEventBody | undefined): Promise<void> {
    if (!this.on || this.#held) return;
    if (body) {
      try {
        const written = this.#failed ? this.#endAfterFailure(body) : this.emit(body);
        if (written) await written;
      } catch {
        // The run already has its outcome; a sink that fails on the last event cannot change it.
      }
    }
    for (const sink of this.#all) {
      // Reported through the outcome when it happened mid-run; nothing to add at the end.
      const flushed = guard('trace', () => sink.flush?.(), this.#signal ?? neverAborted);
      if (flushed instanceof Promise) await flushed;
    }
  }
}

const neverAborted = new AbortController().signal;
