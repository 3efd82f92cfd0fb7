import { type Stats, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { applyCheckpointDeltas, type CheckpointDelta } from '../checkpoint/checkpoint-delta.js';
import { parseCheckpointDelta } from '../checkpoint/checkpoint-log.js';
import {
  type CheckpointCommit,
  type CheckpointStore,
  type CommitResult,
  checkCommit,
} from '../checkpoint/checkpoint-store.js';
import { isReinsError, ReinsError } from '../errors/reins-error.js';
import { parseRunState, type RunState } from '../loop/run-state.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

/** @property table @default 'reins_checkpoints' (the log goes in `<table>_log`) */
export type SqliteCheckpointStoreOptions = SqliteTarget;

type HeadRow = { revision: number; legacy: number };
type LogRow = { revision: number; body: string };

/**
 * Run checkpoints in SQLite (better-sqlite3 12), under the {@link CheckpointStore} contract.
 * - `<table>` holds one head row per run (status, step, revision); `<table>_log` holds the last
 *   snapshot and the deltas after it, so a step writes one delta row and updates the head, and a
 *   snapshot drops the rows before it (storage stays about twice the state's size).
 * - `commit` runs in a `BEGIN IMMEDIATE` transaction, so writers in several processes serialize:
 *   it applies when the head's revision is `expectedRevision` or the run has no row, and is
 *   refused with the current revision otherwise. WAL with `synchronous = FULL`: a commit that has
 *   returned survives a killed process and a power cut.
 * - Rows written before revisions existed (the whole state in `state`, revision 0) load as they
 *   are and take commits on top (`expectedRevision: 0`); the table gains its `revision` column on
 *   open.
 * - A file database is identified by its device and inode at open. Before every write the store
 *   checks the path still names that file (one `stat`, a few microseconds against the fsync a commit already pays): a file deleted or
 *   replaced while the store holds it open would take commits into an unlinked inode and lose
 *   them on close, so the write throws `ReinsError('checkpoint_lost')` instead, and a run ends
 *   `hard_error` from `checkpoint`.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  /** The database file and its identity at open; undefined for in-memory and temporary databases. */
  readonly #file: { path: string; dev: number; ino: number } | undefined;
  /** What `state` holds once a run's state lives in the log: NULL, or '' in a table made NOT NULL. */
  readonly #noState: string | null;
  readonly #head: BetterSqlite3.Statement<[string], HeadRow>;
  readonly #headState: BetterSqlite3.Statement<[string], { revision: number; state: string | null }>;
  readonly #upsert: BetterSqlite3.Statement<[string, string, number, string | null, number, number]>;
  readonly #append: BetterSqlite3.Statement<[string, number, number, string]>;
  readonly #adoptLegacy: BetterSqlite3.Statement<[string]>;
  readonly #clearLog: BetterSqlite3.Statement<[string]>;
  readonly #firstLog: BetterSqlite3.Statement<[string], { snapshot: number }>;
  readonly #lastSnapshot: BetterSqlite3.Statement<[string], LogRow>;
  readonly #deltasAfter: BetterSqlite3.Statement<[string, number], LogRow>;
  readonly #list: BetterSqlite3.Statement<
    [],
    { run_id: string; status: string; step: number; updated_at: number }
  >;
  readonly #commit: BetterSqlite3.Transaction<(commit: CheckpointCommit) => CommitResult>;
  readonly #save: BetterSqlite3.Transaction<(state: RunState) => void>;
  readonly #load: BetterSqlite3.Transaction<(runId: string) => RunState | undefined>;

  constructor(options: SqliteCheckpointStoreOptions) {
    const opened = openDatabase(options, 'reins_checkpoints');
    const table = opened.table;
    const log = `${table}_log`;
    const db = opened.db;
    this.#db = db;
    this.#owned = opened.owned;
    this.#file = fileIdentity(db);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    this.#noState = db
      .transaction(() => {
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${table} (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, step INTEGER NOT NULL, state TEXT, updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 0)`,
        );
        const columns = db.pragma(`table_info(${table})`) as { name: string; notnull: number }[];
        if (!columns.some((column) => column.name === 'revision'))
          db.exec(`ALTER TABLE ${table} ADD COLUMN revision INTEGER NOT NULL DEFAULT 0`);
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${log} (run_id TEXT NOT NULL, revision INTEGER NOT NULL, snapshot INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, revision))`,
        );
        return columns.find((column) => column.name === 'state')?.notnull ? '' : null;
      })
      .immediate();
    this.#head = db.prepare(
      `SELECT revision, (state IS NOT NULL AND state <> '') AS legacy FROM ${table} WHERE run_id = ?`,
    );
    this.#headState = db.prepare(`SELECT revision, state FROM ${table} WHERE run_id = ?`);
    this.#upsert = db.prepare(
      `INSERT INTO ${table} (run_id, status, step, state, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, step = excluded.step, state = excluded.state, updated_at = excluded.updated_at, revision = excluded.revision`,
    );
    this.#append = db.prepare(`INSERT INTO ${log} (run_id, revision, snapshot, body) VALUES (?, ?, ?, ?)`);
    this.#adoptLegacy = db.prepare(
      `INSERT INTO ${log} (run_id, revision, snapshot, body) SELECT run_id, revision, 1, state FROM ${table} WHERE run_id = ?`,
    );
    this.#clearLog = db.prepare(`DELETE FROM ${log} WHERE run_id = ?`);
    this.#firstLog = db.prepare(`SELECT snapshot FROM ${log} WHERE run_id = ? ORDER BY revision LIMIT 1`);
    this.#lastSnapshot = db.prepare(
      `SELECT revision, body FROM ${log} WHERE run_id = ? AND snapshot = 1 ORDER BY revision DESC LIMIT 1`,
    );
    this.#deltasAfter = db.prepare(
      `SELECT revision, body FROM ${log} WHERE run_id = ? AND revision > ? ORDER BY revision`,
    );
    this.#list = db.prepare(`SELECT run_id, status, step, updated_at FROM ${table} ORDER BY updated_at DESC`);
    this.#commit = db.transaction((commit: CheckpointCommit) => this.#commitIn(commit));
    this.#save = db.transaction((state: RunState) => {
      const revision = (this.#head.get(state.runId)?.revision ?? 0) + 1;
      this.#writeSnapshot(state.runId, revision, JSON.stringify({ ...state, revision }));
      this.#upsert.run(state.runId, state.status, state.step, this.#noState, state.updatedAt, revision);
    });
    this.#load = db.transaction((runId: string) => this.#loadIn(runId));
  }

  /** Applies `commit` when the run's revision is `commit.expectedRevision` or the run has no row. */
  commit(commit: CheckpointCommit): CommitResult {
    checkCommit(commit);
    this.#assertFileInPlace();
    return this.#commit.immediate(commit);
  }

  /**
   * Writes a whole state as a new snapshot at the next revision, without compare-and-set (the
   * older contract, for callers that only `save`).
   */
  save(state: RunState): void {
    this.#assertFileInPlace();
    this.#save.immediate(state);
  }

  /** The latest committed state with its `revision`, or undefined for an unknown run. */
  load(runId: string): RunState | undefined {
    return this.#load.deferred(runId);
  }

  /** Every run with its status and last completed step, newest first. */
  list(): { runId: string; status: string; step: number; updatedAt: number }[] {
    return this.#list
      .all()
      .map((row) => ({ runId: row.run_id, status: row.status, step: row.step, updatedAt: row.updated_at }));
  }

  close(): void {
    if (this.#owned) this.#db.close();
  }

  /** Throws `checkpoint_lost` when the database file was deleted or replaced since open. */
  #assertFileInPlace(): void {
    const file = this.#file;
    if (!file) return;
    let now: Stats | undefined;
    try {
      now = statSync(file.path, { throwIfNoEntry: false });
    } catch (cause) {
      throw new ReinsError(
        'checkpoint_lost',
        `checkpoint file ${file.path} cannot be checked: ${String(cause)}`,
        {
          cause,
        },
      );
    }
    if (!now)
      throw new ReinsError(
        'checkpoint_lost',
        `checkpoint file ${file.path} was deleted while the store had it open; a commit now would go to the unlinked file and be lost`,
      );
    if (now.ino !== file.ino || now.dev !== file.dev)
      throw new ReinsError(
        'checkpoint_lost',
        `checkpoint file ${file.path} was replaced by another file while the store had it open; a commit now would go to the old, unlinked file and be lost`,
      );
  }

  #commitIn(commit: CheckpointCommit): CommitResult {
    const head = this.#head.get(commit.runId);
    if (head && head.revision !== commit.expectedRevision)
      return { ok: false, currentRevision: head.revision };
    if (commit.snapshot) {
      this.#writeSnapshot(
        commit.runId,
        commit.revision,
        commit.body ?? JSON.stringify({ ...commit.snapshot, revision: commit.revision }),
      );
    } else {
      if (head?.legacy) {
        // A row from before revisions: its whole state becomes the log's base snapshot.
        this.#clearLog.run(commit.runId);
        this.#adoptLegacy.run(commit.runId);
      } else if (this.#firstLog.get(commit.runId)?.snapshot !== 1) {
        throw new ReinsError(
          'corrupt_state',
          `checkpoint delta for ${commit.runId} has no snapshot to apply to`,
        );
      }
      this.#append.run(commit.runId, commit.revision, 0, commit.body ?? JSON.stringify(commit.delta));
    }
    this.#upsert.run(
      commit.runId,
      commit.status,
      commit.step,
      this.#noState,
      commit.updatedAt,
      commit.revision,
    );
    return { ok: true };
  }

  #writeSnapshot(runId: string, revision: number, body: string): void {
    this.#clearLog.run(runId);
    this.#append.run(runId, revision, 1, body);
  }

  #loadIn(runId: string): RunState | undefined {
    const head = this.#headState.get(runId);
    if (!head) return undefined;
    const snapshot = this.#lastSnapshot.get(runId);
    let base: RunState;
    let deltas: CheckpointDelta[] = [];
    if (snapshot) {
      base = { ...parseRunState(snapshot.body), revision: snapshot.revision };
      deltas = this.#deltasAfter.all(runId, snapshot.revision).map((row) => parseCheckpointDelta(row, runId));
    } else if (head.state) {
      base = { ...parseRunState(head.state), revision: head.revision };
    } else {
      throw new ReinsError('corrupt_state', `checkpoint for ${runId} has no snapshot`);
    }
    let state: RunState;
    try {
      state = applyCheckpointDeltas(base, deltas);
    } catch (cause) {
      if (isReinsError(cause)) throw cause;
      throw new ReinsError('corrupt_state', `checkpoint deltas for ${runId} do not apply`, { cause });
    }
    if ((state.revision ?? 0) !== head.revision)
      throw new ReinsError(
        'corrupt_state',
        `checkpoint for ${runId} is at revision ${head.revision} but its log ends at ${String(state.revision)}`,
      );
    return state;
  }
}

/**
 * The path and identity of the file behind `db`, or undefined when there is none to watch (an
 * in-memory or temporary database, or a path that cannot be stat'ed right after open).
 */
function fileIdentity(db: BetterSqlite3.Database): { path: string; dev: number; ino: number } | undefined {
  if (db.memory || db.name === '' || db.name === ':memory:') return undefined;
  const path = resolve(db.name);
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats ? { path, dev: stats.dev, ino: stats.ino } : undefined;
}
