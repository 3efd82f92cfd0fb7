import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { retryExact, simModels, timeoutExact } from '../src/sim/index.js';

const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...env, ...extraEnv } });

describe('reins model', () => {
  it('retry --json has the contract keys, equal to the library', () => {
    const run = reins(['model', 'retry', '--json', '--trials', '20000', '--seed', '3']);
    expect(run.status).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.exact).toEqual(retryExact());
    expect(Object.keys(json.monteCarlo)).toEqual(
      expect.arrayContaining(['meanCostUsd', 'ci95', 'multiplier', 'gaveUpRate', 'trials', 'seed']),
    );
    expect(json.monteCarlo).toMatchObject({ trials: 20_000, seed: 3 });
  });

  it('every model answers --json with its defaults', () => {
    for (const model of simModels) {
      const args = ['model', model.name, '--json', ...(model.monteCarlo ? ['--trials', '2000'] : [])];
      const run = reins(args);
      expect(run.status, `${model.name}: ${run.stderr}`).toBe(0);
      expect(JSON.parse(run.stdout), model.name).toBeTypeOf('object');
    }
  });

  it('latency --json has step and run statistics, each with a 95 % interval', () => {
    const json = JSON.parse(reins(['model', 'latency', '--json', '--trials', '20000']).stdout);
    for (const level of ['step', 'run']) {
      for (const key of ['mean', 'p50', 'p95', 'p99']) {
        expect(json[level][key], `${level}.${key}`).toEqual({
          value: expect.any(Number),
          ci95: [expect.any(Number), expect.any(Number)],
        });
      }
    }
    expect(json.step.p50.ci95[0]).toBeLessThanOrEqual(json.step.p50.value);
    expect(json.trials).toBe(20_000);
  });

  it('timeout --json lists the curve and the optimum', () => {
    const json = JSON.parse(reins(['model', 'timeout', '--json', '--trials', '2000']).stdout);
    expect(json.optimum).toEqual(timeoutExact().optimum);
    expect(json.curve[0]).toEqual(
      expect.objectContaining({
        timeoutSeconds: 5,
        exactCostUsd: expect.any(Number),
        monteCarloCostUsd: expect.any(Number),
      }),
    );
  });

  it('prints a table like the posts, and flags reach the model', () => {
    const run = reins(['model', 'quadratic', '--steps', '80', '--kept', '40']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('$3.9432');
    const restart = JSON.parse(
      reins(['model', 'retry', '--mode', 'restart', '--p', '0.15', '--json', '--trials', '1000']).stdout,
    );
    expect(restart.exact.multiplier).toBeCloseTo(1.97, 2);
    const layers = JSON.parse(reins(['model', 'amplification', '--layers', '1,5,3', '--json']).stdout);
    expect(layers.attemptsPerItem).toBe(15);
  });

  it('--plot writes an SVG chart', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'reins-plot-')), 'retry.svg');
    const run = reins(['model', 'retry', '--trials', '1000', '--plot', file]);
    expect(run.status).toBe(0);
    const svg = readFileSync(file, 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('retry in place');
    expect(svg).toContain('restart from step 0');
    expect(svg.match(/<path /g)?.length).toBe(2);
  });

  it('--plot refuses any extension but .svg, writing nothing', () => {
    const folder = mkdtempSync(join(tmpdir(), 'reins-plot-'));
    for (const name of ['retry.png', 'retry.svg.pdf', 'retry']) {
      const file = join(folder, name);
      const run = reins(['model', 'retry', '--trials', '100', '--plot', file]);
      expect(run.status, name).toBe(2);
      expect(run.stderr, name).toMatch(/--plot writes SVG only: name a \.svg file, got ".*"/);
      expect(run.stdout, name).toBe('');
      expect(existsSync(file), name).toBe(false);
    }
    expect(reins(['model', 'retry', '--trials', '100', '--plot', join(folder, 'RETRY.SVG')]).status).toBe(0);
  });

  it('a closed-form model that computes for long shows it is working on stderr, and its output is unchanged', () => {
    const args = ['model', 'quadratic', '--steps', '20000', '--json'];
    const shown = reins(args, { REINS_PROGRESS: '1', REINS_PROGRESS_AFTER_MS: '0' });
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stderr).toMatch(/reins model quadratic: computing… \d+s elapsed/);
    const quiet = reins(args);
    expect(quiet.stderr).toBe('');
    expect(JSON.parse(shown.stdout)).toEqual(JSON.parse(quiet.stdout));
    expect(JSON.parse(quiet.stdout)).toMatchObject({ params: { steps: 20_000 } });
    // The chart crosses back from the worker for --plot.
    const file = join(mkdtempSync(join(tmpdir(), 'reins-plot-')), 'quadratic.svg');
    const plotted = reins(['model', 'quadratic', '--steps', '80', '--kept', '40', '--plot', file], {
      REINS_PROGRESS: '1',
      REINS_PROGRESS_AFTER_MS: '0',
    });
    expect(plotted.status, plotted.stderr).toBe(0);
    expect(plotted.stdout).toContain('$3.9432');
    expect(readFileSync(file, 'utf8')).toMatch(/^<svg /);
  });

  it('shows a progress bar on stderr when Monte Carlo runs long', () => {
    const run = reins(['model', 'cascade', '--trials', '300000'], {
      REINS_PROGRESS: '1',
      REINS_PROGRESS_AFTER_MS: '0',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/Monte Carlo \[.*\] \d+%/);
    const quiet = reins(['model', 'cascade', '--trials', '3000']);
    expect(quiet.stderr).toBe('');
  });

  it.each([
    [['retry', '--mode', 'restart', '--p', '1'], /--p must be < 1 with --mode restart/],
    [['retry', '--p', 'abc'], /--p must be a number in \[0, 1\], got "abc"/],
    [['retry', '--p', '1.5'], /--p must be a number in \[0, 1\], got 1.5/],
    [['quadratic', '--system', '-5'], /--system must be a number ≥ 0, got -5/],
    [['compaction', '--retain', '1.2'], /--retain must be a number in \[0, 1\], got 1.2/],
    [['retry', '--mode', 'sideways'], /--mode must be one of inplace, restart/],
    [['retry', '--trials', '0'], /--trials must be a whole number ≥ 1/],
    [
      ['timeout', '--durations', '0.5:1-6'],
      /--durations must be weight:low-high buckets .* weights sum to 0.5, not 1/,
    ],
    [['nope'], /unknown command 'nope'[\s\S]*models: retry, quadratic/],
  ])('exits 2 with a clear message: %j', (args, message) => {
    const run = reins(['model', ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
