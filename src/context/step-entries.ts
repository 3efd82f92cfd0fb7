import { canonicalJson } from '../controls/canonical-json.js';
import { undelimited } from '../loop/dispatch/size-result.js';
import type { AssistantBlock, Message, ToolUseBlock, UserBlock } from '../model/content.js';
import { asciiBytes } from './ascii-bytes.js';
import type { TranscriptEntry } from './transcript-index.js';

/**
 * One step of the transcript: the assistant turn at `start` and the user messages after it (its
 * tool results, a final-answer prompt), up to the next assistant turn at `end`.
 */
export interface StepUnit {
  step: number;
  start: number;
  end: number;
}

/** What a digest keeps of one step: typed entries, never the narration. */
export interface StepRecord extends StepUnit {
  entries: TranscriptEntry[];
  /** `tool:canonical input` of each call that failed (an approach ruled out). */
  deadEnds: string[];
  /** `tool:canonical input` of every call. */
  calls: string[];
}

/** `name:canonical input`: how a repeated approach is recognized. */
export function callKey(name: string, input: unknown): string {
  let json: string;
  try {
    json = canonicalJson(input ?? null);
  } catch {
    json = String(input);
  }
  return `${name}:${json}`;
}

// Ids an agent comes back to: INC-4471, ORD_12, #10233, 8+ hex digits, key=value ids. Each word is
// tested with anchored patterns (one cheap miss at its first character), not one pattern at every position.
const codeShape = /^[A-Z][A-Z0-9]{1,9}[-_][0-9]{2,}$/;
const numberShape = /^#[0-9]{3,}$/;
const hexShape = /^[0-9a-f]{8,}$/;
const keyShape = /^(?:[a-z]+_)?id[=:][\w-]{3,}$/;

/** One word against the shape its first character allows (most words are tested once, or not at all). */
function isId(word: string): boolean {
  const first = word.charCodeAt(0);
  if (first >= 65 && first <= 90) return codeShape.test(word);
  if (first === 35) return numberShape.test(word);
  if (first >= 48 && first <= 57) return hexShape.test(word);
  if (first < 97 || first > 122) return false;
  if (word.length >= 8 && first <= 102 && hexShape.test(word)) return true;
  return word.includes('id') && keyShape.test(word);
}
/** Characters that end a word: whitespace and the punctuation around ids in prose and JSON. */
const separators = new Uint8Array(128);
for (const code of [9, 10, 11, 12, 13, 32, 44, 59, 40, 41, 91, 93, 123, 125, 34, 39, 60, 62, 46, 33, 63])
  separators[code] = 1;

/** How far into a result ids are looked for: they come early (a record's key), and the scan must stay cheap. */
const idScanChars = 1_000;

/**
 * Ids a text mentions, first seen first, at most `limit`. One pass over character codes: only a
 * word with a digit, `=` or `:` in it can be an id, and only such a word is cut out and tested.
 */
export function idsIn(text: string, limit = 8): string[] {
  // At most `limit` (8): a list checked with includes costs less than a set.
  const found: string[] = [];
  const end = Math.min(text.length, idScanChars);
  const bytes = asciiBytes(text, end);
  let start = 0;
  let candidate = false;
  for (let i = 0; i <= end; i++) {
    const code = i === end ? 32 : bytes ? bytes[i]! : text.charCodeAt(i);
    if (code < 128 && separators[code] === 1) {
      if (candidate && i - start >= 3) {
        const word = text.slice(start, i);
        if (isId(word) && !found.includes(word)) {
          found.push(word);
          if (found.length >= limit) break;
        }
      }
      start = i + 1;
      candidate = false;
    } else if ((code >= 48 && code <= 57) || code === 61 || code === 58) candidate = true;
  }
  return found;
}

const maxLine = 160;

/**
 * `text.slice(from, to)` without splitting a surrogate pair: a cut that would end on the first
 * half of one ends before it, and one that would start on the second half starts after it (a lone
 * surrogate is not valid UTF-8, and providers refuse it).
 */
