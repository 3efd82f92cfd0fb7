import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../src/sqlite/sqlite-checkpoint-store.js';
import { randomInt, seededRandom } from '../src/testing/seeded-random.js';
import { runChild } from './support/kill-child.js';

const child = new URL('./fixtures/crash-child.mjs', import.meta.url).pathname;
const built = new URL('../dist/index.js', import.meta.url).pathname;
const workspace = mkdtempSync(join(tmpdir(), 'reins-crash-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Runs the child until it prints `executed <killAt>`, waits `delayMs`, then SIGKILLs it; or to the end. */
const runCrashChild = (args: string[], killAt?: number, delayMs = 0) =>
  runChild(
    child,
    args,
    killAt === undefined ? {} : { killWhen: (stdout) => stdout.includes(`executed ${killAt}\n`), delayMs },
  );

const effects = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).map(Number) : [];

describe('resume after SIGKILL (real processes, SQLite checkpoints)', () => {
  it('finishes every run, and never re-runs a completed step\u2019s tool call', {
    timeout: 300_000,
  }, async () => {
    expect(existsSync(built), 'run `npm run build` first (npm test does)').toBe(true);
    const random = seededRandom(20261129);
    const trials = 24;
    let kills = 0;
    let reExecutedInFlight = 0;
    for (let trial = 0; trial < trials; trial++) {
      const db = join(workspace, `trial-${trial}.db`);
      const log = join(workspace, `trial-${trial}.log`);
      const runId = `crash-${trial}`;
      let plannedKills = randomInt(random, 1, 2);
      let lastKillStep = 0;
      let finished = false;
      let pending: { completed: number; before: number } | undefined;
      for (let attempt = 0; attempt < 10 && !finished; attempt++) {
        const killAt =
          plannedKills > 0 ? randomInt(random, lastKillStep + 1, Math.min(19, lastKillStep + 12)) : undefined;
        const outcome = await runCrashChild([db, log, runId], killAt, randomInt(random, 0, 3));
        if (pending) {
          // Whatever this process ran, no step the store had recorded as complete may appear anew.
          const after = effects(log).slice(pending.before);
          for (const step of after)
            expect(
              step,
              `trial ${trial}: step ${step} re-ran after checkpoint ${pending.completed}`,
            ).toBeGreaterThan(pending.completed);
          if (after[0] !== undefined && after[0] <= (effects(log)[pending.before - 1] ?? 0))
            reExecutedInFlight++;
        }
        if (!outcome.killed) {
          expect(outcome.stdout).toContain('outcome answered steps 21');
          finished = true;
          break;
        }
        kills++;
        plannedKills--;
        lastKillStep = killAt ?? lastKillStep;
        // What the store holds now is all a resume can know: every step up to it is complete.
        const store = new SqliteCheckpointStore({ database: db });
        pending = { completed: store.load(runId)?.step ?? 0, before: effects(log).length };
        store.close();
      }
      expect(finished, `trial ${trial} finished`).toBe(true);
      const executed = effects(log);
      expect(new Set(executed)).toEqual(new Set(Array.from({ length: 20 }, (_, i) => i + 1)));
    }
    expect(kills).toBeGreaterThanOrEqual(20);
    // Informational: how often a kill landed between a tool call and its checkpoint (at-least-once window).
    console.log(
      `crash test: ${trials} trials, ${kills} SIGKILLs, ${reExecutedInFlight} in-flight step(s) re-executed`,
    );
  });
});
