import { ReinsError } from '../errors/reins-error.js';
import { assertRunState, type RunState } from '../loop/run-state.js';
import { applyCheckpointDeltas, type CheckpointDelta } from './checkpoint-delta.js';

/**
 * One write to a {@link CheckpointStore}: a compare-and-set from `expectedRevision` to `revision`
 * (always `expectedRevision + 1`), carrying either a whole state (`snapshot`) or what changed since
 * `expectedRevision` (`delta`). The loop writes a snapshot when a run (or a resumed segment) starts
 * and whenever the deltas since the last snapshot outweigh it, so a store's work per step does not
 * grow with the run and `load` reads at most about twice the state's size.
 */
export type CheckpointCommit = {
  runId: string;
  /** The revision the writer last saw; 0 when the run has no checkpoint yet. */
  expectedRevision: number;
  /** `expectedRevision + 1`. */
  revision: number;
  /** For listings: the state's status and completed steps after this write. */
  status: RunState['status'];
  step: number;
  updatedAt: number;
  /**
   * The write as JSON text, when the writer has it (the loop always does): what
   * `JSON.stringify(snapshot)` or `JSON.stringify(delta)` gives, up to the order of keys, with the
   * snapshot's `revision` this commit's. A store that keeps JSON writes this instead of serializing
   * again; the loop makes it from each message's JSON, made once, so a snapshot of a long run costs
   * a copy of its transcript rather than a serialization.
   */
  body?: string;
} & ({ snapshot: RunState; delta?: undefined } | { delta: CheckpointDelta; snapshot?: undefined });

/**
 * Refuses a commit no writer following the contract makes: a revision other than
 * `expectedRevision + 1` (stored, it would leave the run unloadable), or neither a snapshot nor a
 * delta. Every store calls it first; it throws a `ReinsError` (`invalid_checkpoint`), a programmer's error.
 */
export function checkCommit(commit: CheckpointCommit): void {
  checkRevision('checkpoint', commit);
  if ((commit.snapshot === undefined) === (commit.delta === undefined))
    throw new ReinsError(
      'invalid_checkpoint',
      `checkpoint commit for ${commit.runId}: needs a snapshot or a delta`,
    );
}

/**
 * Refuses a compare-and-set whose revision is not `expectedRevision + 1` (`invalid_checkpoint`):
 * what every revisioned store (checkpoints, pipeline stages) checks before it writes.
 */
export function checkRevision(
  what: string,
  commit: { runId: string; expectedRevision: number; revision: number },
): void {
  const { expectedRevision, revision } = commit;
  if (!Number.isSafeInteger(expectedRevision) || expectedRevision < 0 || revision !== expectedRevision + 1)
    throw new ReinsError(
      'invalid_checkpoint',
      `${what} commit for ${commit.runId}: revision ${String(revision)} does not follow ${String(expectedRevision)}`,
    );
}

/** A store's answer to a commit: applied, or refused because another writer moved the revision on. */
export type CommitResult = { ok: true } | { ok: false; currentRevision: number };

/**
 * Where run states are kept between steps. The contract every store implements:
 * - `commit` is a compare-and-set on the revision: it applies only when the store's revision for
 *   the run is `expectedRevision` (or the store has nothing for the run), and it is durable when it
 *   resolves (the loop starts the next step only after it). A second resume of one state, or a
 *   second worker, gets `{ ok: false }` and its run is refused before anything runs.
 * - `load` returns the latest committed state (snapshot plus the deltas after it), with `revision`.
 *
 * `reins/sqlite` has the embedded default. A store written for the older contract (`save(state)`
 * with the whole state, no revision) still works: the loop saves whole states to it, without
 * compare-and-set.
 */
export interface CheckpointStore {
  commit(commit: CheckpointCommit): CommitResult | Promise<CommitResult>;
  load(runId: string): RunState | undefined | Promise<RunState | undefined>;
}

/** The pre-revision contract: the whole state on every save, last write wins. */
export interface LegacyCheckpointStore {
  save(state: RunState): void | Promise<void>;
  load(runId: string): RunState | undefined | Promise<RunState | undefined>;
}

/** Either contract; the loop uses `commit` when the store has it. */
export type AnyCheckpointStore = CheckpointStore | LegacyCheckpointStore;

/** True for a store that implements the revisioned contract. */
export function isRevisionedStore(store: AnyCheckpointStore): store is CheckpointStore {
  return typeof (store as Partial<CheckpointStore>).commit === 'function';
}

/**
 * Keeps checkpoints in memory, serialized as a real store keeps them (each commit is written as
 * JSON and read back on `load`), so its cost per step is what a durable store's would be. For
 * tests and single-process runs: a crash loses everything.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #runs = new Map<string, { revision: number; entries: string[] }>();

  commit(commit: CheckpointCommit): CommitResult {
    checkCommit(commit);
    const run = this.#runs.get(commit.runId);
    if (run && run.revision !== commit.expectedRevision) return { ok: false, currentRevision: run.revision };
    if (commit.snapshot) {
      this.#runs.set(commit.runId, {
        revision: commit.revision,
        entries: [commit.body ?? JSON.stringify({ ...commit.snapshot, revision: commit.revision })],
      });
      return { ok: true };
    }
    if (!run)
      throw new ReinsError(
        'corrupt_state',
        `checkpoint delta for ${commit.runId} has no snapshot to apply to`,
      );
    run.entries.push(commit.body ?? JSON.stringify(commit.delta));
    run.revision = commit.revision;
    return { ok: true };
  }

  /** Writes a whole state as a new snapshot, without compare-and-set (the older contract). */
  save(state: RunState): void {
    const revision = (this.#runs.get(state.runId)?.revision ?? 0) + 1;
    this.#runs.set(state.runId, { revision, entries: [JSON.stringify({ ...state, revision })] });
  }

  load(runId: string): RunState | undefined {
    const run = this.#runs.get(runId);
    if (!run) return undefined;
    const snapshot = assertRunState(JSON.parse(run.entries[0] as string));
    const deltas: CheckpointDelta[] = [];
    for (let i = 1; i < run.entries.length; i++) deltas.push(JSON.parse(run.entries[i] as string));
    return applyCheckpointDeltas(snapshot, deltas);
  }
}
