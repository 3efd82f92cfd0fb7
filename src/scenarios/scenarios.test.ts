import { describe, expect, it } from 'vitest';
import { fakeClock } from '../testing/fake-clock.js';
import { runScenario } from './run-scenario.js';
import { drownsLogPayload } from './scenarios.js';

const clock = () => ({ clock: fakeClock(), generateId: (prefix: string) => `${prefix}_1` });

describe("the lesson's four scenarios, against the real controls", () => {
  it('happy: answers in four steps with the context growing every step', async () => {
    const run = await runScenario('happy', clock());
    expect(run.outcome.kind).toBe('answered');
    expect(run.steps).toBe(4);
    const contexts = run.trace
      .filter((e) => e.type === 'step-start')
      .map((e) => (e.type === 'step-start' ? e.contextTokens : 0));
    expect(contexts).toHaveLength(4);
    for (let i = 1; i < contexts.length; i++) expect(contexts[i]!).toBeGreaterThan(contexts[i - 1]!);
    // Billing grows faster than steps: the whole context is re-sent each step.
    expect(run.billedTokens).toBeGreaterThan(4 * contexts[0]!);
  });

  it('loops: repeat detection ends it looped on the third identical call, naming the call', async () => {
    const run = await runScenario('loops', clock());
    expect(run.outcome).toMatchObject({
      kind: 'looped',
      reason: 'repeated_call',
      key: 'get_latency_breakdown:{"service":"checkout"}',
      count: 3,
    });
    expect(run.steps).toBe(3);
    expect(run.trace.filter((e) => e.type === 'tool-result')).toHaveLength(2);
  });

  it('loops without repeat detection burns to the step limit and bills more', async () => {
    const detected = await runScenario('loops', clock());
    const run = await runScenario('loops', { ...clock(), repeatLimit: false });
    expect(run.outcome).toMatchObject({ kind: 'step_limit', limit: 6 });
    expect(run.steps).toBe(6);
    expect(run.billedTokens).toBeGreaterThan(2 * detected.billedTokens);
  });

  it('drowns: one ~41,000-token result is over an 8,000-token budget on step one', async () => {
    const payload = JSON.stringify(drownsLogPayload());
    expect(Math.ceil(payload.length / 4)).toBeGreaterThan(40_000);
    expect(Math.ceil(payload.length / 4)).toBeLessThan(42_000);
    const run = await runScenario('drowns', clock());
    expect(run.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'context_tokens',
      limit: 8_000,
      phase: 'after-results',
    });
    expect(run.steps).toBe(1);
  });

  it('wanders: every step distinct, nothing converges, step_limit with a best answer', async () => {
    const run = await runScenario('wanders', clock());
    expect(run.outcome).toMatchObject({ kind: 'step_limit', limit: 6 });
    expect(run.outcome.kind === 'step_limit' && run.outcome.finalText).toContain('not found a cause');
    expect(run.steps).toBe(6);
  });

  it('drowns with results capped completes instead of going over budget', async () => {
    const run = await runScenario('drowns', { ...clock(), maxResultTokens: 2_000 });
    expect(run.outcome.kind).toBe('answered');
    // Its answer is the log's own first line: 00:00:00.810 ERROR checkout-6 SessionExpired …
    expect(drownsLogPayload().lines[0]).toMatch(/^00:00:00\.810 ERROR checkout-6 SessionExpired /);
    expect(run.outcome.kind === 'answered' && run.outcome.text).toBe(
      'The first error today was at 00:00:00.810 (a SessionExpired on checkout-6).',
    );
    const result = run.trace.find((e) => e.type === 'tool-result');
    expect(result?.type === 'tool-result' && result.truncation?.field).toBe('lines');
  });

  it('the toggles change the outcome: a tighter step limit and a bigger context budget', async () => {
    expect((await runScenario('happy', { ...clock(), maxSteps: 2 })).outcome.kind).toBe('step_limit');
    expect((await runScenario('drowns', { ...clock(), maxContextTokens: 60_000 })).outcome.kind).toBe(
      'answered',
    );
  });
});
