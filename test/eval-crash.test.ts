import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evalKeyOf } from '../src/eval/run-eval.js';
import { SqliteEvalResultsStore } from '../src/sqlite/sqlite-eval-results-store.js';
import { randomInt, seededRandom } from '../src/testing/seeded-random.js';
import { runChild } from './support/kill-child.js';

const child = new URL('./fixtures/eval-crash-child.mjs', import.meta.url).pathname;
const built = new URL('../dist/eval/index.js', import.meta.url).pathname;
const workspace = mkdtempSync(join(tmpdir(), 'reins-eval-crash-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Runs the eval child; SIGKILLs it once it has saved `killAfter` trials. */
const runEvalChild = (args: string[], killAfter?: number) =>
  runChild(
    child,
    args,
    killAfter === undefined ? {} : { killWhen: (stdout) => stdout.includes(`saved ${killAfter}\n`) },
  );

const starts = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(6))
    : [];

describe('an eval killed with SIGKILL resumes from its SQLite results (real processes)', () => {
  it('re-runs no finished trial and loses none', { timeout: 240_000 }, async () => {
    expect(existsSync(built), 'run `npm run build` first (npm test does)').toBe(true);
    const random = seededRandom(20261203);
    for (let round = 0; round < 3; round++) {
      const database = join(workspace, `round-${round}.sqlite`);
      const log = join(workspace, `round-${round}.log`);
      const seed = String(100 + round);
      let kills = 0;
      let final: string | undefined;
      for (let attempt = 0; attempt < 8 && final === undefined; attempt++) {
        const store = new SqliteEvalResultsStore({ database });
        const finishedBefore = new Set(
          store.load(evalKeyOf('crash', Number(seed))).map((r) => `${r.caseId} ${r.trial}`),
        );
        store.close();
        const startsBefore = starts(log).length;
        const killAfter = kills < 2 ? finishedBefore.size + randomInt(random, 1, 12) : undefined;
        const { killed, stdout } = await runEvalChild([database, log, seed], killAfter);
        for (const started of starts(log).slice(startsBefore))
          expect(finishedBefore.has(started), `round ${round}: ${started} ran again after it was saved`).toBe(
            false,
          );
        if (killed) kills++;
        else final = stdout.split('\n').find((line) => line.startsWith('report '));
      }
      expect(kills).toBeGreaterThan(0);
      expect(final).toBeDefined();
      const store = new SqliteEvalResultsStore({ database });
      const saved = store.load(evalKeyOf('crash', Number(seed)));
      store.close();
      // 4 cases × 12 trials, each exactly once.
      expect(new Set(saved.map((r) => `${r.caseId} ${r.trial}`)).size).toBe(48);
      expect(saved).toHaveLength(48);
      // The resumed eval reports what one uninterrupted eval with the same seed would.
      const uninterrupted = await runEvalChild([
        join(workspace, `clean-${round}.sqlite`),
        join(workspace, `clean-${round}.log`),
        seed,
      ]);
      expect(final).toBe(uninterrupted.stdout.split('\n').find((line) => line.startsWith('report ')));
    }
  });
});
