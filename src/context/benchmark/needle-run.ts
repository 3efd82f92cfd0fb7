import { z } from 'zod';
import { runAgent } from '../../loop/run-agent.js';
import type { Message } from '../../model/content.js';
import type { ModelRequest, ToolDefinition } from '../../model/model.js';
import { type ScriptStep, scriptedModel } from '../../testing/scripted-model.js';
import { approxTokenEstimator } from '../../tokens/token-estimator.js';
import { type AnyTool, defineTool } from '../../tools/define-tool.js';
import { ToolError } from '../../tools/tool-error.js';
import { contextPolicy } from '../cache-policy.js';
import type { ContextPolicy } from '../context-policy.js';
import type { TranscriptIndex } from '../transcript-index.js';
import { NeedleAgent } from './needle-agent.js';
import {
  type NeedlePlan,
  needleBudgetTokens,
  needleParameters,
  sizedText,
  stepCall,
  stepNarration,
  stepResult,
} from './needle-plan.js';
import { type RecallScore, windowLines } from './recall-score.js';

/** The reins policies the needle harness scores. */
export const needlePolicies = [
  'fifo',
  'clear-tool-results',
  'summarize',
  'pinned+summarize',
  'retrieval',
] as const;
export type NeedlePolicy = (typeof needlePolicies)[number];

/** What each policy is, in words, for the tables. */
export const needlePolicyLabels: Record<NeedlePolicy, string> = {
  fifo: "FIFO: compaction 'evict'",
  'clear-tool-results': "clearToolResults { afterSteps: 3 }, then 'evict'",
  summarize: "compaction 'summarize' (structuredDigest)",
  'pinned+summarize': "'summarize' + pinDecisions",
  retrieval: "compaction 'retrieve' + recall tool",
};

/** A policy at the harness's budget. `clear-tool-results` keeps 3 results, LangChain's ClearToolUsesEdit default. */
export function needlePolicy(name: NeedlePolicy, index?: (runId: string) => TranscriptIndex): ContextPolicy {
  const budgetTokens = needleBudgetTokens;
  switch (name) {
    case 'fifo':
      return contextPolicy({ budgetTokens, compaction: 'evict' });
    case 'clear-tool-results':
      return contextPolicy({ budgetTokens, compaction: 'evict', clearToolResults: { afterSteps: 3 } });
    case 'summarize':
      return contextPolicy({ budgetTokens, compaction: 'summarize' });
    case 'pinned+summarize':
      return contextPolicy({ budgetTokens, compaction: 'summarize', pinDecisions: true });
    case 'retrieval':
      if (!index) throw new Error('the retrieval policy needs a transcript index');
      return contextPolicy({ budgetTokens, compaction: 'retrieve', retrieval: { index } });
  }
}

/** The run's tools, playing the plan: a probe, a lookup that returns an order id, a fix that fails. */
export function needleTools(plan: NeedlePlan): AnyTool[] {
  const lookups = new Map<string, NeedlePlan['steps'][number]>();
  const fixes = new Map<string, NeedlePlan['steps'][number]>();
  for (const step of plan.steps) {
    if (step.kind === 'lookup') lookups.set(step.customer, step);
    if (step.kind === 'try_fix') fixes.set(step.approach, step);
  }
  // The bench's own tools: their output is not delimited, so a result is exactly its size.
  return [
    defineTool({
      name: 'probe',
      description: 'Read one area of the service.',
      input: z.object({ area: z.string() }),
      effect: 'read',
      trustedOutput: true,
      execute: ({ area }) => stepResult({ kind: 'probe', area }).text,
    }),
    defineTool({
      name: 'lookup',
      description: "Look up a customer's latest order.",
      input: z.object({ customer: z.string() }),
      effect: 'read',
      trustedOutput: true,
      execute: ({ customer }) => {
        const step = lookups.get(customer);
        return step ? stepResult(step).text : `no orders for ${customer}`;
      },
    }),
    defineTool({
      name: 'try_fix',
      description: 'Apply one remediation approach.',
      input: z.object({ approach: z.string() }),
      effect: 'read',
      trustedOutput: true,
      execute: ({ approach }) => {
        const step = fixes.get(approach);
        // A ToolError's message reaches the model (a plain Error's is hidden as an internal error).
        throw new ToolError(step ? stepResult(step).text : `${approach} failed: unknown approach`, {
          code: 'approach_failed',
        });
      },
    }),
  ];
}

/**
 * The first `keyTurn` steps, and the user's constraint after the last of them, as the conversation
 * the run continues: a user who adds a limit mid-task (post-11's "turn 3"). The loop itself has no
 * way for a user to speak mid-run, so the run starts from that conversation; its messages have the
 * shapes the loop writes (checked by the test).
 */
