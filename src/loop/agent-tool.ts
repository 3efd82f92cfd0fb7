import type { JobBudget } from '../budget/job-budget.js';
import { type AnyTool, defineTool, type ToolContext, type ToolEffect } from '../tools/define-tool.js';
import type { InferOutput, StandardSchema } from '../tools/standard-schema.js';
import { untrustedResult } from '../tools/untrusted-result.js';
import type { RunOptions } from './options.js';
import { describeOutcome, type Outcome } from './outcome.js';
import { runAgent } from './run-agent.js';

/** What a sub-agent's run may set: everything but what it inherits from the parent's call. */
export type SubAgentOptions = Omit<RunOptions, 'actor' | 'jobBudget' | 'spender' | 'signal' | 'runId'>;

/** Options for {@link agentTool}. */
export interface AgentToolSpec<S extends StandardSchema> {
  name: string;
  description: string;
  /** The tool's input, as the parent model fills it (often `{ task: string }`). */
  input: S;
  /** The sub-agent's run for one call: model, tools, limits, and its `input` (the task). */
  agent: (input: InferOutput<S>, context: ToolContext) => SubAgentOptions;
  /**
   * What the sub-agent may do, for the parent's kill switch and taint guard: `read` unless it has
   * tools that write. @default 'read'
   */
  effect?: ToolEffect;
  /** The parent's per-call timeout for the whole sub-agent. @default the parent's toolTimeoutMs */
  timeoutMs?: number;
}

/** What the parent model is shown: the sub-agent's run id (its trace), how it ended, its answer. */
export interface AgentToolOutput {
  /** The sub-agent's run id: its events in the trace carry it. */
  runId: string;
  outcome: Outcome['kind'];
  /** The answer (or best answer at its step limit); null when it ended without one. */
  answer: string | null;
  /** Why it ended, for anything but an answer. */
  detail?: string;
  steps: number;
  billedTokens: number;
}

/**
 * A sub-agent as a tool. Each call runs `runAgent` with what the parent's call carries: the
 * parent's actor (every tool the sub-agent calls is authorized against the same end user), the
 * job's budget (charged as `<parent spender>/tool:<name>`, so an exhausted job names the
 * sub-agent), the call's signal (its timeout and cancellation), and the parent's taint: when
 * untrusted content was in the parent's context, the task it wrote is untrusted input and the
 * sub-agent starts tainted. Its result carries the taint of what the sub-agent read: an answer
 * written after untrusted content (its own reads, or an inherited taint) reaches the parent
 * delimited and counted untrusted; an answer from trusted reads only is trusted. The sub-agent's
 * run id is `<parent run id>.<call id>` and is in the result, so its trace is found from the
 * parent's.
 *
 * @example
 * import { z } from 'zod';
 * import { agentTool } from 'reins';
 * import { scriptedModel } from 'reins/testing';
 * const research = agentTool({
 *   name: 'research',
 *   description: 'Research a question and answer it.',
 *   input: z.object({ question: z.string() }),
 *   agent: ({ question }) => ({ model: scriptedModel([{ text: `About ${question}: …` }]), input: question, maxSteps: 4 }),
 * });
 */
export function agentTool<S extends StandardSchema>(spec: AgentToolSpec<S>): AnyTool {
  return defineTool({
    name: spec.name,
    description: spec.description,
    input: spec.input,
    effect: spec.effect ?? 'read',
    // Trusted unless a call's sub-agent read untrusted content: that result is marked per call.
    trustedOutput: true,
    ...(spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs }),
    async execute(input, context): Promise<AgentToolOutput> {
      const options = spec.agent(input, context);
      const inherited = context.tainted === true;
      const run: RunOptions = {
        ...options,
        runId: `${context.runId}.${context.callId}`,
        signal: context.signal,
        spender: context.spender ?? `agent:${context.runId}/tool:${spec.name}`,
      };
      if (context.actor !== undefined) run.actor = context.actor;
      const budget: JobBudget | undefined = context.jobBudget;
      if (budget !== undefined) run.jobBudget = budget;
      if (inherited) run.taint = { ...options.taint, untrustedInput: true };
      const result = await runAgent(run);
      const { outcome } = result;
      const answer =
        outcome.kind === 'answered'
          ? outcome.text
          : outcome.kind === 'step_limit'
            ? (outcome.finalText ?? null)
            : null;
      const output: AgentToolOutput = {
        runId: result.runId,
        outcome: outcome.kind,
        answer,
        steps: result.steps,
        billedTokens: result.billedTokens,
      };
      if (outcome.kind !== 'answered') output.detail = describeOutcome(outcome);
      const read = (result.state.taint?.untrustedResults ?? 0) > 0;
      return inherited || read ? untrustedResult(output) : output;
    },
  });
}
