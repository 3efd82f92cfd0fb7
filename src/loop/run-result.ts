import type { Message } from '../model/content.js';
import type { Usage } from '../model/model.js';
import type { Outcome } from './outcome.js';
import type { Handoff, RunState, ToolStats } from './run-state.js';

/** What a finished run hands back. */
export interface RunResult {
  runId: string;
  outcome: Outcome;
  /** Model calls made. */
  steps: number;
  /** The prefill the next call would have sent. */
  contextTokens: number;
  /** Prefill plus output tokens, summed over every call: what the bill is made of. */
  billedTokens: number;
  costUsd: number;
  usage: Usage;
  toolErrors: number;
  messages: Message[];
  /** The final state; `status: 'ended'` with the outcome. */
  state: RunState;
  /** Per tool: calls, errors, validation failures and their rate, truncations, denials, approvals asked. */
  toolStats: Record<string, ToolStats>;
  /** Actions drafted or proposed for a person instead of performed. */
  handoffs: Handoff[];
}
