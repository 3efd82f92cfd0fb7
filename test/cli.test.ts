import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
// Plain text whatever the environment: CI=true alone would switch colours on.
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });

describe('reins CLI', () => {
  it('demo all --json prints one object per scenario with the outcome, counters and trace', () => {
    const run = reins('demo', 'all', '--json');
    expect(run.status).toBe(0);
    const rows = JSON.parse(run.stdout) as {
      scenario: string;
      outcome: { kind: string };
      steps: number;
      contextTokens: number;
      billedTokens: number;
      trace: unknown[];
    }[];
    expect(rows.map((row) => [row.scenario, row.outcome.kind, row.steps])).toEqual([
      ['happy', 'answered', 4],
      ['loops', 'looped', 3],
      ['drowns', 'over_budget', 1],
      ['wanders', 'step_limit', 6],
    ]);
    for (const row of rows) {
      expect(row.billedTokens).toBeGreaterThan(0);
      expect(row.contextTokens).toBeGreaterThan(0);
      expect(row.trace.length).toBeGreaterThan(3);
    }
  });

  it('the toggles reach the loop', () => {
    const loops = JSON.parse(reins('demo', 'loops', '--no-repeat-detection', '--json').stdout);
    expect(loops.outcome.kind).toBe('step_limit');
    const short = JSON.parse(reins('demo', 'happy', '--max-steps', '2', '--json').stdout);
    expect(short.outcome).toMatchObject({ kind: 'step_limit', limit: 2 });
    const roomy = JSON.parse(reins('demo', 'drowns', '--max-context-tokens', '60000', '--json').stdout);
    expect(roomy.outcome.kind).toBe('answered');
  });

  it('human output shows think → act → observe, the context meter and the outcome', () => {
    const run = reins('demo', 'happy');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/think .*health of the checkout service/);
    expect(run.stdout).toContain('act     get_service_health({"service":"checkout"})');
    expect(run.stdout).toMatch(/context [\d,]+ \/ 8,000 tokens/);
    expect(run.stdout).toMatch(/billed so far [\d,]+/);
    expect(run.stdout).toContain('outcome answered');
  });

  it('demo drowns --cap-results completes, and bench injection --json prints the figures', () => {
    const capped = JSON.parse(reins('demo', 'drowns', '--cap-results', '--json').stdout);
    expect(capped.outcome.kind).toBe('answered');
    const bench = reins('bench', 'injection', '--json');
    expect(bench.status).toBe(0);
    const figures = JSON.parse(bench.stdout);
    for (const setup of ['guarded', 'unguarded']) {
      for (const key of ['utility', 'utilityUnderAttack', 'attackSuccessRate']) {
        expect(figures[setup][key]).toBeGreaterThanOrEqual(0);
        expect(figures[setup][key]).toBeLessThanOrEqual(1);
      }
    }
    expect(figures.guarded.attackSuccessRate).toBe(0);
  });

  it('dlq list, show, retry and purge a SQLite dead-letter file', async () => {
    const { SqliteDeadLetterStore } = await import('../src/sqlite/index.js');
    const db = join(mkdtempSync(join(tmpdir(), 'reins-cli-dlq-')), 'dlq.db');
    const store = new SqliteDeadLetterStore({ database: db });
    for (const id of ['r-1', 'r-2']) {
      store.add({
        id,
        source: 'enrich',
        payload: { id },
        error: { name: 'Error', message: 'HTTP 400' },
        classification: 'terminal',
        attempts: 1,
        firstFailedAtMs: 1,
        lastFailedAtMs: 1,
      });
    }
    store.close();
    expect(JSON.parse(reins('dlq', 'list', '--db', db, '--json').stdout)).toHaveLength(2);
    expect(JSON.parse(reins('dlq', 'show', 'r-1', '--db', db).stdout)).toMatchObject({
      id: 'r-1',
      attempts: 1,
    });
    expect(JSON.parse(reins('dlq', 'retry', 'r-1', '--db', db).stdout)).toEqual({ id: 'r-1' });
    expect(reins('dlq', 'show', 'r-1', '--db', db).status).toBe(1);
    expect(reins('dlq', 'purge', '--db', db).stdout).toContain('purged 1');
  });

  it('demo stream shows a form filling in, runs it once whole, and never runs the cut-off one', () => {
    const run = reins('demo', 'stream');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/the tool ran 1 time\(s\)[\s\S]*outcome answered/);
    expect(run.stdout).toMatch(/the tool ran 0 time\(s\)[\s\S]*outcome truncated/);
    expect(run.stdout).toContain('applicant');
  });

  it('bad flags exit 2 with a message naming the flag', () => {
    const bad = reins('demo', 'happy', '--max-steps', '-3');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--max-steps/);
    const unknown = reins('demo', 'nosuch');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/happy, loops, drowns, wanders/);
  });

  it('trace show renders a written trace, and trace replay reproduces it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reins-cli-'));
    const file = join(dir, 'wanders.jsonl');
    expect(reins('demo', 'wanders', '--trace-out', file).status).toBe(0);
    const show = reins('trace', 'show', file);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('outcome step_limit');
    const replay = reins('trace', 'replay', file, '--json');
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, outcome: { kind: 'step_limit' } });
    expect(reins('trace', 'show', join(dir, 'missing.jsonl')).status).toBe(2);
  });

  it('trace show and trace replay read a compact trace as they read a plain one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reins-cli-'));
    const plain = join(dir, 'plain.jsonl');
    const compact = join(dir, 'compact.jsonl');
    expect(reins('demo', 'loops', '--trace-out', plain).status).toBe(0);
    expect(reins('demo', 'loops', '--trace-out', compact, '--trace-encoding', 'compact').status).toBe(0);
    expect(readFileSync(compact, 'utf8')).toMatch(/^\{"encoding":"reins-compact\/1"/);
    expect(readFileSync(compact).length).toBeLessThan(readFileSync(plain).length);
    const shown = (file: string) => reins('trace', 'show', file);
    expect(shown(compact).status).toBe(0);
    // The run ids and clocks differ between the two runs; what is shown does not.
    expect(shown(compact).stdout).toBe(shown(plain).stdout);
    const replay = reins('trace', 'replay', compact, '--json');
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, outcome: { kind: 'looped' } });
    expect(reins('demo', 'loops', '--trace-out', compact, '--trace-encoding', 'zip').status).toBe(2);
  });
});
