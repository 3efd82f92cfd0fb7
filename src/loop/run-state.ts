import type { ContextEdit } from '../context/context-edit.js';
import type { DriftState } from '../controls/drift-monitor.js';
import type { TaintState } from '../controls/taint-ledger.js';
import { ReinsError } from '../errors/reins-error.js';
import { assistantBlockTypes, type Message, type ToolUseBlock, userBlockTypes } from '../model/content.js';
import type { Usage } from '../model/model.js';
import type { ApprovalVerdict } from './approval.js';
import { type Outcome, outcomeKinds } from './outcome.js';

/** The run-state schema version. Old versions keep loading: add a migration, never edit a shape. */
export const runStateVersion = 1;

/**
 * Everything needed to continue a run after its last completed step, as plain JSON. The loop saves
 * one after every step; `resumeAgent(state, options)` continues from it.
 */
export interface RunState {
  version: typeof runStateVersion;
  runId: string;
  status: 'running' | 'ended';
  /** Completed steps (model call plus its tool results). */
  step: number;
  system: string;
  messages: Message[];
  /** How many of `messages` belong to completed steps; a resume drops the rest. */
  completedMessages: number;
  usage: Usage;
  billedTokens: number;
  costUsd: number;
  contextTokens: number;
  toolErrors: number;
  repeatCounts: [string, number][];
  drift: DriftState | null;
  /** Wall-clock time the run has used so far, so a resumed run keeps its `maxWallMs`. */
  elapsedMs: number;
  startedAt: number;
  updatedAt: number;
  outcome: Outcome | null;
  /** The batch waiting for approval verdicts (absent in states written before approvals existed). */
  pending?: PendingBatch | null;
  taint?: TaintState | null;
  /** Keys of calls that failed terminally; they are not run again. */
  terminalFailures?: string[];
  toolStats?: Record<string, ToolStats>;
  /** Actions drafted or proposed for a person instead of performed. */
  handoffs?: Handoff[];
  /** The context policy's edits over the transcript, in order (absent for a run without a policy). */
  contextEdits?: ContextEdit[];
  /**
   * The checkpoint revision this state is at: bumped at every checkpoint, with or without a store.
   * A resume claims `revision + 1` before anything runs, so one state is continued at most once.
   * Absent in states written before revisions existed (read as 0).
   */
  revision?: number;
  /** Where this run's trace goes on: absent in states written before segments existed. */
  trace?: TraceCursor;
}

/** A run's place in its trace: the segment written last, and the `seq` the next event takes. */
export interface TraceCursor {
  segment: number;
  nextSeq: number;
}

/** A step's tool calls waiting on a person. */
export interface PendingBatch {
  step: number;
  calls: ToolUseBlock[];
  thought: string;
  /** Verdicts already given for calls of this batch: they hold across resumes until it runs. */
  verdicts?: ApprovalVerdict[];
}

/** Per-tool counts for the run summary. */
export interface ToolStats {
  calls: number;
  ok: number;
  errors: number;
  validationFailures: number;
  /** validationFailures ÷ calls that executed. */
  validationFailureRate: number;
  truncated: number;
  denied: number;
  approvalsRequested: number;
}

/** An action handed to a person instead of performed: a `draft` or a `never` proposal. */
export interface Handoff {
  kind: 'draft' | 'proposal';
  callId: string;
  tool: string;
  input: unknown;
  step: number;
  reason: string;
}

/** Parses a serialized run state, checking its version and shape ({@link assertRunState}). */
export function parseRunState(text: string): RunState {
  if (typeof text !== 'string') throw new ReinsError('corrupt_state', 'run state must be JSON text');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ReinsError('corrupt_state', 'run state is not valid JSON', { cause });
  }
  return assertRunState(value);
}

/**
 * Checks that a value is a run state this version of reins can continue: every field of
 * {@link RunState}, its type and its range, in one pass over the state that allocates nothing
 * unless it fails. Fields added after version 1 shipped (`pending`, `taint`, `terminalFailures`,
 * `toolStats`, `handoffs`, `revision`, `trace`) may be absent. Throws a {@link ReinsError}:
 * `unsupported_state_version` for a state of another version, `corrupt_state` naming the first bad
 * field (a dotted path: `messages.3.content.0.text`) for anything else.
 */
