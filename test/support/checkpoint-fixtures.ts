import { type CheckpointCommit, diffRunStates } from '../../src/checkpoint/index.js';
import type { RunState } from '../../src/loop/run-state.js';
import type { Message } from '../../src/model/content.js';

// Run states and commits the checkpoint store suites share.

/** A run state at its start, with every optional field present (as the loop writes it). */
export function fixtureState(runId: string, overrides: Partial<RunState> = {}): RunState {
  return {
    version: 1,
    runId,
    status: 'running',
    step: 0,
    system: 'You are careful.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
    completedMessages: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    billedTokens: 0,
    costUsd: 0,
    contextTokens: 0,
    toolErrors: 0,
    repeatCounts: [],
    drift: null,
    elapsedMs: 0,
    startedAt: 1_000,
    updatedAt: 1_000,
    outcome: null,
    pending: null,
    taint: null,
    terminalFailures: [],
    toolStats: {},
    handoffs: [],
    revision: 0,
    trace: { segment: 0, nextSeq: 0 },
    ...overrides,
  };
}

export const text = (role: 'user' | 'assistant', value: string): Message =>
  role === 'user'
    ? { role, content: [{ type: 'text', text: value }] }
    : { role, content: [{ type: 'text', text: value }] };

/** One completed step: a model turn and a tool result, usage and counters moved on. */
export function stepOf(state: RunState, label: string): RunState {
  return {
    ...state,
    revision: (state.revision ?? 0) + 1,
    step: state.step + 1,
    messages: [...state.messages, text('assistant', `${label} asks`), text('user', `${label} result`)],
    completedMessages: state.messages.length + 2,
    usage: {
      ...state.usage,
      inputTokens: state.usage.inputTokens + 100,
      outputTokens: state.usage.outputTokens + 10,
    },
    billedTokens: state.billedTokens + 110,
    costUsd: state.costUsd + 0.001,
    updatedAt: state.updatedAt + 1,
    trace: { segment: 0, nextSeq: (state.trace?.nextSeq ?? 0) + 3 },
  };
}

/** A snapshot commit of `state` on top of `expectedRevision`. */
export function snapshotCommit(state: RunState, expectedRevision = state.revision ?? 0): CheckpointCommit {
  const revision = expectedRevision + 1;
  return {
    runId: state.runId,
    expectedRevision,
    revision,
    status: state.status,
    step: state.step,
    updatedAt: state.updatedAt,
    snapshot: { ...state, revision },
  };
}

/** The delta commit from `previous` to `next` (whose revision is `previous.revision + 1`). */
export function deltaCommit(previous: RunState, next: RunState): CheckpointCommit {
  const delta = diffRunStates(previous, next);
  return {
    runId: next.runId,
    expectedRevision: previous.revision ?? 0,
    revision: delta.revision,
    status: next.status,
    step: next.step,
    updatedAt: next.updatedAt,
    delta,
  };
}

export const json = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));
