import { type AbortCause, linkedController } from '../abort.js';
import type { CallRuntime } from '../call-plan.js';

/** What stopped a call before its tool settled. */
export type StopCause = 'timeout' | 'aborted';

/** How the tool's own `execute` came out. */
export type Execution =
  | { kind: 'value'; value: unknown }
  | { kind: 'thrown'; thrown: unknown }
  | { kind: 'stopped'; cause: StopCause };

/**
 * One executing call's deadline and abort callback, registered on the batch's runtime (no timer
 * and no listener of its own). The deadline ends when the tool settles; the abort callback serves
 * until the call is settled, so a batch abort also abandons an output check that hangs.
 */
export class CallWatch {
  #wake: ((cause: StopCause) => void) | undefined;
  #stopped: StopCause | undefined;
  readonly #offAbort: () => void;
  #offDeadline: (() => void) | undefined;

  constructor(runtime: CallRuntime, timeoutMs: number, onTimeout: () => void) {
    this.#offAbort = runtime.onAbort(() => this.#stop('aborted'));
    this.#offDeadline = runtime.deadline(timeoutMs, () => {
      onTimeout();
      this.#stop('timeout');
    });
  }

  /** The tool's result, or the timeout or batch abort that came first. */
  run(execution: Promise<unknown>): Promise<Execution> {
    if (this.#stopped) return Promise.resolve({ kind: 'stopped', cause: this.#stopped });
    return new Promise<Execution>((resolve) => {
      this.#wake = (cause) => resolve({ kind: 'stopped', cause });
      execution.then(
        (value) => {
          this.#endDeadline();
          resolve({ kind: 'value', value });
        },
        (thrown: unknown) => {
          this.#endDeadline();
          resolve({ kind: 'thrown', thrown });
        },
      );
    });
  }

  /** A pending step after the tool settled (its output checks), or `stopped` if the batch aborts first. */
  check<T>(pending: Promise<T>): Promise<T | 'stopped'> {
    if (this.#stopped) return Promise.resolve('stopped');
    return new Promise<T | 'stopped'>((resolve) => {
      this.#wake = () => resolve('stopped');
      pending.then(resolve, () => resolve('stopped'));
    });
  }

  /** Unregisters the deadline (unless the tool's settling already did) and the abort callback, once each. */
  dispose(): void {
    this.#wake = undefined;
    this.#endDeadline();
    this.#offAbort();
  }

  #endDeadline(): void {
    const off = this.#offDeadline;
    this.#offDeadline = undefined;
    off?.();
  }

  #stop(cause: StopCause): void {
    if (this.#stopped) return;
    this.#stopped = cause;
    this.#wake?.(cause);
  }
}

/**
 * The tool's own signal, made only if the tool reads it: an AbortController per call is the single
 * largest cost of a dispatch, and most tools never look. Linked to the batch's signal.
 */
export class ToolSignal {
  readonly #runtime: CallRuntime;
  #own: ReturnType<typeof linkedController> | undefined;
  #stoppedBy: AbortCause | undefined;

  constructor(runtime: CallRuntime) {
    this.#runtime = runtime;
  }

  get signal(): AbortSignal {
    if (!this.#own) {
      this.#own = linkedController(this.#runtime.signal);
      if (this.#stoppedBy) this.#own.controller.abort(this.#stoppedBy);
    }
    return this.#own.controller.signal;
  }

  abort(reason: AbortCause): void {
    this.#stoppedBy = reason;
    this.#own?.controller.abort(reason);
  }

  /** A tool still running keeps its signal linked until it settles, so an abort still reaches it. */
  release(execution: Promise<unknown>): void {
    if (this.#own) execution.finally(() => this.#own?.dispose()).catch(() => {});
  }
}