export function assertRunState(value: unknown): RunState {
  try {
    checkRunState(value);
  } catch (thrown) {
    if (
      thrown instanceof ReinsError &&
      (thrown.reason === 'corrupt_state' || thrown.reason === 'unsupported_state_version')
    )
      throw thrown;
    // A getter or a Proxy trap of a state built in memory threw while it was read.
    throw new ReinsError('corrupt_state', 'run state could not be read', { cause: thrown });
  }
  return value as RunState;
}

type Fields = Record<string, unknown>;

/** The deepest tool input a state may hold: the loop accepts no deeper one from a model. */
const maxInputDepth = 512;

const knownOutcomeKinds: ReadonlySet<string> = new Set(outcomeKinds);
const usageFields = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const;
const toolStatCounts = [
  'calls',
  'ok',
  'errors',
  'validationFailures',
  'truncated',
  'denied',
  'approvalsRequested',
] as const;

function corrupt(field: string, problem: string): never {
  // A problem that starts with a sub-field (`.text must be…`) continues the field's path.
  throw new ReinsError(
    'corrupt_state',
    `run state field ${field}${problem.startsWith('.') ? '' : ' '}${problem}`,
  );
}

/** A short, safe description of a bad value for the error message. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null) return 'null';
  try {
    if (Array.isArray(value)) return 'an array';
  } catch {
    // A revoked Proxy.
  }
  return typeof value;
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isAmount(value: unknown): value is number {
  return Number.isFinite(value) && (value as number) >= 0;
}

function count(fields: Fields, key: string, path: string = key): number {
  const value = fields[key];
  if (!isCount(value)) corrupt(path, `must be a whole number ≥ 0, got ${shown(value)}`);
  return value;
}

function amount(fields: Fields, key: string, path: string = key): void {
  const value = fields[key];
  if (!isAmount(value)) corrupt(path, `must be a finite number ≥ 0, got ${shown(value)}`);
}

function string(fields: Fields, key: string, path: string = key): void {
  if (typeof fields[key] !== 'string') corrupt(path, `must be a string, got ${shown(fields[key])}`);
}

function stringList(value: unknown, path: string): void {
  if (!Array.isArray(value)) corrupt(path, `must be an array of strings, got ${shown(value)}`);
  for (let i = 0; i < value.length; i++)
    if (typeof value[i] !== 'string') corrupt(`${path}.${i}`, `must be a string, got ${shown(value[i])}`);
}

/** Present only when not undefined: fields added after version 1 shipped. */
function present(fields: Fields, key: string): boolean {
  return fields[key] !== undefined;
}

function checkRunState(value: unknown): void {
  if (!isFields(value)) throw new ReinsError('corrupt_state', 'run state must be an object');
  const state = value;
  const version = state['version'];
  if (version !== runStateVersion) {
    if (Number.isSafeInteger(version) && (version as number) > 0)
      throw new ReinsError(
        'unsupported_state_version',
        `run state version ${String(version)} is not supported (expected ${runStateVersion})`,
      );
    corrupt('version', `must be ${runStateVersion}, got ${shown(version)}`);
  }
  string(state, 'runId');
  const status = state['status'];
  if (status !== 'running' && status !== 'ended')
    corrupt('status', `must be 'running' or 'ended', got ${shown(status)}`);
  count(state, 'step');
  string(state, 'system');
  const messages = state['messages'];
  if (!Array.isArray(messages)) corrupt('messages', `must be an array of messages, got ${shown(messages)}`);
  for (let i = 0; i < messages.length; i++) checkMessage(messages[i], i);
  const completed = count(state, 'completedMessages');
  if (completed > messages.length)
    corrupt('completedMessages', `is ${completed}, more than the ${messages.length} messages`);
  const usage = state['usage'];
  if (!isFields(usage)) corrupt('usage', `must be an object, got ${shown(usage)}`);
  for (const key of usageFields) if (!isAmount(usage[key])) amount(usage, key, `usage.${key}`);
  if (usage['reasoningTokens'] !== undefined && !isAmount(usage['reasoningTokens']))
    amount(usage, 'reasoningTokens', 'usage.reasoningTokens');
  amount(state, 'billedTokens');
  amount(state, 'costUsd');
  amount(state, 'contextTokens');
  count(state, 'toolErrors');
  checkRepeatCounts(state['repeatCounts']);
  checkDrift(state['drift']);
  amount(state, 'elapsedMs');
  for (const key of ['startedAt', 'updatedAt'] as const)
    if (!Number.isFinite(state[key])) corrupt(key, `must be a finite number, got ${shown(state[key])}`);
  checkOutcome(status, state['outcome']);
  checkPending(state['pending']);
  if (
    status === 'ended' &&
    (state['outcome'] as Fields | null)?.['kind'] === 'awaiting_approval' &&
    !state['pending']
  )
    corrupt('pending', 'must hold the paused batch when the run awaits approval');
  checkTaint(state['taint']);
  if (present(state, 'terminalFailures')) stringList(state['terminalFailures'], 'terminalFailures');
  if (present(state, 'toolStats')) checkToolStats(state['toolStats']);
  if (present(state, 'handoffs')) checkHandoffs(state['handoffs']);
  if (present(state, 'contextEdits')) {
    const edits = state['contextEdits'];
    if (!Array.isArray(edits)) corrupt('contextEdits', `must be an array, got ${shown(edits)}`);
    for (let i = 0; i < edits.length; i++)
      if (!isFields(edits[i]) || typeof edits[i]['verb'] !== 'string')
        corrupt(`contextEdits.${i}`, `must be an edit with a verb, got ${shown(edits[i])}`);
  }
  if (present(state, 'revision')) count(state, 'revision');
  if (present(state, 'trace')) {
    const trace = state['trace'];
    if (!isFields(trace)) corrupt('trace', `must be { segment, nextSeq }, got ${shown(trace)}`);
    count(trace, 'segment', 'trace.segment');
    count(trace, 'nextSeq', 'trace.nextSeq');
  }
}

