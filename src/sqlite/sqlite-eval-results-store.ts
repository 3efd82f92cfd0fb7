import type BetterSqlite3 from 'better-sqlite3';
import { ReinsError } from '../errors/reins-error.js';
import type { TrialRecord } from '../eval/eval-types.js';
import type { EvalResultsStore } from '../eval/results-store.js';
import { openDatabase, type SqliteTarget } from './open-database.js';

/**
 * An eval's finished trials in a SQLite file (the embedded default for `runEval({ store })` and
 * `reins eval run --results`): one row per trial, written with `synchronous = FULL` as each trial
 * finishes, so a process killed mid-eval loses no finished trial and a second run with the same
 * suite and seed runs only the missing ones. A trial saved twice keeps its first record.
 *
 * @example
 * const store = new SqliteEvalResultsStore({ database: 'eval-results.sqlite' });
 * const report = await runEval(suite, { trials: 10, store });
 * store.close();
 */
export class SqliteEvalResultsStore implements EvalResultsStore {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #insert: BetterSqlite3.Statement;
  readonly #select: BetterSqlite3.Statement;

  constructor(options: SqliteTarget) {
    const opened = openDatabase(options, 'reins_eval_trials');
    const table = opened.table;
    this.#db = opened.db;
    this.#owned = opened.owned;
    this.#db.pragma('busy_timeout = 5000');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (eval_key TEXT NOT NULL, case_id TEXT NOT NULL, trial INTEGER NOT NULL, record TEXT NOT NULL, saved_at INTEGER NOT NULL, PRIMARY KEY (eval_key, case_id, trial))`,
    );
    this.#insert = this.#db.prepare(
      `INSERT INTO ${table} (eval_key, case_id, trial, record, saved_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    this.#select = this.#db.prepare(`SELECT record FROM ${table} WHERE eval_key = ? ORDER BY rowid`);
  }

  load(evalKey: string): TrialRecord[] {
    const rows = this.#select.all(evalKey) as { record: string }[];
    return rows.map((row, index) => {
      try {
        return JSON.parse(row.record) as TrialRecord;
      } catch (cause) {
        throw new ReinsError('corrupt_results', `eval results row ${index + 1} of "${evalKey}" is not JSON`, {
          cause,
        });
      }
    });
  }

  save(evalKey: string, record: TrialRecord): void {
    this.#insert.run(evalKey, record.caseId, record.trial, JSON.stringify(record), Date.now());
  }

  /** How many trials are stored for an eval. */
  count(evalKey: string): number {
    return this.load(evalKey).length;
  }

  /** Closes the database if this store opened it. */
  close(): void {
    if (this.#owned) this.#db.close();
  }
}