export function cutText(text: string, from: number, to: number = text.length): string {
  const start = codePointStart(text, from);
  let end = Math.min(text.length, to);
  if (end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return end <= start ? '' : text.slice(start, end);
}

/** `index`, or the one after it when it falls on the second half of a surrogate pair. */
export function codePointStart(text: string, index: number): number {
  const start = Math.max(0, index);
  return start > 0 &&
    start < text.length &&
    isLowSurrogate(text.charCodeAt(start)) &&
    isHighSurrogate(text.charCodeAt(start - 1))
    ? start + 1
    : start;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The first `max` characters of a one-line rendering of `text`. */
export function oneLine(text: string, max = maxLine): string {
  // Only the head can show: flatten what fits (whitespace runs shrink, so take twice the room).
  const head = text.length > max * 2 ? cutText(text, 0, max * 2) : text;
  // Most heads are one line already (single spaces, no edge whitespace): the regex pass and its
  // copy are paid only by a head that has something to flatten.
  const flat = isOneLine(head) ? head : head.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${cutText(flat, 0, max - 1)}…`;
}

/** True when `/\s+/g → ' '` and `trim()` would leave `text` as it is. */
function isOneLine(text: string): boolean {
  const last = text.length - 1;
  let previousSpace = true; // a space at the start would be trimmed
  for (let i = 0; i <= last; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) {
      if (previousSpace || i === last) return false;
      previousSpace = true;
    } else if (code > 32 && code < 127) previousSpace = false;
    else if ((code >= 9 && code <= 13) || (code >= 127 && isUnicodeSpace(code))) return false;
    else previousSpace = false;
  }
  return true;
}

/** What `\s` matches beyond ASCII (ECMAScript's WhiteSpace and LineTerminator). */
function isUnicodeSpace(code: number): boolean {
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** A short hash (FNV-1a) of a block's head and length: cheap, and the same for the same block. */
function blockFingerprint(block: { type: string; text?: string; content?: string }): string {
  const text = block.type === 'text' ? (block.text ?? '') : (block.content ?? '');
  let hash = 0x811c9dc5 ^ text.length;
  const end = Math.min(text.length, 256);
  // A result's head is read from its bytes when it is all ASCII (the same codes, read faster).
  const bytes = end >= 64 ? asciiBytes(text, end) : undefined;
  if (bytes) for (let i = 0; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  else for (let i = 0; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

/**
 * The entries of one step, read from the transcript: each failed call is a `dead_end`, each
 * successful one a `decision` (what was called and the head of what came back) and a
 * `tool_result` (the whole result, for retrieval), the ids a result mentions a `fact`, and the
 * user's own words after the task a `constraint`. The assistant's narration is not kept.
 */
export function recordOfStep(transcript: readonly Message[], unit: StepUnit): StepRecord {
  // One literal, not `{ ...unit, … }`: a spread makes a hidden class per record in V8 11 (Node 20).
  const record: StepRecord = {
    step: unit.step,
    start: unit.start,
    end: unit.end,
    entries: [],
    deadEnds: [],
    calls: [],
  };
  const assistant = transcript[unit.start];
  if (assistant?.role !== 'assistant') return record;
  for (let index = unit.start + 1; index < unit.end; index++) {
    const message = transcript[index];
    if (message?.role !== 'user') continue;
    const content = message.content;
    for (let blockIndex = 0; blockIndex < content.length; blockIndex++) {
      const block = content[blockIndex];
      if (block !== undefined) readBlock(record, assistant.content, index, blockIndex, block);
    }
  }
  return record;
}

/**
 * The call a result answers: the assistant turn's last `tool_use` block with its id (a turn holds
 * a few, so a scan costs less than the map it replaced, which also kept the last).
 */
function callOf(blocks: readonly AssistantBlock[], toolUseId: string): ToolUseBlock | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    if (block?.type === 'tool_use' && block.id === toolUseId) return block;
  }
  return undefined;
}

/** The entries of block `blockIndex` of message `index`, added to `record`. */
function readBlock(
  record: StepRecord,
  turn: readonly AssistantBlock[],
  index: number,
  blockIndex: number,
  block: UserBlock,
): void {
  // The position names the entry, and a fingerprint of what the block holds tells a new run that
  // reuses a run id from the old one in a durable index; a resume re-reads the same text, same id.
  const id = `m${index}.b${blockIndex}.${blockFingerprint(block)}`;
  const step = record.step;
  if (block.type === 'text') {
    // A user turn mid-run (a correction, a new limit) is load-bearing.
    if (block.text.trim() !== '')
      record.entries.push({
        id: `${id}.constraint`,
        step,
        kind: 'constraint',
        text: block.text,
        message: index,
      });
    return;
  }
  if (block.type !== 'tool_result') return;
  const call = callOf(turn, block.toolUseId);
  const name = call?.name ?? 'tool';
  const key = callKey(name, call?.input);
  record.calls.push(key);
  // The key is `name:json`; the call is shown from the same JSON (one serialization, not two).
  const shown = call ? `${name}(${oneLine(key.slice(name.length + 1), 120)})` : name;
  if (block.isError && transientFailure(block.content)) {
    // Failing for now (a timeout, a 503, a ToolError that says retry) rules nothing out.
    record.entries.push({
      id: `${id}.decision`,
      step,
      kind: 'decision',
      tool: name,
      text: `${shown} failed for now (may work later): ${oneLine(block.content, 120)}`,
      message: index,
      untrusted: true,
    });
    return;
  }
  if (block.isError) {
    record.deadEnds.push(key);
    record.entries.push({
      id: `${id}.dead_end`,
      step,
      kind: 'dead_end',
      tool: name,
      text: `${shown} failed: ${oneLine(undelimited(block.content))}`,
      message: index,
      untrusted: true,
    });
    return;
  }
  const content = undelimited(block.content);
  record.entries.push({
    id: `${id}.decision`,
    step,
    kind: 'decision',
    tool: name,
    text: `${shown} → ${oneLine(content, 80)}`,
    message: index,
    untrusted: true,
  });
  const ids = idsIn(content);
  if (ids.length > 0)
    record.entries.push({
      id: `${id}.fact`,
      step,
      kind: 'fact',
      tool: name,
      // Named by its call: an id without what it identifies cannot answer a question about it.
      text: `${shown} returned ${ids.join(', ')}`,
      message: index,
      untrusted: true,
    });
  record.entries.push({
    id: `${id}.result`,
    step,
    kind: 'tool_result',
    tool: name,
    text: content,
    message: index,
    untrusted: true,
  });
}

const transientCodes: ReadonlySet<string> = new Set(['timeout', 'temporarily_unavailable', 'aborted']);

/**
 * Whether an error result says the call may work later: the loop's own error JSON names a
 * transient code (a timeout, a 503, a stopped batch) or carries the tool's `retry: 'yes' | 'after'`.
 */
function transientFailure(content: string): boolean {
  if (!content.startsWith('{"error":') || content.length > 4_000) return false;
  try {
    const error = (JSON.parse(content) as { error?: { code?: unknown; retry?: unknown } }).error;
    return (
      (typeof error?.code === 'string' && transientCodes.has(error.code)) ||
      error?.retry === 'yes' ||
      error?.retry === 'after'
    );
  } catch {
    return false;
  }
}