function checkMessage(message: unknown, index: number): void {
  if (!isFields(message)) corrupt(`messages.${index}`, `must be a message object, got ${shown(message)}`);
  const role = message['role'];
  if (role !== 'user' && role !== 'assistant')
    corrupt(`messages.${index}.role`, `must be 'user' or 'assistant', got ${shown(role)}`);
  const content = message['content'];
  if (!Array.isArray(content))
    corrupt(`messages.${index}.content`, `must be an array of content blocks, got ${shown(content)}`);
  for (let at = 0; at < content.length; at++) {
    const block: unknown = content[at];
    const problem = blockProblem(block, role);
    if (problem !== undefined) corrupt(`messages.${index}.content.${at}`, problem);
  }
}

/**
 * What is wrong with one content block, as the rest of the error message (starting with the
 * sub-field at fault), or undefined. A user message holds text and tool results, an assistant's
 * text and tool calls: every other block would reach the provider or the token count unread.
 */
export function blockProblem(block: unknown, role: 'user' | 'assistant'): string | undefined {
  if (!isFields(block)) return `must be a content block, got ${shown(block)}`;
  const type = block['type'];
  if (typeof type !== 'string') return `.type must be a string, got ${shown(type)}`;
  if (type === 'text') {
    if (typeof block['text'] !== 'string') return `.text must be a string, got ${shown(block['text'])}`;
    return block['citations'] !== undefined && !Array.isArray(block['citations'])
      ? `.citations must be an array, got ${shown(block['citations'])}`
      : undefined;
  }
  if (type === 'tool_use' && role === 'assistant') return toolUseProblem(block);
  if (type === 'tool_result' && role === 'user') {
    if (typeof block['toolUseId'] !== 'string')
      return `.toolUseId must be a string, got ${shown(block['toolUseId'])}`;
    if (typeof block['content'] !== 'string')
      return `.content must be a string, got ${shown(block['content'])}`;
    if (typeof block['isError'] !== 'boolean')
      return `.isError must be a boolean, got ${shown(block['isError'])}`;
    return attachmentsProblem(block['attachments']);
  }
  const allowed = role === 'user' ? userBlockTypes : assistantBlockTypes;
  if (type !== 'tool_use' && type !== 'tool_result' && allowed.has(type)) return otherBlockProblem(block);
  return `.type is ${shown(type)}; ${role === 'user' ? 'a user message holds' : 'an assistant message holds'} ${[...allowed].join(', ')} blocks`;
}

/** A tool result's attachments: absent, or images and documents with valid sources. */
function attachmentsProblem(attachments: unknown): string | undefined {
  if (attachments === undefined) return undefined;
  if (!Array.isArray(attachments)) return `.attachments must be an array, got ${shown(attachments)}`;
  for (let at = 0; at < attachments.length; at++) {
    const media: unknown = attachments[at];
    if (!isFields(media) || (media['type'] !== 'image' && media['type'] !== 'document'))
      return `.attachments.${at} must be an image or document block, got ${shown(media)}`;
    const problem = otherBlockProblem(media);
    if (problem) return `.attachments.${at}${problem}`;
  }
  return undefined;
}

