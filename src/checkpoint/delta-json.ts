import type { ToolStats } from '../loop/run-state.js';
import type { Usage } from '../model/model.js';
import type { Appended, CheckpointDelta, Slid } from './checkpoint-delta.js';

// Every field of a delta is written below. A field added to CheckpointDelta must be added here too:
// this does not compile until it is.
const written = [
  'revision',
  'status',
  'step',
  'completedMessages',
  'usage',
  'billedTokens',
  'costUsd',
  'contextTokens',
  'toolErrors',
  'elapsedMs',
  'updatedAt',
  'trace',
  'outcome',
  'pending',
  'drift',
  'driftSlide',
  'repeatCounts',
  'taint',
  'terminalFailures',
  'toolStats',
  'handoffs',
  'messages',
] as const;
type Unwritten = Exclude<keyof CheckpointDelta, (typeof written)[number]>;
const everyFieldWritten: [Unwritten] extends [never] ? true : Unwritten = true;
void everyFieldWritten;

const usageFields = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
] as const satisfies readonly (keyof Usage)[];
type UnwrittenUsage = Exclude<keyof Usage, (typeof usageFields)[number]>;
const everyUsageWritten: [UnwrittenUsage] extends [never] ? true : UnwrittenUsage = true;
void everyUsageWritten;

const toolStatFields = [
  'calls',
  'ok',
  'errors',
  'validationFailures',
  'validationFailureRate',
  'truncated',
  'denied',
  'approvalsRequested',
] as const satisfies readonly (keyof ToolStats)[];
type UnwrittenStat = Exclude<keyof ToolStats, (typeof toolStatFields)[number]>;
const everyStatWritten: [UnwrittenStat] extends [never] ? true : UnwrittenStat = true;
void everyStatWritten;

/**
 * The JSON of a delta, field by field: the value `JSON.stringify(delta)` gives, at a third of the
 * cost. (`JSON.stringify` in V8 11 pays about a tenth of a microsecond for every
 * property it visits; a step's delta has about fifty, most of them the same numbers in the same
 * places every step.) Values of open shape (an outcome, a pending batch, list items) go through
 * `JSON.stringify`. `messageJson`, when given, is the JSON of each of `delta.messages.items`.
 */
export function deltaJson(delta: CheckpointDelta, messageJson?: readonly string[]): string {
  const trace = delta.trace;
  let out = `{"revision":${num(delta.revision)},"status":${statusJson(delta.status)},"step":${num(delta.step)},"completedMessages":${num(delta.completedMessages)},"usage":${numbersJson(delta.usage, usageFields)},"billedTokens":${num(delta.billedTokens)},"costUsd":${num(delta.costUsd)},"contextTokens":${num(delta.contextTokens)},"toolErrors":${num(delta.toolErrors)},"elapsedMs":${num(delta.elapsedMs)},"updatedAt":${num(delta.updatedAt)},"trace":{"segment":${num(trace.segment)},"nextSeq":${num(trace.nextSeq)}}`;
  if (delta.outcome !== undefined) out += `,"outcome":${JSON.stringify(delta.outcome)}`;
  if (delta.pending !== undefined) out += `,"pending":${JSON.stringify(delta.pending)}`;
  if (delta.drift !== undefined) out += `,"drift":${JSON.stringify(delta.drift)}`;
  const slide = delta.driftSlide;
  if (slide !== undefined) {
    const actions = slide.actions === undefined ? '' : `"actions":${slidJson(slide.actions)}`;
    const worldStates = slide.worldStates === undefined ? '' : `"worldStates":${slidJson(slide.worldStates)}`;
    out += `,"driftSlide":{${actions}${actions && worldStates ? ',' : ''}${worldStates}}`;
  }
  if (delta.repeatCounts !== undefined) {
    let counts = '';
    for (const [key, count] of delta.repeatCounts)
      counts += `${counts === '' ? '' : ','}[${JSON.stringify(key)},${num(count)}]`;
    out += `,"repeatCounts":[${counts}]`;
  }
  const taint = delta.taint;
  if (taint !== undefined) {
    if (taint === null) out += ',"taint":null';
    else {
      out += `,"taint":{"untrustedResults":${num(taint.untrustedResults)}`;
      if (taint.trustedValues !== undefined) out += `,"trustedValues":${appendedJson(taint.trustedValues)}`;
      if (taint.privateValues !== undefined) out += `,"privateValues":${appendedJson(taint.privateValues)}`;
      if (taint.counters !== undefined) out += `,"counters":${JSON.stringify(taint.counters)}`;
      out += '}';
    }
  }
  if (delta.terminalFailures !== undefined)
    out += `,"terminalFailures":${appendedJson(delta.terminalFailures)}`;
  if (delta.toolStats !== undefined) {
    let stats = '';
    for (const tool in delta.toolStats)
      stats += `${stats === '' ? '' : ','}${JSON.stringify(tool)}:${numbersJson(delta.toolStats[tool] as ToolStats, toolStatFields)}`;
    out += `,"toolStats":{${stats}}`;
  }
  if (delta.handoffs !== undefined) out += `,"handoffs":${appendedJson(delta.handoffs)}`;
  const messages = delta.messages;
  if (messages !== undefined) {
    const items = messageJson ?? messages.items.map((message) => JSON.stringify(message));
    out += `,"messages":{"from":${num(messages.from)},"items":[${items.join(',')}]}`;
  }
  return `${out}}`;
}

/** A number as JSON writes it: `String` for finite numbers, `null` for the rest. */
function num(value: number): string {
  return Number.isFinite(value) ? `${value}` : 'null';
}

function statusJson(status: CheckpointDelta['status']): string {
  return status === 'running' ? '"running"' : status === 'ended' ? '"ended"' : JSON.stringify(status);
}

/**
 * An object of numbers, its known fields written in turn; one with any other field (from a newer
 * version, say) goes through `JSON.stringify` whole.
 */
function numbersJson<T extends object>(value: T, fields: readonly (keyof T & string)[]): string {
  let own = 0;
  for (const _key in value) own++;
  let out = '';
  let known = 0;
  for (const field of fields) {
    const member = value[field] as number | undefined;
    if (member === undefined) continue;
    known++;
    out += `${out === '' ? '{' : ','}"${field}":${num(member)}`;
  }
  if (known !== own) return JSON.stringify(value);
  return out === '' ? '{}' : `${out}}`;
}

function slidJson(slid: Slid<string>): string {
  return `{"dropped":${num(slid.dropped)},"items":${JSON.stringify(slid.items)}}`;
}

function appendedJson(appended: Appended<unknown>): string {
  return `{"from":${num(appended.from)},"items":${JSON.stringify(appended.items)}}`;
}
