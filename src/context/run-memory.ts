import type { ContextEdit } from './context-edit.js';
import type { ContextMiss, ContextPolicyInput } from './context-policy.js';
import type { memoryTranscriptIndex } from './memory-transcript-index.js';
import { cutText, oneLine, recordOfStep, type StepRecord, type StepUnit } from './step-entries.js';
import type { TranscriptEntry, TranscriptIndex } from './transcript-index.js';

/** Per run: what the policy has read of the transcript and what it remembers of it. */
export interface RunMemory {
  index: TranscriptIndex | undefined;
  /**
   * The per-step retrieval's own index, in memory: only the short entries (calls, dead ends, ids,
   * constraints), so its postings are not every result's prose. Rebuilt from the transcript when a
   * run comes back; the run's `index` keeps everything for `recall`.
   */
  digestIndex: ReturnType<typeof memoryTranscriptIndex> | undefined;
  /** Units read so far, and where the next one starts. */
  units: StepUnit[];
  records: StepRecord[];
  readTo: number;
  deadEnds: Map<string, number>;
  /** The pinned decisions' entries, grown as steps are read (never rebuilt from the whole run). */
  ruledOut: TranscriptEntry[];
  constraints: TranscriptEntry[];
  /** Units before this index are all behind a range: compaction starts looking here. */
  compactedTo: number;
  pending: ContextEdit[];
  misses: ContextMiss[];
  lastRecall: string;
  lastWorking: string;
  lastDecisions: string;
  decisionsCount: number;
  /** The newest step as read last call, while no later turn has come. */
  tail: StepRecord | undefined;
}

/**
 * Reads the steps completed since the last call (a step is complete once an assistant turn follows
 * it), records their entries, indexes them, and notes a call that repeats a ruled-out approach.
 * A promise only when the run's index appends asynchronously (every step: no await it does not need).
 */
export function readNewSteps(
  input: ContextPolicyInput,
  memory: RunMemory,
  misses: ContextMiss[],
  indexedChars: number,
): StepRecord[] | Promise<StepRecord[]> {
  const transcript = input.transcript;
  if (transcript.length < memory.readTo) {
    // A different transcript under the same run id (a fresh start): read it again.
    memory.units = [];
    memory.records = [];
    memory.readTo = 0;
    memory.deadEnds.clear();
    memory.ruledOut = [];
    memory.constraints = [];
    memory.compactedTo = 0;
  }
  const fresh: StepRecord[] = [];
  // At most one record is not read for the first time: the newest step of the last call, reused.
  let reusedRecord: StepRecord | undefined;
  let start = memory.readTo;
  // Skip to the first assistant turn not yet read.
  while (start < transcript.length && transcript[start]?.role !== 'assistant') start++;
  while (start < transcript.length) {
    let end = start + 1;
    while (end < transcript.length && transcript[end]?.role !== 'assistant') end++;
    const unit: StepUnit = { step: memory.units.length + 1, start, end };
    // The newest step was read last call already (its results were in); read it once.
    const tail = memory.tail;
    const reused = tail !== undefined && tail.start === start && tail.end === end;
    const record = reused ? tail : recordOfStep(transcript, unit);
    if (reused) reusedRecord = record;
    memory.tail = end === transcript.length ? record : undefined;
    // The newest step is read now and again once it is complete (its results may still come).
    if (end === transcript.length) {
      fresh.push(record);
      break;
    }
    memory.units.push(unit);
    memory.records.push(record);
    memory.readTo = end;
    fresh.push(record);
    start = end;
  }
  const entries: TranscriptEntry[] = [];
  for (const record of fresh) {
    const complete = record.end < transcript.length;
    if (record !== reusedRecord)
      for (const key of record.calls) {
        const ruledOut = memory.deadEnds.get(key);
        // Checked when the step is first read: a run that ends on the repeat still logs it.
        if (ruledOut !== undefined && ruledOut < record.step)
          misses.push({
            kind: 'repeated_dead_end',
            step: record.step,
            detail: `${oneLine(key, 200)} failed at step ${ruledOut} and was called again`,
          });
      }
    if (!complete) continue;
    for (const key of record.deadEnds) if (!memory.deadEnds.has(key)) memory.deadEnds.set(key, record.step);
    for (const entry of record.entries) {
      if (entry.kind === 'constraint') memory.constraints.push(entry);
      else if (entry.kind === 'dead_end') memory.ruledOut.push(entry);
      entries.push(entry);
    }
  }
  if (memory.index && entries.length > 0) {
    // A result's head is what a search needs (its ids, its error, its subject); the whole result
    // stays in the transcript, and recall({ step }) reads it.
    let indexed = entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as TranscriptEntry;
      if (entry.kind !== 'tool_result' || entry.text.length <= indexedChars) continue;
      if (indexed === entries) indexed = entries.slice();
      indexed[i] = withText(entry, cutText(entry.text, 0, indexedChars));
    }
    const appended = memory.index.append(indexed);
    if (appended instanceof Promise) return appended.then(() => appendDigests(memory, entries, fresh));
  }
  return appendDigests(memory, entries, fresh);
}

function appendDigests(memory: RunMemory, entries: TranscriptEntry[], fresh: StepRecord[]): StepRecord[] {
  if (!memory.digestIndex || entries.length === 0) return fresh;
  const short: TranscriptEntry[] = [];
  for (const entry of entries) if (entry.kind !== 'tool_result') short.push(entry);
  memory.digestIndex.append(short);
  return fresh;
}

/** `entry` with another text, built in one literal (`{ ...entry, text }` makes a hidden class per object). */
function withText(entry: TranscriptEntry, text: string): TranscriptEntry {
  const copy: TranscriptEntry = { id: entry.id, step: entry.step, kind: entry.kind, text };
  if (entry.tool !== undefined) copy.tool = entry.tool;
  if (entry.message !== undefined) copy.message = entry.message;
  if (entry.untrusted !== undefined) copy.untrusted = entry.untrusted;
  return copy;
}
