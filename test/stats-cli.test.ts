import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonlTraceSink } from '../src/node/jsonl-trace-sink.js';
import { otelTraceSink } from '../src/otel/index.js';
import { runScenario, type ScenarioName } from '../src/scenarios/index.js';
import { fakeClock } from '../src/testing/fake-clock.js';

// `reins stats` as a user runs it: the built CLI (`npm test` builds first) over JSONL files.
const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
const prices = { '*': { inputUsdPerMillionTokens: 1_000, outputUsdPerMillionTokens: 1_000 } };
const day = 86_400_000;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reins-stats-'));
  mkdirSync(join(dir, 'nested'));
  // Two days: day one answers twice and loops once; day two wanders and drowns.
  const plan: [ScenarioName, number, string][] = [
    ['happy', 0, 'a.jsonl'],
    ['happy', 0, 'a.jsonl'],
    ['loops', 0, 'b.jsonl'],
    ['wanders', 1, 'nested/c.jsonl'],
    ['drowns', 1, 'nested/c.jsonl'],
  ];
  for (const [index, [name, dayIndex, file]] of plan.entries()) {
    const sink = jsonlTraceSink(join(dir, file));
    await runScenario(name, {
      trace: sink,
      runId: `run_${index}_${name}`,
      clock: fakeClock(Date.UTC(2026, 2, 1, 9) + dayIndex * day),
      prices,
    });
  }
  writeFileSync(join(dir, 'notes.txt'), 'not a trace\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reins stats', () => {
  it('--json prints the documented figures over a directory of traces', () => {
    const result = reins('stats', dir, '--json');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const stats = JSON.parse(result.stdout);
    expect(stats).toMatchObject({
      runs: 5,
      byOutcome: { answered: 2, looped: 1, step_limit: 1, over_budget: 1 },
      silentFailureRatio: 0.6,
      stepLimitRate: 0.2,
      files: 3,
    });
    expect(stats.costPerRunUsd).toBeCloseTo(stats.costUsd / 5, 12);
    expect(stats.costPerSuccessUsd).toBeCloseTo(stats.costUsd / 2, 12);
    expect(stats.days.map((d: { day: string; runs: number }) => [d.day, d.runs])).toEqual([
      ['2026-03-01', 3],
      ['2026-03-02', 2],
    ]);
  });

  it('agrees with the OpenTelemetry gauges over the same runs', async () => {
    const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
    class Reader extends MetricReader {
      protected override async onForceFlush(): Promise<void> {}
      protected override async onShutdown(): Promise<void> {}
    }
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const sink = otelTraceSink({ meter: meterProvider.getMeter('reins') });
    for (const [index, name] of (['happy', 'happy', 'loops', 'wanders', 'drowns'] as const).entries())
      await runScenario(name, { trace: sink, runId: `r${index}`, clock: fakeClock(), prices });
    const { resourceMetrics } = await reader.collect();
    const gauge = (name: string) =>
      resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name)
        ?.dataPoints[0]?.value;
    const offline = JSON.parse(reins('stats', dir, '--json').stdout);
    expect(gauge('reins.runs.silent_failure_ratio')).toBe(offline.silentFailureRatio);
    expect(gauge('reins.runs.step_limit_rate')).toBe(offline.stepLimitRate);
    expect(gauge('reins.runs.cost_per_success')).toBeCloseTo(offline.costPerSuccessUsd, 12);
    await meterProvider.shutdown();
  });

  it('prints a table, and writes the daily chart with --svg', () => {
    const svg = join(dir, 'chart.svg');
    const result = reins('stats', join(dir, 'a.jsonl'), '--svg', svg);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('silent-failure ratio');
    expect(result.stdout).toContain('0.0%');
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg[\s\S]*silent-failure ratio[\s\S]*<\/svg>\s*$/);
  });

  it('exits 1 when a threshold is crossed, naming it, and 0 when none is', () => {
    const crossed = reins('stats', dir, '--max-silent-failure-ratio', '0.5', '--max-step-limit-rate', '0.25');
    expect(crossed.status).toBe(1);
    expect(crossed.stderr).toBe('reins stats: threshold crossed: silent-failure ratio 60.0% > 50.0%\n');
    const cost = reins('stats', dir, '--json', '--max-cost-per-success', '0');
    expect(cost.status).toBe(1);
    expect(cost.stderr).toMatch(/threshold crossed: cost per success \$/);
    expect(reins('stats', dir, '--max-silent-failure-ratio', '0.6').status).toBe(0);
  });

  it('exits 2 for usage errors and for paths with no trace', () => {
    expect(reins('stats', dir, '--max-step-limit-rate', 'lots').status).toBe(2);
    expect(reins('stats').status).toBe(2);
    const missing = reins('stats', join(dir, 'missing'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read/);
    const notTrace = reins('stats', join(dir, 'notes.txt'));
    expect(notTrace.status).toBe(2);
    const empty = mkdtempSync(join(tmpdir(), 'reins-stats-empty-'));
    expect(reins('stats', empty).stderr).toMatch(/no \.jsonl trace files/);
    rmSync(empty, { recursive: true });
  });
});
