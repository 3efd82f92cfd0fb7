import pc from 'picocolors';
import { contextPolicy } from '../context/cache-policy.js';
import { jsonlTraceSink } from '../node/jsonl-trace-sink.js';
import {
  runScenario,
  type ScenarioName,
  type ScenarioOverrides,
  type ScenarioRun,
  scenarioNames,
  scenarios,
} from '../scenarios/index.js';
import { renderTrace } from '../trace/render.js';

export interface DemoFlags {
  repeatDetection: boolean;
  maxSteps?: number;
  maxContextTokens?: number;
  /** Cap every tool result at this many tokens (the fix for `drowns`). */
  capResults?: number;
  json: boolean;
  traceOut?: string;
  /** How `traceOut` is written (docs/trace-format.md). */
  traceEncoding?: 'plain' | 'compact';
}

export const cliStyle = { dim: pc.dim, bold: pc.bold, good: pc.green, bad: pc.red, warn: pc.yellow };

/** The policy the drowns demo runs with: a 6,000-token working set under the lesson's 8,000 limit. */
export function drownsPolicy() {
  return contextPolicy({ budgetTokens: 6_000, admit: { maxResultTokens: 1_200, previewTokens: 300 } });
}

/** `reins demo`: plays the lesson's scenarios through the real loop. */
export async function demo(which: ScenarioName | 'all', flags: DemoFlags): Promise<number> {
  const names = which === 'all' ? [...scenarioNames] : [which];
  const runs: ScenarioRun[] = [];
  for (const name of names) {
    const overrides: ScenarioOverrides = {};
    if (!flags.repeatDetection) overrides.repeatLimit = false;
    if (flags.maxSteps !== undefined) overrides.maxSteps = flags.maxSteps;
    if (flags.maxContextTokens !== undefined) overrides.maxContextTokens = flags.maxContextTokens;
    if (flags.capResults !== undefined) overrides.maxResultTokens = flags.capResults;
    const sink = flags.traceOut
      ? jsonlTraceSink(
          names.length > 1 ? flags.traceOut.replace(/(\.jsonl)?$/, `.${name}.jsonl`) : flags.traceOut,
          { mode: 'truncate', encoding: flags.traceEncoding ?? 'plain' },
        )
      : undefined;
    if (sink) overrides.trace = sink;
    const run = await runScenario(name, overrides);
    sink?.close();
    runs.push(run);
    // The other fix for `drowns`, in the window rather than the tool: a context policy admits the
    // result capped, with a recall handle, and the run answers.
    const { trace: _written, ...untraced } = overrides;
    const windowed =
      name === 'drowns' && !flags.json
        ? await runScenario(name, { ...untraced, context: drownsPolicy() })
        : undefined;
    if (!flags.json) {
      const scenario = scenarios[name];
      console.log(pc.bold(pc.cyan(`\n━━ ${scenario.title} (${name}) ━━`)));
      console.log(pc.dim(scenario.lesson));
      console.log(renderTrace(run.trace, { style: cliStyle }));
      if (sink) console.log(pc.dim(`trace written to ${sink.path}`));
      if (windowed) {
        console.log(pc.bold(pc.cyan(`\n━━ ${scenario.title}, with a context policy (drowns) ━━`)));
        console.log(
          pc.dim(
            'The same run with contextPolicy({ budgetTokens: 6_000 }): the result enters the window as its first 300 tokens and a recall handle; the transcript keeps all of it.',
          ),
        );
        console.log(renderTrace(windowed.trace, { style: cliStyle }));
      }
    }
  }
  if (flags.json) {
    const rows = runs.map((run) => ({
      scenario: run.scenario,
      outcome: run.outcome,
      steps: run.steps,
      contextTokens: run.contextTokens,
      billedTokens: run.billedTokens,
      trace: run.trace,
    }));
    console.log(JSON.stringify(which === 'all' ? rows : rows[0], null, 2));
  } else if (which === 'all') {
    console.log(pc.bold('\nsummary'));
    for (const run of runs) {
      console.log(
        `  ${run.scenario.padEnd(8)} ${run.outcome.kind.padEnd(12)} steps ${String(run.steps).padStart(2)}  context ${run.contextTokens.toLocaleString('en-US').padStart(6)} / ${run.maxContextTokens.toLocaleString('en-US')}  billed ${run.billedTokens.toLocaleString('en-US').padStart(6)}`,
      );
    }
  }
  return 0;
}
