import { z } from 'zod';
import { idempotent, type Reconciliation } from '../idempotency/idempotent.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { Model, ModelResponse } from '../model/model.js';
import { defineTool } from '../tools/define-tool.js';
import { type AgentBuildContext, type AgentDefinition, defineAgent } from './agent-definition.js';

/** What one effect is told: its idempotency key (`<runId>:<step>`), the run and the step. */
export interface StepEffect {
  key: string;
  runId: string;
  step: number;
  attempt: number;
}

/** Options for {@link scriptedStepsAgent}. */
export interface ScriptedStepsAgentOptions {
  /** @default 'steps' */
  name?: string;
  /** Model calls per run: each but the last makes one `record_effect` call, the last answers. @default 6 */
  steps?: number;
  /** The side effect each step's tool call performs (charge a card, send a mail). */
  effect: (effect: StepEffect) => void | Promise<void>;
  /**
   * Makes the tool idempotent on its key: a repeat of a completed call returns the first result,
   * and a call taken over from a crashed worker asks `reconcile` first.
   */
  idempotency?: {
    store: IdempotencyStore;
    /** Did the effect with this key already happen downstream? */
    reconcile?: (key: string) => Promise<boolean>;
    /** @default 30_000 */
    leaseMs?: number;
  };
  /** The step (1-based) whose call needs a person's approval (`autonomy: 'confirm'`). */
  confirmStep?: number;
  /** Called before each model call (tests crash the worker here). */
  beforeStep?: (step: number, context: AgentBuildContext) => void | Promise<void>;
}

/**
 * A 0-latency agent whose model is a function of the transcript, not of a script position, so a
 * run resumed on another worker (a fresh model) goes on where the run stopped: call k (k =
 * completed steps + 1) asks for `record_effect` with key `<runId>:<k>`, the last call answers.
 * For the queue's tests, `reins bench queue` and trying a queue out without a provider.
 *
 * @example
 * import { scriptedStepsAgent } from 'reins/queue';
 * const effects: string[] = [];
 * const agent = scriptedStepsAgent({ steps: 6, effect: ({ key }) => void effects.push(key) });
 */
export function scriptedStepsAgent(options: ScriptedStepsAgentOptions): AgentDefinition {
  const steps = options.steps ?? 6;
  // One schema for every run's tools: its JSON Schema is made once (defineTool keeps it by schema).
  const input = z.object({ key: z.string(), step: z.number() });
  return defineAgent({
    name: options.name ?? 'steps',
    build: (context) => {
      const { runId, attempt } = context;
      const plain = (name: string, autonomy: 'autonomous' | 'confirm') =>
        defineTool({
          name,
          description: 'Performs this step of the task exactly once.',
          input,
          effect: 'write',
          autonomy,
          trustedOutput: true,
          execute: async ({ key, step }) => {
            await options.effect({ key, runId, step, attempt });
            return { done: key };
          },
        });
      const wrap = (name: string, autonomy: 'autonomous' | 'confirm') => {
        const tool = plain(name, autonomy);
        const idempotency = options.idempotency;
        if (!idempotency) return tool;
        const reconcile = idempotency.reconcile;
        return idempotent(tool, {
          store: idempotency.store,
          key: { field: 'key' },
          ...(idempotency.leaseMs === undefined ? {} : { leaseMs: idempotency.leaseMs }),
          ...(reconcile
            ? {
                // The store's key is scoped (tool, actor); downstream knows the effect by the input's key.
                reconcile: async (_scoped: string, input: { key: string }): Promise<Reconciliation> =>
                  (await reconcile(input.key))
                    ? { happened: true, result: { done: input.key } }
                    : { happened: false },
              }
            : {}),
        });
      };
      const model: Model = {
        name: 'scripted-steps',
        async generate(request): Promise<ModelResponse> {
          let completed = 0;
          for (const message of request.messages) if (message.role === 'assistant') completed++;
          const step = completed + 1;
          if (options.beforeStep) await options.beforeStep(step, context);
          const usage = {
            inputTokens: 40 + step * 10,
            outputTokens: 12,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
          };
          if (step >= steps || request.tools.length === 0)
            return {
              content: [{ type: 'text', text: `Done in ${step} steps.` }],
              stopReason: 'end_turn',
              usage,
            };
          const tool = step === options.confirmStep ? 'confirmed_effect' : 'record_effect';
          return {
            content: [
              { type: 'text', text: `Step ${step}.` },
              { type: 'tool_use', id: `call_${step}`, name: tool, input: { key: `${runId}:${step}`, step } },
            ],
            stopReason: 'tool_use',
            usage,
          };
        },
      };
      return {
        model,
        tools: [wrap('record_effect', 'autonomous'), wrap('confirmed_effect', 'confirm')],
        maxSteps: steps + 1,
        repeatLimit: false,
        drift: false,
      };
    },
  });
}
