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
 * One executing call: its deadline and abort callback, registered on the batch's runtime (no timer
 * and no listener of its own), and the tool's own signal, made only if the tool reads it (an
 * AbortController per call is the single largest cost of a dispatch, and most tools never look).
 * The deadline ends when the tool settles; the abort callback serves until the call is settled, so
 * a batch abort also abandons an output check that hangs.
 */
export class CallWatch {
  readonly #runtime: CallRuntime;
  readonly #timeoutMs: number;
  /** Resolves the pending {@link run} (its promise's own resolve: no closure per call). */
  #settle: ((outcome: Execution) => void) | undefined;
  /** Wakes the pending output {@link check}. */
  #wake: ((cause: StopCause) => void) | undefined;
  #stopped: StopCause | undefined;
  #offAbort: (() => void) | undefined;
  #offDeadline: (() => void) | undefined;
  #own: ReturnType<typeof linkedController> | undefined;
  #abortedBy: AbortCause | undefined;

  constructor(runtime: CallRuntime, timeoutMs: number) {
    this.#runtime = runtime;
    this.#timeoutMs = timeoutMs;
  }

  /** The tool's signal, linked to the batch's; aborted on the call's timeout. */
  get signal(): AbortSignal {
    if (!this.#own) {
      this.#own = linkedController(this.#runtime.signal);
      if (this.#abortedBy) this.#own.controller.abort(this.#abortedBy);
    }
    return this.#own.controller.signal;
  }

  /** Registers the deadline and the batch's abort: the tool is running and has not settled. */
  start(): void {
    // The batch may have aborted while the tool's synchronous part ran.
    if (this.#runtime.aborted) this.#stop('aborted');
    this.#offAbort = this.#runtime.onAbort(() => this.#stop('aborted'));
    this.#offDeadline = this.#runtime.deadline(this.#timeoutMs, () => {
      this.#abortedBy = { type: 'timeout', ms: this.#timeoutMs };
      this.#own?.controller.abort(this.#abortedBy);
      this.#stop('timeout');
    });
  }

  /** The tool's result, or the timeout or batch abort that came first. */
  run(execution: Promise<unknown>): Promise<Execution> {
    if (this.#stopped) return Promise.resolve({ kind: 'stopped', cause: this.#stopped });
    return new Promise<Execution>((resolve) => {
      this.#settle = resolve;
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
    if (!this.#offAbort) this.#offAbort = this.#runtime.onAbort(() => this.#stop('aborted'));
    return new Promise<T | 'stopped'>((resolve) => {
      this.#wake = () => resolve('stopped');
      pending.then(resolve, () => resolve('stopped'));
    }).finally(() => this.dispose());
  }

  /** Unregisters the deadline (unless the tool's settling already did) and the abort callback, once each. */
  dispose(): void {
    this.#settle = undefined;
    this.#wake = undefined;
    this.#endDeadline();
    const off = this.#offAbort;
    this.#offAbort = undefined;
    off?.();
  }

  /**
   * A tool still running keeps its signal linked until it settles, so an abort still reaches it;
   * one that settled (`undefined`) is unlinked now.
   */
  release(execution: Promise<unknown> | undefined): void {
    if (!this.#own) return;
    if (execution === undefined) this.#own.dispose();
    else execution.finally(() => this.#own?.dispose()).catch(() => {});
  }

  #endDeadline(): void {
    const off = this.#offDeadline;
    this.#offDeadline = undefined;
    off?.();
  }

  #stop(cause: StopCause): void {
    if (this.#stopped) return;
    this.#stopped = cause;
    // A run already settled ignores this (a promise resolves once).
    this.#settle?.({ kind: 'stopped', cause });
    this.#wake?.(cause);
  }
}
