import type { RunState } from '../loop/run-state.js';

/**
 * Where run states are kept between steps. `save` must be durable when it resolves: the loop only
 * starts the next step after it. `reins/sqlite` has the embedded default.
 */
export interface CheckpointStore {
  save(state: RunState): void | Promise<void>;
  load(runId: string): RunState | undefined | Promise<RunState | undefined>;
}

/** Keeps checkpoints in a map: for tests. Not durable; a crash loses everything. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #states = new Map<string, string>();
  save(state: RunState): void {
    this.#states.set(state.runId, JSON.stringify(state));
  }
  load(runId: string): RunState | undefined {
    const text = this.#states.get(runId);
    return text === undefined ? undefined : (JSON.parse(text) as RunState);
  }
}