const optional = (block: Fields, field: string, kind: 'string'): string | undefined =>
  block[field] === undefined || typeof block[field] === kind
    ? undefined
    : `.${field} must be a ${kind} when set, got ${shown(block[field])}`;

/** An image's or document's source: base64 with a media type, or a URL. */
function sourceProblem(source: unknown): string | undefined {
  if (!isFields(source)) return `.source must be an object, got ${shown(source)}`;
  if (source['type'] === 'base64') {
    if (typeof source['mediaType'] !== 'string')
      return `.source.mediaType must be a string, got ${shown(source['mediaType'])}`;
    return typeof source['data'] === 'string'
      ? undefined
      : `.source.data must be a string, got ${shown(source['data'])}`;
  }
  if (source['type'] === 'url') {
    if (typeof source['url'] !== 'string') return `.source.url must be a string, got ${shown(source['url'])}`;
    return optional(source, 'mediaType', 'string') === undefined
      ? undefined
      : `.source.mediaType must be a string when set, got ${shown(source['mediaType'])}`;
  }
  return `.source.type must be 'base64' or 'url', got ${shown(source['type'])}`;
}

/** The fields the thinking, provider and media blocks need, or undefined when they are there. */
function otherBlockProblem(block: Fields): string | undefined {
  const need = (field: string, kind: 'string' | 'object') =>
    (kind === 'object' ? isFields(block[field]) : typeof block[field] === kind)
      ? undefined
      : `.${field} must be ${kind === 'string' ? 'a string' : 'an object'}, got ${shown(block[field])}`;
  switch (block['type']) {
    case 'thinking':
      return (
        need('thinking', 'string') ??
        optional(block, 'signature', 'string') ??
        optional(block, 'provider', 'string')
      );
    case 'redacted_thinking':
      return need('data', 'string') ?? optional(block, 'provider', 'string');
    case 'provider':
      return need('provider', 'string') ?? need('kind', 'string') ?? need('raw', 'object');
    case 'document':
      return sourceProblem(block['source']) ?? optional(block, 'title', 'string');
    default:
      return sourceProblem(block['source']);
  }
}

/** What is wrong with a tool call (in a message or a pending batch), or undefined. */
function toolUseProblem(block: Fields): string | undefined {
  if (block['type'] !== 'tool_use') return `.type must be 'tool_use', got ${shown(block['type'])}`;
  if (typeof block['id'] !== 'string') return `.id must be a string, got ${shown(block['id'])}`;
  if (typeof block['name'] !== 'string') return `.name must be a string, got ${shown(block['name'])}`;
  if (block['inputText'] !== undefined && typeof block['inputText'] !== 'string')
    return `.inputText must be a string, got ${shown(block['inputText'])}`;
  const problem = jsonProblem(block['input'], 0);
  return problem === undefined ? undefined : `.input ${problem}`;
}

/**
 * Why a value is not JSON the loop can serialize (it counts, keys and saves every tool input), or
 * undefined. A cycle shows as nesting past the depth limit; nothing is allocated on the way.
 */
function jsonProblem(value: unknown, depth: number): string | undefined {
  if (typeof value === 'bigint') return 'holds a BigInt, which JSON cannot hold';
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= maxInputDepth) return `is nested deeper than ${maxInputDepth} levels (or circular)`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonProblem(value[i], depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const problem = jsonProblem((value as Fields)[key], depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function checkRepeatCounts(value: unknown): void {
  if (!Array.isArray(value))
    corrupt('repeatCounts', `must be an array of [key, count] pairs, got ${shown(value)}`);
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    // The loop writes counts ≥ 1; a 0 (test/checkpoint-conformance generates them) counts as unseen.
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || !isCount(entry[1]))
      corrupt(`repeatCounts.${i}`, 'must be a [key: string, count: whole number ≥ 0] pair');
  }
}

function checkDrift(value: unknown): void {
  if (value === null) return;
  if (!isFields(value)) corrupt('drift', `must be null or { actions, worldStates }, got ${shown(value)}`);
  stringList(value['actions'], 'drift.actions');
  stringList(value['worldStates'], 'drift.worldStates');
}

/**
 * A running run holds no outcome; an ended one the outcome it ended with (or null: a state marked
 * ended by hand, which the loop continues). Each kind's fields that
 * `describeOutcome` and the loop read are checked for type; their vocabularies (a hard error's
 * source, a budget's name) are not, so a state written by a newer reins with a new source still loads.
 */
