import { canonicalJson } from '../controls/canonical-json.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { undelimited } from '../loop/dispatch/size-result.js';
import { type Outcome, outcomeKinds } from '../loop/outcome.js';
import type { Message } from '../model/content.js';
import type { ModelResponse, ToolDefinition } from '../model/model.js';
import { type ScriptedModel, scriptedModel } from '../testing/scripted-model.js';
import { type AnyTool, defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import type { TraceEvent } from '../trace/events.js';
import { splitTrace } from '../trace/split-trace.js';
import { executedStatuses } from './call-statuses.js';
import type {
  AgentConfig,
  EvalCase,
  EvalReport,
  EvalSuite,
  TrialContext,
  TrialView,
  Verdict,
} from './eval-types.js';
import { type RunEvalOptions, runEval } from './run-eval.js';

/** A tool result the recording holds: what the model was shown, and whether it was an error. */
export interface RecordedResult {
  content: string;
  isError: boolean;
}

/** One recorded run, read from its trace: what a regression case replays. */
export interface RecordedRun {
  runId: string;
  system: string;
  /** The messages the run started with: the case's input. */
  input: Message[];
  model: string;
  /** The tools it offered (the give-up tool left out: the loop adds its own). */
  tools: ToolDefinition[];
  /** The recorded outcome, or undefined when the trace was cut off before the run ended. */
  outcome: Outcome | undefined;
  steps: number;
  billedTokens: number;
  costUsd: number;
  /** The model's responses, in order. */
  responses: ModelResponse[];
  /** Executed results by `tool` + canonical input, in the order they were recorded. */
  results: Map<string, RecordedResult[]>;
  /** The model's input of each recorded key, as it asked for it (before its tool's schema ran). */
  inputs: Map<string, { tool: string; input: unknown }>;
}

/** The key a recorded result is found by: the tool and its canonical input, never the call id. */
export function recordedCallKey(tool: string, input: unknown): string {
  let canonical: string;
  try {
    canonical = canonicalJson(input);
  } catch {
    canonical = String(input);
  }
  return `${tool}\u0000${canonical}`;
}

/**
 * Reads the runs in a trace (one file may hold many, each in segments): for each, its starting
 * messages, tools, recorded outcome and bill, the model's responses and every executed tool result
 * keyed by tool and canonical input.
 */
export function recordedRuns(events: readonly TraceEvent[]): RecordedRun[] {
  const runs: RecordedRun[] = [];
  for (const run of splitTrace(events)) {
    const first = run.segments[0];
    if (!first) continue;
    const recorded: RecordedRun = {
      runId: run.runId,
      system: first.start.system,
      input: first.start.messages,
      model: first.start.model,
      tools: first.start.tools.filter((tool) => tool.name !== first.start.limits.giveUpTool),
      outcome: undefined,
      steps: 0,
      billedTokens: 0,
      costUsd: 0,
      responses: [],
      results: new Map(),
      inputs: new Map(),
    };
    const calls = new Map<string, { name: string; input: unknown }>();
    for (const segment of run.segments)
      for (const event of segment.events) {
        if (event.type === 'model-response') {
          recorded.responses.push(event.response);
          for (const block of event.response.content)
            if (block.type === 'tool_use') calls.set(block.id, { name: block.name, input: block.input });
        } else if (event.type === 'tool-result' && executedStatuses.has(event.status)) {
          const call = calls.get(event.callId);
          const key = recordedCallKey(event.tool, call?.input);
          const list = recorded.results.get(key) ?? [];
          list.push({ content: event.content, isError: event.isError });
          recorded.results.set(key, list);
          recorded.inputs.set(key, { tool: event.tool, input: call?.input });
        } else if (event.type === 'run-end') {
          recorded.outcome = event.outcome;
          recorded.steps = event.steps;
          recorded.billedTokens = event.billedTokens;
          recorded.costUsd = event.costUsd;
        }
      }
    runs.push(recorded);
  }
  return runs;
}

/** A model that plays a recorded run's responses in order (for a changed configuration with the same model). */
export function recordedModel(run: RecordedRun): ScriptedModel {
  return scriptedModel(
    run.responses.map((response) => () => response),
    { name: run.model, recordCalls: false },
  );
}

/** What a regression trial's tools noticed: calls the recording lacks. */
export interface RegressionWorld {
  recorded: RecordedRun;
  divergences: string[];
}

function replayedValue(result: RecordedResult): unknown {
  const text = undelimited(result.content);
  if (result.isError) throw new ToolError(text, { code: 'recorded_error' });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Tools that answer from the recording: a call is matched by tool and canonical input (the n-th
 * call to the same key gets the n-th recorded result). The recording holds what the model asked
 * for; a tool is handed its input after its schema ran (defaults filled in, values transformed), so
 * each recorded input is put through the configuration's schema too and matched in that form as
 * well. A call the recording lacks is a divergence: with `live`, the configuration's own tool runs
 * it; otherwise it answers with a labeled tool error (`not_recorded`). A key called more often than
 * it was recorded gets its last result, and the extra calls are a divergence too.
 */
export function replayedTools(
  world: RegressionWorld,
  tools: readonly AnyTool[] | undefined,
  live: boolean,
): AnyTool[] {
  const served = new Map<string, number>();
  const recorded = world.recorded;
  /** Per tool: the key each recorded input takes once the tool's schema has run. */
  const aliases = new Map<string, Promise<Map<string, string>>>();
  const aliasesOf = (tool: AnyTool) => {
    let found = aliases.get(tool.name);
    if (!found) {
      found = (async () => {
        const map = new Map<string, string>();
        for (const [key, call] of recorded.inputs) {
          if (call.tool !== tool.name) continue;
          try {
            const checked = await tool.validate(call.input);
            if (checked.ok) map.set(recordedCallKey(tool.name, checked.value), key);
          } catch {
            // A schema that throws on a recorded input leaves that input matched as it was.
          }
        }
        return map;
      })();
      aliases.set(tool.name, found);
    }
    return found;
  };
  const serve = (key: string): { value: unknown } | undefined => {
    const list = recorded.results.get(key);
    if (!list || list.length === 0) return undefined;
    const index = served.get(key) ?? 0;
    served.set(key, index + 1);
    if (index === list.length)
      world.divergences.push(
        `${key.replace('\u0000', '(')}) was called more often than recorded (${list.length}): served its last result again`,
      );
    return { value: replayedValue(list[Math.min(index, list.length - 1)] as RecordedResult) };
  };
  const missing = (tool: string, key: string, ranLive: boolean) =>
    world.divergences.push(
      `${tool}(${key.slice(tool.length + 1)}) is not in the recording${ranLive ? ': executed live' : ''}`,
    );
  if (tools && tools.length > 0)
    return tools.map(
      (tool): AnyTool => ({
        ...tool,
        execute: async (input, context) => {
          const key = recordedCallKey(tool.name, input);
          const found = serve(recorded.results.has(key) ? key : ((await aliasesOf(tool)).get(key) ?? key));
          if (found) return found.value;
          missing(tool.name, key, live);
          if (live) return tool.execute(input, context);
          throw new ToolError(`${tool.name}: this call is not in the recording`, { code: 'not_recorded' });
        },
      }),
    );
  // No tools given: the recorded definitions, accepting any input, answering from the recording.
  return recorded.tools.map((definition) =>
    defineTool({
      name: definition.name,
      description: definition.description,
      effect: 'read',
      inputJsonSchema: definition.inputSchema,
      input: { '~standard': { version: 1, vendor: 'reins', validate: (value: unknown) => ({ value }) } },
      execute: (input: unknown) => {
        const key = recordedCallKey(definition.name, input);
        const found = serve(key);
        if (found) return found.value;
        missing(definition.name, key, false);
        throw new ToolError(`${definition.name}: this call is not in the recording`, {
          code: 'not_recorded',
        });
      },
    }),
  );
}

export interface RegressionOptions {
  /** The suite's name. @default 'regression' */
  name?: string;
  /**
   * The changed configuration each recorded run is replayed against (a new prompt, tools, limits or
   * model). Its tools answer from the recording; `recordedModel(run)` replays the recorded model.
   */
  agent: (run: RecordedRun, context: TrialContext<RegressionWorld>) => AgentConfig | Promise<AgentConfig>;
  /** Run a call the recording lacks with the configuration's own tool. @default false */
  live?: boolean;
  /** Success. @default the replayed outcome has the recorded outcome's kind */
  expect?: (view: TrialView<RegressionWorld>, run: RecordedRun) => Verdict | Promise<Verdict>;
}

/** A recorded run against its replay. */
export interface RegressionDiff {
  caseId: string;
  recorded: { outcome: Outcome['kind'] | null; steps: number; billedTokens: number; costUsd: number };
  replayed: {
    outcome: Outcome['kind'];
    steps: number;
    billedTokens: number;
    costUsd: number;
    pass: boolean;
  }[];
  /** The replay's outcome kind differs from the recording's in some trial. */
  outcomeChanged: boolean;
  /** Mean replayed cost minus the recorded cost. */
  costDeltaUsd: number;
  /** Calls the recording lacked, per trial. */
  divergences: string[][];
}

/**
 * Traces as regression cases: each recorded run becomes a case whose input and tool results are
 * replayed against a changed configuration. Returns the suite; `runRegression` runs it and diffs
 * each case against its recording.
 */
export function regressionSuite(
  events: readonly TraceEvent[],
  options: RegressionOptions,
): EvalSuite<RegressionWorld> & { runs: RecordedRun[] } {
  if (typeof options?.agent !== 'function') throw new ConfigurationError('agent', 'must be a function');
  const runs = recordedRuns(events).filter((run) => run.outcome !== undefined);
  const byId = new Map(runs.map((run) => [run.runId, run]));
  const cases: EvalCase<RegressionWorld>[] = runs.map((run) => ({
    id: run.runId,
    input: run.input,
    world: () => ({ recorded: run, divergences: [] }),
    // Any outcome may be the recorded one: the predicate compares against the recording.
    acceptOutcomes: outcomeKinds,
    expect: (view) =>
      options.expect
        ? options.expect(view, run)
        : view.outcome.kind === run.outcome?.kind || {
            pass: false,
            reason: `recorded ${run.outcome?.kind}, replayed ${view.outcome.kind}`,
          },
  }));
  return {
    name: options.name ?? 'regression',
    cases,
    runs,
    agent: async (context) => {
      const run = byId.get(context.caseId) as RecordedRun;
      const config = await options.agent(run, context);
      return { ...config, tools: replayedTools(context.world, config.tools, options.live === true) };
    },
  };
}

/**
 * Replays recorded runs against a changed configuration and diffs each against its recording:
 * outcome kind, steps, billed tokens and cost, and the calls the recording lacked. Runs whose trace
 * was cut off before they ended are listed in `skipped`. The default predicate compares the outcome
 * kind only (a live model never repeats its text); pass `expect` to check the answer itself.
 *
 * @example
 * const { report, diffs } = await runRegression(events, {
 *   agent: (run) => ({ model: recordedModel(run), system: run.system, maxSteps: 4 }),
 * });
 */
export async function runRegression(
  events: readonly TraceEvent[],
  options: RegressionOptions & { run?: RunEvalOptions },
): Promise<{ report: EvalReport; diffs: RegressionDiff[]; skipped: string[] }> {
  const worlds = new Map<string, RegressionWorld[]>();
  const suite = regressionSuite(events, options);
  const tracked: EvalSuite<RegressionWorld> = {
    ...suite,
    cases: suite.cases.map((kase) => ({
      ...kase,
      world: (context) => {
        const world: RegressionWorld = {
          recorded: suite.runs.find((run) => run.runId === kase.id) as RecordedRun,
          divergences: [],
        };
        const list = worlds.get(kase.id) ?? [];
        list[context.trial] = world;
        worlds.set(kase.id, list);
        return world;
      },
    })),
  };
  const report = await runEval(tracked, { trials: 1, ...options.run });
  const diffs = suite.runs.map((run): RegressionDiff => {
    const trials = report.trials.filter((trial) => trial.caseId === run.runId);
    const meanCost =
      trials.length === 0 ? 0 : trials.reduce((sum, trial) => sum + trial.costUsd, 0) / trials.length;
    return {
      caseId: run.runId,
      recorded: {
        outcome: run.outcome?.kind ?? null,
        steps: run.steps,
        billedTokens: run.billedTokens,
        costUsd: run.costUsd,
      },
      replayed: trials.map((trial) => ({
        outcome: trial.outcome.kind,
        steps: trial.trajectory.steps,
        billedTokens: trial.billedTokens,
        costUsd: trial.costUsd,
        pass: trial.pass,
      })),
      outcomeChanged: trials.some((trial) => trial.outcome.kind !== run.outcome?.kind),
      costDeltaUsd: meanCost - run.costUsd,
      divergences: trials.map((trial) => worlds.get(run.runId)?.[trial.trial]?.divergences ?? []),
    };
  });
  const skipped = recordedRuns(events)
    .filter((run) => run.outcome === undefined)
    .map(
      (run) => `${run.runId}: the trace was cut off before the run ended, so there is no outcome to compare`,
    );
  return { report, diffs, skipped };
}
