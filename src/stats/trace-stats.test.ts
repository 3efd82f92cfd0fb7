import { describe, expect, it } from 'vitest';
import { runScenario, type ScenarioName } from '../scenarios/index.js';
import { fakeClock } from '../testing/fake-clock.js';
import type { TraceEvent } from '../trace/events.js';
import { isSilentFailure, silentFailureKinds } from './silent-failure.js';
import { traceStats } from './trace-stats.js';

const prices = { '*': { inputUsdPerMillionTokens: 1_000, outputUsdPerMillionTokens: 1_000 } };
const dayMs = 86_400_000;

async function lessonTraces(startMs = Date.UTC(2026, 0, 5, 12)): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  const names: ScenarioName[] = ['happy', 'loops', 'drowns', 'wanders'];
  for (const [index, name] of names.entries()) {
    const run = await runScenario(name, {
      runId: `run_${name}`,
      clock: fakeClock(startMs + index * dayMs),
      prices,
    });
    events.push(...run.trace);
  }
  return events;
}

describe('traceStats over the lesson scenarios', () => {
  it('counts one success and three silent failures, with the step-limit rate and the cost per success', async () => {
    const events = await lessonTraces();
    const stats = traceStats(events.reverse());
    expect(stats.runs).toBe(4);
    expect(stats.byOutcome).toEqual({ answered: 1, looped: 1, over_budget: 1, step_limit: 1 });
    expect(stats.silentFailures).toBe(3);
    expect(stats.silentFailureRatio).toBe(0.75);
    expect(stats.stepLimitRate).toBe(0.25);
    expect(stats.hardErrorRate).toBe(0);
    expect(stats.costUsd).toBeGreaterThan(0);
    expect(stats.costPerRunUsd).toBeCloseTo(stats.costUsd / 4, 12);
    // Only one run answered, so it carries the whole bill.
    expect(stats.costPerSuccessUsd).toBeCloseTo(stats.costUsd, 12);
    expect(stats.failureCostUsd).toBeLessThan(stats.costUsd);
    expect(stats.days.map((day) => [day.day, day.runs, day.silentFailureRatio])).toEqual([
      ['2026-01-05', 1, 0],
      ['2026-01-06', 1, 1],
      ['2026-01-07', 1, 1],
      ['2026-01-08', 1, 1],
    ]);
    expect(stats.toolCalls).toBe(Object.values(stats.tools).reduce((sum, tool) => sum + tool.calls, 0));
    expect(stats.nextToolPredictability).not.toBeNull();
  });

  it('counts a paused run once, by how it finally ended', () => {
    const runEnd = (seq: number, kind: 'awaiting_approval' | 'answered', costUsd: number): TraceEvent =>
      ({
        v: 1,
        type: 'run-end',
        runId: 'r',
        seq,
        at: 0,
        outcome: kind === 'answered' ? { kind, text: 'ok' } : { kind, requests: [] },
        steps: 1,
        contextTokens: 0,
        billedTokens: 0,
        costUsd,
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      }) as TraceEvent;
    const paused = traceStats([runEnd(3, 'awaiting_approval', 1)]);
    expect(paused).toMatchObject({
      runs: 1,
      endedRuns: 0,
      silentFailureRatio: null,
      byOutcome: { awaiting_approval: 1 },
    });
    const resumed = traceStats([runEnd(9, 'answered', 3), runEnd(3, 'awaiting_approval', 1)]);
    expect(resumed).toMatchObject({
      runs: 1,
      endedRuns: 1,
      costUsd: 3,
      costPerSuccessUsd: 3,
      byOutcome: { answered: 1 },
    });
  });

  it('the workflow tell is 1 when every tool always has the same successor', () => {
    const result = (seq: number, tool: string, runId: string): TraceEvent =>
      ({
        v: 1,
        type: 'tool-result',
        runId,
        seq,
        at: 0,
        step: seq,
        callId: `c${seq}`,
        tool,
        status: 'ok',
        content: '',
        isError: false,
        resultTokens: 0,
        durationMs: 0,
        error: null,
      }) as TraceEvent;
    const fixed = traceStats(['a', 'b', 'c', 'a', 'b', 'c'].map((tool, seq) => result(seq, tool, 'r')));
    expect(fixed.nextToolPredictability).toBe(1);
    const varied = traceStats(['a', 'b', 'a', 'c'].map((tool, seq) => result(seq, tool, 'r')));
    expect(varied.nextToolPredictability).toBeCloseTo(2 / 3, 12);
  });

  it('names the silent kinds', () => {
    expect(silentFailureKinds).toEqual([
      'step_limit',
      'over_budget',
      'looped',
      'gave_up',
      'truncated',
      'refused',
    ]);
    expect(isSilentFailure('hard_error')).toBe(false);
    expect(isSilentFailure('answered')).toBe(false);
  });
});