function checkOutcome(status: 'running' | 'ended', outcome: unknown): void {
  if (status === 'running') {
    if (outcome !== null) corrupt('outcome', `must be null while the run is running, got ${shown(outcome)}`);
    return;
  }
  if (outcome === null) return;
  if (!isFields(outcome))
    corrupt('outcome', `must be null or the outcome the run ended with, got ${shown(outcome)}`);
  const kind = outcome['kind'];
  if (typeof kind !== 'string' || !knownOutcomeKinds.has(kind))
    corrupt('outcome.kind', `must be one of ${outcomeKinds.join(', ')}, got ${shown(kind)}`);
  switch (kind) {
    case 'answered':
    case 'refused':
      string(outcome, 'text', 'outcome.text');
      return;
    case 'step_limit':
      amount(outcome, 'limit', 'outcome.limit');
      if (outcome['finalText'] !== undefined) string(outcome, 'finalText', 'outcome.finalText');
      checkUnexecuted(outcome['unexecutedCalls']);
      return;
    case 'over_budget':
      string(outcome, 'budget', 'outcome.budget');
      string(outcome, 'phase', 'outcome.phase');
      if (outcome['unpriced'] !== undefined) string(outcome, 'unpriced', 'outcome.unpriced');
      if (outcome['spender'] !== undefined) string(outcome, 'spender', 'outcome.spender');
      for (const key of ['limit', 'actual'] as const)
        if (typeof outcome[key] !== 'number')
          corrupt(`outcome.${key}`, `must be a number, got ${shown(outcome[key])}`);
      return;
    case 'looped':
      if (outcome['reason'] === 'repeated_call') {
        string(outcome, 'key', 'outcome.key');
        string(outcome, 'tool', 'outcome.tool');
        amount(outcome, 'count', 'outcome.count');
        amount(outcome, 'limit', 'outcome.limit');
      } else if (outcome['reason'] === 'no_progress') {
        string(outcome, 'signal', 'outcome.signal');
        string(outcome, 'detail', 'outcome.detail');
      } else
        corrupt(
          'outcome.reason',
          `must be 'repeated_call' or 'no_progress', got ${shown(outcome['reason'])}`,
        );
      return;
    case 'gave_up':
    case 'cancelled':
      string(outcome, 'reason', 'outcome.reason');
      return;
    case 'hard_error': {
      string(outcome, 'source', 'outcome.source');
      const error = outcome['error'];
      if (!isFields(error)) corrupt('outcome.error', `must be { name, message }, got ${shown(error)}`);
      string(error, 'name', 'outcome.error.name');
      string(error, 'message', 'outcome.error.message');
      return;
    }
    case 'truncated':
      string(outcome, 'block', 'outcome.block');
      string(outcome, 'text', 'outcome.text');
      checkUnexecuted(outcome['unexecutedCalls']);
      return;
    case 'awaiting_approval': {
      const requests = outcome['requests'];
      if (!Array.isArray(requests)) corrupt('outcome.requests', `must be an array, got ${shown(requests)}`);
      for (let i = 0; i < requests.length; i++) {
        const request: unknown = requests[i];
        if (
          !isFields(request) ||
          typeof request['approvalId'] !== 'string' ||
          typeof request['callId'] !== 'string' ||
          typeof request['tool'] !== 'string'
        )
          corrupt(
            `outcome.requests.${i}`,
            'must be an approval request with string approvalId, callId and tool',
          );
      }
      return;
    }
    case 'stale_state':
      count(outcome, 'revision', 'outcome.revision');
      if (outcome['currentRevision'] !== null && typeof outcome['currentRevision'] !== 'number')
        corrupt(
          'outcome.currentRevision',
          `must be a number or null, got ${shown(outcome['currentRevision'])}`,
        );
      return;
  }
}

function checkUnexecuted(value: unknown): void {
  if (!Array.isArray(value)) corrupt('outcome.unexecutedCalls', `must be an array, got ${shown(value)}`);
  for (let i = 0; i < value.length; i++) {
    const call: unknown = value[i];
    if (!isFields(call) || typeof call['callId'] !== 'string' || typeof call['tool'] !== 'string')
      corrupt(`outcome.unexecutedCalls.${i}`, 'must be { callId, tool, input } with string callId and tool');
  }
}

const decisions: ReadonlySet<unknown> = new Set(['approve', 'deny', 'edit']);

