import type { RunOptions } from '../loop/options.js';
import type { Outcome } from '../loop/outcome.js';
import { runAgent } from '../loop/run-agent.js';
import type { RunResult } from '../loop/run-result.js';
import { scriptedModel } from '../testing/scripted-model.js';
import type { TraceEvent } from '../trace/events.js';
import { memoryTraceSink, type TraceSink } from '../trace/sink.js';
import { incidentTools } from './incident-tools.js';
import { type ScenarioName, scenarioScript, scenarios } from './scenarios.js';

/** Overrides for a scenario run: the lesson's toggles, plus anything else `runAgent` takes. */
export type ScenarioOverrides = Partial<
  Omit<RunOptions, 'model' | 'input' | 'tools' | 'system' | 'trace'>
> & {
  trace?: TraceSink;
};

/** A scenario run, as `reins demo --json` prints it. */
export interface ScenarioRun {
  scenario: ScenarioName;
  question: string;
  outcome: Outcome;
  steps: number;
  contextTokens: number;
  maxContextTokens: number;
  billedTokens: number;
  trace: TraceEvent[];
  result: RunResult;
}

/**
 * Runs one of the lesson's scenarios through the real `runAgent`: scripted decisions, real limits,
 * real counters, real detection.
 */
export async function runScenario(
  name: ScenarioName,
  overrides: ScenarioOverrides = {},
): Promise<ScenarioRun> {
  const scenario = scenarios[name];
  const memory = memoryTraceSink();
  const { trace: extraSink, ...rest } = overrides;
  const options: RunOptions = {
    model: scriptedModel(scenarioScript(scenario), { name: 'scripted-lesson-model' }),
    input: scenario.question,
    system: scenario.system,
    tools: incidentTools(scenario.data),
    actor: { id: 'oncall-engineer', scopes: ['incidents:read'] },
    maxSteps: scenario.limits.maxSteps,
    maxContextTokens: scenario.limits.maxContextTokens,
    repeatLimit: scenario.limits.repeatLimit,
    ...rest,
    trace: extraSink ? [memory, extraSink] : memory,
  };
  const result = await runAgent(options);
  return {
    scenario: name,
    question: scenario.question,
    outcome: result.outcome,
    steps: result.steps,
    contextTokens: result.contextTokens,
    maxContextTokens: options.maxContextTokens ?? 100_000,
    billedTokens: result.billedTokens,
    trace: memory.events,
    result,
  };
}
