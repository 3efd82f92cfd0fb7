import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRunState, resumeAgent } from '../src/index.js';
import { readJsonlTrace } from '../src/node/index.js';
import { incidentTools, scenarioScript, scenarios } from '../src/scenarios/index.js';
import { scriptedModel } from '../src/testing/index.js';
import { replayTrace } from '../src/trace/replay.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

// Frozen files written by earlier versions. They must keep loading: change the schema with a new
// version and a migration, never by editing these.
describe('frozen fixtures still load', () => {
  it('trace v1 (loops scenario) replays to its recorded outcome', async () => {
    const { events } = readJsonlTrace(fixture('trace-v1-loops.jsonl'));
    const replay = await replayTrace(events);
    expect(replay.matches).toBe(true);
    expect(replay.outcome).toMatchObject({
      kind: 'looped',
      key: 'get_latency_breakdown:{"service":"checkout"}',
    });
  });

  it('trace v1 in the compact encoding reads back as the plain file and replays', async () => {
    const compact = readJsonlTrace(fixture('trace-compact-v1-loops.jsonl'));
    const plain = readJsonlTrace(fixture('trace-v1-loops.jsonl'));
    expect(compact).toEqual(plain);
    expect((await replayTrace(compact.events)).matches).toBe(true);
  });

  it('run state v1 (happy scenario, failed at step 3) resumes to an answer', async () => {
    const state = parseRunState(readFileSync(fixture('run-state-v1-happy.json'), 'utf8'));
    expect(state).toMatchObject({ version: 1, step: 2, status: 'ended', outcome: { kind: 'hard_error' } });
    const scenario = scenarios.happy;
    const model = scriptedModel(scenarioScript(scenario).slice(state.step));
    const result = await resumeAgent(state, {
      model,
      tools: incidentTools(scenario.data),
      actor: { id: 'oncall-engineer', scopes: ['incidents:read'] },
      maxContextTokens: 8_000,
    });
    expect(result.outcome.kind).toBe('answered');
    expect(result.steps).toBe(4);
  });
});
