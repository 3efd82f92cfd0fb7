import { describe, expect, it } from 'vitest';
import { incidentTools } from '../scenarios/incident-tools.js';
import { runScenario } from '../scenarios/run-scenario.js';
import { scenarios } from '../scenarios/scenarios.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { recordedModel, recordedRuns, runRegression } from './trace-cases.js';

const happy = await runScenario('happy');
const loops = await runScenario('loops');
const events = [...happy.trace, ...loops.trace];
const actor = { id: 'oncall', scopes: ['incidents:read'] };

describe('traces as regression cases', () => {
  it('reads every run of a trace: input, outcome, bill and results keyed by tool and canonical input', () => {
    const runs = recordedRuns(events);
    expect(runs.map((run) => run.outcome?.kind)).toEqual(['answered', 'looped']);
    const first = runs[0];
    expect(JSON.stringify(first?.input)).toContain(scenarios.happy.question);
    expect(first?.tools.map((tool) => tool.name)).not.toContain('cannot_complete');
    expect(first?.billedTokens).toBe(happy.billedTokens);
    expect([...(first?.results.keys() ?? [])][0]).toBe('get_service_health\u0000{"service":"checkout"}');
  });

  it('an unchanged configuration replays to the recorded outcomes and bill, with no divergence', async () => {
    const { report, diffs } = await runRegression(events, {
      agent: (run) => ({
        model: recordedModel(run),
        system: run.system,
        maxSteps: 6,
        maxContextTokens: 8_000,
        repeatLimit: 3,
      }),
    });
    expect(report.summary.passRate).toBe(1);
    for (const diff of diffs) {
      expect(diff.outcomeChanged).toBe(false);
      expect(diff.costDeltaUsd).toBe(0);
      expect(diff.replayed[0]?.billedTokens).toBe(diff.recorded.billedTokens);
      expect(diff.divergences).toEqual([[]]);
    }
  });

  it('a changed limit shows as a changed outcome, and fails the case', async () => {
    const { report, diffs } = await runRegression(happy.trace, {
      agent: (run) => ({ model: recordedModel(run), system: run.system, maxSteps: 2, onStepLimit: 'stop' }),
    });
    expect(diffs[0]).toMatchObject({
      outcomeChanged: true,
      recorded: { outcome: 'answered' },
      replayed: [{ outcome: 'step_limit', pass: false }],
    });
    expect(report.trials[0]?.reason).toBe('recorded answered, replayed step_limit');
  });

  it('matches results by tool and canonical input, not call id; a call the recording lacks is a divergence (or runs live)', async () => {
    const model = () =>
      scriptedModel([
        // Same call as recorded, another id and key order: served from the recording.
        { toolCalls: [{ id: 'other-id', name: 'get_service_health', input: { service: 'checkout' } }] },
        // Not recorded.
        { toolCalls: [{ name: 'get_latency_breakdown', input: { service: 'checkout' } }] },
        { text: 'done' },
      ]);
    const tools = incidentTools({
      get_latency_breakdown: { byInput: {}, fallback: { live: true } },
    });
    const replayed = await runRegression(happy.trace, { agent: () => ({ model: model(), tools, actor }) });
    expect(replayed.diffs[0]?.divergences[0]).toEqual([
      'get_latency_breakdown({"service":"checkout"}) is not in the recording',
    ]);
    const results = replayed.report.trials[0]?.trace.filter((event) => event.type === 'tool-result') ?? [];
    expect(
      results.map((event) =>
        event.type === 'tool-result' ? [event.status, event.content.includes('degraded')] : [],
      ),
    ).toEqual([
      ['ok', true],
      ['error', false],
    ]);
    const live = await runRegression(happy.trace, {
      agent: () => ({ model: model(), tools, actor }),
      live: true,
    });
    expect(live.diffs[0]?.divergences[0]).toEqual([
      'get_latency_breakdown({"service":"checkout"}) is not in the recording: executed live',
    ]);
    const liveResults = live.report.trials[0]?.trace.filter((event) => event.type === 'tool-result') ?? [];
    expect(liveResults.map((event) => (event.type === 'tool-result' ? event.status : ''))).toEqual([
      'ok',
      'ok',
    ]);
  });
});

describe('regression replay against schemas that fill in defaults', () => {
  it('matches a recorded call whose tool input gained a default, and reports calls beyond the recording', async () => {
    const { z } = await import('zod');
    const { defineTool } = await import('../tools/define-tool.js');
    const { memoryTraceSink } = await import('../trace/sink.js');
    const { runAgent } = await import('../loop/run-agent.js');
    let executions = 0;
    const search = defineTool({
      name: 'search',
      description: 'Searches.',
      effect: 'read',
      input: z.object({ q: z.string(), limit: z.number().default(10) }),
      execute: ({ q, limit }) => {
        executions++;
        return { q, limit, hits: [`${q}-1`] };
      },
    });
    const script = () =>
      scriptedModel([{ toolCalls: [{ name: 'search', input: { q: 'x' } }] }, { text: 'found x-1' }]);
    const sink = memoryTraceSink();
    await runAgent({ model: script(), input: 'find x', tools: [search], trace: sink });
    expect(executions).toBe(1);
    const replayed = await runRegression(sink.events, {
      agent: () => ({ model: script(), tools: [search] }),
      live: true,
    });
    expect(replayed.diffs[0]?.divergences).toEqual([[]]);
    expect(executions).toBe(1); // served from the recording, never run live
    const twice = await runRegression(sink.events, {
      agent: () => ({
        model: scriptedModel([
          { toolCalls: [{ name: 'search', input: { q: 'x' } }] },
          { toolCalls: [{ name: 'search', input: { q: 'x', limit: 10 } }] },
          { text: 'found x-1' },
        ]),
        tools: [search],
        repeatLimit: false,
      }),
    });
    expect(twice.diffs[0]?.divergences[0]).toEqual([
      'search({"q":"x"}) was called more often than recorded (1): served its last result again',
    ]);
  });

  it('lists a run cut off before it ended as skipped, not silently dropped', async () => {
    const cut = happy.trace.filter((event) => event.type !== 'run-end');
    const { diffs, skipped } = await runRegression(cut, { agent: (run) => ({ model: recordedModel(run) }) });
    expect(diffs).toEqual([]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatch(/cut off before the run ended/);
  });
});