function checkPending(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isFields(value)) corrupt('pending', `must be null or a pending batch, got ${shown(value)}`);
  count(value, 'step', 'pending.step');
  const calls = value['calls'];
  if (!Array.isArray(calls) || calls.length === 0)
    corrupt('pending.calls', `must be a non-empty array of tool calls, got ${shown(calls)}`);
  for (let i = 0; i < calls.length; i++) {
    const call: unknown = calls[i];
    const problem = isFields(call) ? toolUseProblem(call) : `must be a tool_use block, got ${shown(call)}`;
    if (problem !== undefined) corrupt(`pending.calls.${i}`, problem);
  }
  string(value, 'thought', 'pending.thought');
  const verdicts = value['verdicts'];
  if (verdicts === undefined) return;
  if (!Array.isArray(verdicts))
    corrupt('pending.verdicts', `must be an array of verdicts, got ${shown(verdicts)}`);
  // As strict as `approvals` in the options, where these verdicts came from.
  for (let i = 0; i < verdicts.length; i++) {
    const verdict: unknown = verdicts[i];
    if (
      !isFields(verdict) ||
      typeof verdict['approvalId'] !== 'string' ||
      !decisions.has(verdict['decision'])
    )
      corrupt(
        `pending.verdicts.${i}`,
        "must be { approvalId: string, decision: 'approve' | 'deny' | 'edit' }",
      );
  }
}

function checkTaint(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isFields(value))
    corrupt('taint', `must be null or { untrustedResults, trustedValues }, got ${shown(value)}`);
  count(value, 'untrustedResults', 'taint.untrustedResults');
  const facts = value['trustedValues'];
  if (!Array.isArray(facts)) corrupt('taint.trustedValues', `must be a list, got ${shown(facts)}`);
  facts.forEach((fact, index) => {
    if (typeof fact === 'string') return;
    if (
      !isFields(fact) ||
      typeof fact['value'] !== 'string' ||
      typeof fact['kind'] !== 'string' ||
      typeof fact['source'] !== 'string' ||
      !fact['source'].startsWith('tool:')
    )
      corrupt(
        `taint.trustedValues.${index}`,
        `must be a string or { value, kind, source }, got ${shown(fact)}`,
      );
  });
  if (value['privateValues'] !== undefined) stringList(value['privateValues'], 'taint.privateValues');
  const counters = value['counters'];
  if (counters === undefined) return;
  if (!Array.isArray(counters))
    corrupt('taint.counters', `must be a list of [key, count], got ${shown(counters)}`);
  counters.forEach((entry, index) => {
    if (
      !Array.isArray(entry) ||
      entry.length !== 2 ||
      typeof entry[0] !== 'string' ||
      typeof entry[1] !== 'number' ||
      !Number.isFinite(entry[1])
    )
      corrupt(`taint.counters.${index}`, `must be [key, count], got ${shown(entry)}`);
  });
}

function checkToolStats(value: unknown): void {
  if (!isFields(value)) corrupt('toolStats', `must be an object of per-tool counts, got ${shown(value)}`);
  for (const tool in value) {
    if (!Object.hasOwn(value, tool)) continue;
    // An own `__proto__` key (a tool of that name) is data: reins copies tool stats into null-prototype objects.
    const stats = value[tool];
    if (!isFields(stats)) corrupt(`toolStats.${tool}`, `must be an object of counts, got ${shown(stats)}`);
    for (const key of toolStatCounts) if (!isCount(stats[key])) count(stats, key, `toolStats.${tool}.${key}`);
    const rate = stats['validationFailureRate'];
    if (!isAmount(rate) || rate > 1)
      corrupt(`toolStats.${tool}.validationFailureRate`, `must be a number from 0 to 1, got ${shown(rate)}`);
  }
}

function checkHandoffs(value: unknown): void {
  if (!Array.isArray(value)) corrupt('handoffs', `must be an array, got ${shown(value)}`);
  for (let i = 0; i < value.length; i++) {
    const problem = handoffProblem(value[i]);
    if (problem !== undefined) corrupt(`handoffs.${i}`, problem);
  }
}

function handoffProblem(handoff: unknown): string | undefined {
  if (!isFields(handoff)) return `must be an object, got ${shown(handoff)}`;
  if (handoff['kind'] !== 'draft' && handoff['kind'] !== 'proposal')
    return `.kind must be 'draft' or 'proposal', got ${shown(handoff['kind'])}`;
  for (const key of ['callId', 'tool', 'reason'] as const)
    if (typeof handoff[key] !== 'string') return `.${key} must be a string, got ${shown(handoff[key])}`;
  if (!isCount(handoff['step'])) return `.step must be a whole number ≥ 0, got ${shown(handoff['step'])}`;
  return undefined;
}
