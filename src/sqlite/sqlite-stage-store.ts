import type BetterSqlite3 from 'better-sqlite3';
import { type CommitResult, checkRevision } from '../checkpoint/checkpoint-store.js';
import type { StageCommit, StageRecord, StageStore } from '../pipeline/stage-store.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

export type SqliteStageStoreOptions = SqliteTarget;

/**
 * A pipeline's completed stages in SQLite (WAL, `synchronous = FULL`): a head row per run with its
 * revision, and one row per completed stage with its output as JSON. `commit` is a compare-and-set
 * on the head's revision inside one immediate transaction, durable when it returns, so a pipeline
 * killed mid-run resumes in a new process without running a completed stage again, and a second
 * resume of the same run is refused (`stale_state`).
 *
 * @example
 * import { SqliteStageStore } from 'reins/sqlite';
 * const checkpoint = new SqliteStageStore({ database: 'pipelines.db' });
 * // runPipeline(pipeline, input, { runId: 'nightly-2026-12-03', checkpoint });
 */
export class SqliteStageStore implements StageStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #head: BetterSqlite3.Statement<[string], { revision: number }>;
  readonly #outputs: BetterSqlite3.Statement<[string], { stage: string; output: string }>;
  readonly #setHead: BetterSqlite3.Statement<[string, number, number]>;
  readonly #putStage: BetterSqlite3.Statement<[string, string, string]>;
  readonly #commit: BetterSqlite3.Transaction<(commit: StageCommit) => CommitResult>;
  readonly #load: BetterSqlite3.Transaction<(runId: string) => StageRecord | undefined>;

  constructor(options: SqliteStageStoreOptions) {
    const opened = openDatabase(options, 'reins_pipeline_stages');
    const { db, table } = opened;
    const stages = `${table}_output`;
    this.#db = db;
    this.#owned = opened.owned;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.transaction(() => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${table} (run_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
      );
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${stages} (run_id TEXT NOT NULL, stage TEXT NOT NULL, output TEXT NOT NULL, PRIMARY KEY (run_id, stage))`,
      );
    }).immediate();
    this.#head = db.prepare(`SELECT revision FROM ${table} WHERE run_id = ?`);
    this.#outputs = db.prepare(`SELECT stage, output FROM ${stages} WHERE run_id = ?`);
    this.#setHead = db.prepare(
      `INSERT INTO ${table} (run_id, revision, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(run_id) DO UPDATE SET revision = excluded.revision, updated_at = excluded.updated_at`,
    );
    this.#putStage = db.prepare(
      `INSERT INTO ${stages} (run_id, stage, output) VALUES (?, ?, ?)
       ON CONFLICT(run_id, stage) DO UPDATE SET output = excluded.output`,
    );
    const commit = db.transaction((write: StageCommit): CommitResult => {
      const current = this.#head.get(write.runId)?.revision ?? 0;
      if (current !== write.expectedRevision) return { ok: false, currentRevision: current };
      this.#setHead.run(write.runId, write.revision, write.updatedAt);
      if (write.stage !== undefined && write.output !== undefined)
        this.#putStage.run(write.runId, write.stage, write.output);
      return { ok: true };
    });
    // IMMEDIATE: the revision is read under the write lock, so two processes cannot both pass it.
    this.#commit = commit.immediate as typeof commit;
    this.#load = db.transaction((runId: string): StageRecord | undefined => {
      const head = this.#head.get(runId);
      if (!head) return undefined;
      const outputs: Record<string, string> = {};
      for (const row of this.#outputs.all(runId)) outputs[row.stage] = row.output;
      return { revision: head.revision, outputs };
    });
  }

  load(runId: string): StageRecord | undefined {
    return this.#load(runId);
  }

  commit(commit: StageCommit): CommitResult {
    checkRevision('stage', commit);
    return this.#commit(commit);
  }

  /** Closes the database when the store opened it from a path. */
  close(): void {
    if (this.#owned) this.#db.close();
  }
}
