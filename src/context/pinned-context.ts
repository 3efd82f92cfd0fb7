import type { ContextEdit } from './context-edit.js';
import type { ContextPolicyInput } from './context-policy.js';
import type { RunMemory } from './run-memory.js';
import { oneLine, type StepRecord } from './step-entries.js';
import { digestText, escapeTag, maxRuledOutLines, newestDistinct } from './structured-digest.js';
import type { TranscriptEntry, TranscriptEntryKind } from './transcript-index.js';
import { transcriptTerms } from './transcript-terms.js';

/** A per-step query keeps the terms at most this share of the short entries hold. */
const distinctiveShare = 0.05;
/** What a per-step retrieval may bring back (one list for every search, not one per call). */
const recalledKinds: readonly TranscriptEntryKind[] = ['dead_end', 'fact', 'decision', 'constraint'];

/** The pinned decisions: every dead end and every constraint the user gave, never summarized. */
export function decisionsText(memory: RunMemory): string {
  if (memory.ruledOut.length === 0 && memory.constraints.length === 0) return '';
  // Bounded like a digest: one line per failed call, the newest 20; a run that keeps failing does
  // not grow its pin (the rest are in the transcript, and recall finds them).
  const constraints = newestDistinct(memory.constraints, maxRuledOutLines);
  const ruledOut = newestDistinct(memory.ruledOut, maxRuledOutLines);
  const line = (entry: TranscriptEntry) => `- step ${entry.step}: ${escapedPinned(entry.text)}`;
  const out = ['<context-pinned trust="untrusted">'];
  if (constraints.kept.length > 0) out.push('Constraints the user gave:', ...constraints.kept.map(line));
  if (constraints.dropped > 0) out.push(`(${constraints.dropped} earlier constraints not listed)`);
  if (ruledOut.kept.length > 0) out.push('Ruled out (failed; do not retry):', ...ruledOut.kept.map(line));
  if (ruledOut.dropped > 0) out.push(`(${ruledOut.dropped} earlier failed calls not listed)`);
  out.push('</context-pinned>');
  return out.join('\n');
}

export function escapedPinned(text: string): string {
  return escapeTag(text, 'context-pinned');
}

/** The top entries for what the last step did, among those out of the window (the policy's own index answers at once). */
export function recalledText(
  input: ContextPolicyInput,
  memory: RunMemory,
  newest: StepRecord | undefined,
  edits: readonly ContextEdit[],
  k: number,
): string {
  const index = memory.digestIndex as NonNullable<RunMemory['digestIndex']>;
  const last = newest ?? memory.records[memory.records.length - 1];
  if (!last) return '';
  // Only what the window no longer shows is worth a retrieval (checked first: it costs nothing).
  let out = 0;
  for (const range of input.window.ranges) out = Math.max(out, range.steps[1]);
  for (const edit of edits)
    if (edit.verb === 'evict' || edit.verb === 'summarize') out = Math.max(out, edit.steps[1]);
  if (out === 0) return '';
  // What the last step did, not what it read: its calls (tool and input), what failed, the ids it
  // met and the user's words. A result's prose shares its common words with every other result.
  // (The texts joined by spaces, built without the arrays a spread, a filter and a map make.)
  let query = '';
  let parts = 0;
  for (const call of last.calls) query = parts++ === 0 ? call : `${query} ${call}`;
  for (const entry of last.entries)
    if (entry.kind !== 'tool_result' && entry.kind !== 'decision')
      query = parts++ === 0 ? entry.text : `${query} ${entry.text}`;
  if (query.trim() === '') return '';
  // Only a distinctive word can find something: a term most entries hold (the tool's name, a field
  // name) matches everything equally and would make every search read the whole index. A query of
  // 1,000 characters or fewer is its own one-line form, term for term (whitespace only separates).
  const distinctive: string[] = [];
  const terms = transcriptTerms(query.length <= 1_000 ? query : oneLine(query, 1_000));
  // Each term once, first seen first: a query has a few, which a list checks for less than a set.
  const seen = terms.length > 32 ? new Set<string>() : undefined;
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i] as string;
    if (seen ? seen.has(term) : terms.indexOf(term) < i) continue;
    seen?.add(term);
    if (index.termShare(term) <= distinctiveShare) distinctive.push(term);
  }
  if (distinctive.length === 0) return '';
  const hits = index.search(distinctive.join(' '), { k, beforeStep: out + 1, kinds: recalledKinds });
  if (hits.length === 0) return '';
  return digestText(
    [
      {
        step: 0,
        start: 0,
        end: 0,
        entries: [...hits].sort((a, b) => a.step - b.step),
        deadEnds: [],
        calls: [],
      },
    ],
    [hits.reduce((m, h) => Math.min(m, h.step), Infinity), hits.reduce((m, h) => Math.max(m, h.step), 0)],
    k,
    k,
  ).replace('reins summarized', 'reins recalled, for the last step, from');
}
