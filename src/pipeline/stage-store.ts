import type { CommitResult } from '../checkpoint/checkpoint-store.js';

/**
 * One write to a {@link StageStore}: a compare-and-set from `expectedRevision` to `revision`
 * (`expectedRevision + 1`), as `CheckpointStore.commit` is. A claim (`stage` undefined) opens a
 * run or a resume of it; a stage write records one completed stage's output, as JSON.
 */
export interface StageCommit {
  runId: string;
  expectedRevision: number;
  revision: number;
  /** The completed stage's path; undefined for a claim. */
  stage?: string;
  /** The stage's output as JSON text. */
  output?: string;
  updatedAt: number;
}

/** What a {@link StageStore} holds for a run: its revision and each completed stage's output (JSON). */
export interface StageRecord {
  revision: number;
  outputs: Readonly<Record<string, string>>;
}

/**
 * Where a pipeline keeps its completed stages, so a resumed pipeline never runs one again. The
 * contract is the checkpoint store's: `commit` is a compare-and-set on the revision (a second
 * resume of the same run, or a second worker, is refused before anything runs: `stale_state`), and
 * is durable when it resolves; `load` returns every committed output. `MemoryStageStore` here; a
 * durable store keeps one row per stage beside a head row with the revision.
 */
export interface StageStore {
  load(runId: string): StageRecord | undefined | Promise<StageRecord | undefined>;
  commit(commit: StageCommit): CommitResult | Promise<CommitResult>;
}

/** Stage outputs in memory (as JSON text, as a durable store keeps them): for tests and one process. */
export class MemoryStageStore implements StageStore {
  readonly #runs = new Map<string, { revision: number; outputs: Record<string, string> }>();

  load(runId: string): StageRecord | undefined {
    const run = this.#runs.get(runId);
    return run ? { revision: run.revision, outputs: { ...run.outputs } } : undefined;
  }

  commit(commit: StageCommit): CommitResult {
    const run = this.#runs.get(commit.runId) ?? { revision: 0, outputs: {} };
    if (run.revision !== commit.expectedRevision) return { ok: false, currentRevision: run.revision };
    run.revision = commit.revision;
    if (commit.stage !== undefined && commit.output !== undefined) run.outputs[commit.stage] = commit.output;
    this.#runs.set(commit.runId, run);
    return { ok: true };
  }
}