export function needleOpening(plan: NeedlePlan): Message[] {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: plan.task }] }];
  for (let k = 1; k <= needleParameters.keyTurn; k++) {
    const step = plan.steps[k - 1] as NeedlePlan['steps'][number];
    const call = stepCall(step);
    const id = `opening_${k}`;
    const callTokens = approxTokenEstimator.countText(call.name + JSON.stringify(call.input));
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: stepNarration(k, callTokens) },
        { type: 'tool_use', id, name: call.name, input: call.input },
      ],
    });
    const result = stepResult(step);
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: id, content: result.text, isError: result.failed },
        ...(k === needleParameters.keyTurn ? [{ type: 'text' as const, text: plan.userConstraint }] : []),
      ],
    });
  }
  return messages;
}

/** The system prompt: the stable prefix less the tools' definitions and the task. */
export function needleSystem(plan: NeedlePlan, toolDefinitions: readonly ToolDefinition[]): string {
  const tools = approxTokenEstimator.countText(JSON.stringify(toolDefinitions));
  const task = approxTokenEstimator.countText(plan.task);
  return sizedText(
    'You are a careful site-reliability agent. ',
    needleParameters.stablePrefixTokens - tools - task,
  );
}

export interface NeedleRunResult {
  policy: string;
  seed: number;
  /** The recall run: what its final window showed. */
  score: RecallScore;
  /** The retry run: ruled-out approaches tried again. */
  deadEndRetries: number;
  /** Recall calls the model made, both runs. */
  recalls: number;
  finalWindowTokens: number;
}

let runs = 0;

/** The recall run and the retry run of one plan under one reins policy, through the real loop. */
export async function needleRun(
  plan: NeedlePlan,
  policy: NeedlePolicy,
  index?: (runId: string) => TranscriptIndex,
  /** Another policy in its place (the scorer's own test). */
  instead?: ContextPolicy,
): Promise<NeedleRunResult> {
  const recallRun = await oneRun(plan, instead ?? needlePolicy(policy, index), false);
  const retryRun = await oneRun(plan, instead ?? needlePolicy(policy, index), true);
  return {
    policy: instead?.name ?? policy,
    seed: plan.seed,
    score: recallRun.agent.final as RecallScore,
    deadEndRetries: retryRun.agent.retries,
    recalls: recallRun.agent.recalls + retryRun.agent.recalls,
    finalWindowTokens: recallRun.finalWindowTokens,
  };
}

async function oneRun(plan: NeedlePlan, policy: ContextPolicy, decisions: boolean) {
  const tools = needleTools(plan);
  const agent = new NeedleAgent(plan, { firstStep: needleParameters.keyTurn + 1, decisions });
  let definitions: readonly ToolDefinition[] = [];
  let finalWindowTokens = 0;
  const turn: ScriptStep = (request) => {
    definitions = request.tools;
    const lines = windowLines(request.messages);
    const canRecall = request.tools.some((tool) => tool.name === 'recall');
    const next = agent.next(lines, canRecall);
    if (next.kind === 'answer') {
      finalWindowTokens = approxTokenEstimator.countText(JSON.stringify(request.messages));
      return { text: next.text };
    }
    return { text: next.text, toolCalls: next.calls };
  };
  // The system prompt is sized against the run's tool definitions, known after one call.
  const probeRun = await runAgent({
    model: scriptedModel([turnOnce((request) => (definitions = request.tools))]),
    input: plan.task,
    tools,
    giveUpTool: false,
    context: policy,
    runId: `needle-size-${++runs}`,
  });
  void probeRun;
  const system = needleSystem(plan, definitions);
  const script: ScriptStep[] = Array.from({ length: 400 }, () => turn);
  const run = await runAgent({
    model: scriptedModel(script, { recordCalls: false }),
    input: needleOpening(plan),
    system,
    tools,
    giveUpTool: false,
    maxSteps: 300,
    repeatLimit: false,
    drift: false,
    maxContextTokens: 1_000_000_000,
    context: policy,
    runId: `needle-${++runs}`,
  });
  if (run.outcome.kind !== 'answered' || !agent.done)
    throw new Error(
      `needle run ${policy.name} seed ${plan.seed}: ${run.outcome.kind} after ${run.steps} calls`,
    );
  return { agent, finalWindowTokens };
}

function turnOnce(see: (request: ModelRequest) => unknown): ScriptStep {
  return (request) => {
    see(request);
    return { text: 'ok' };
  };
}
