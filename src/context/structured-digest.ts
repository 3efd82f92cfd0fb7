import type { Usage } from '../model/model.js';
import type { StepRecord } from './step-entries.js';
import type { TranscriptEntry } from './transcript-index.js';

/** What a summarizer is given: the steps leaving the window, oldest first. */
export interface SummarizeInput {
  records: readonly StepRecord[];
  /** First and last step replaced. */
  steps: [number, number];
  signal: AbortSignal;
}

/** A digest: the text the window shows in place of the steps, and the model spend it took (if any). */
export interface Summary {
  text: string;
  spent?: { model: string; usage: Usage };
}

/**
 * Compresses steps leaving the window. A summary keeps decisions and dead ends, not narration
 * (post-18), and names the steps it replaced; drop a failed approach without saying it failed and
 * the agent tries it again.
 */
export type Summarizer = (input: SummarizeInput) => Summary | Promise<Summary>;

export interface StructuredDigestOptions {
  /** Successful calls kept per digest, the most recent. @default 3 */
  maxDecisions?: number;
  /** Fact lines kept per digest, the most recent. @default 6 */
  maxFacts?: number;
}

/**
 * The library's own summarizer: no model call, so it costs nothing and cannot hallucinate. From the
 * typed entries of the steps it keeps every dead end (each failed call, named with its input, under
 * "do not retry"), every constraint the user stated, the ids results mentioned, and the most recent
 * successful calls; it drops the narration. The text is delimited as untrusted data: it quotes tool
 * output, which must not gain the authority of a user turn.
 *
 * @example
 * const policy = contextPolicy({ budgetTokens: 8_000, summarize: structuredDigest({ maxDecisions: 2 }) });
 */
export function structuredDigest(options: StructuredDigestOptions = {}): Summarizer {
  const maxDecisions = options.maxDecisions ?? 3;
  const maxFacts = options.maxFacts ?? 6;
  return ({ records, steps }) => ({ text: digestText(records, steps, maxDecisions, maxFacts) });
}

/** The digest's text for `records` (see {@link structuredDigest}). */
export function digestText(
  records: readonly StepRecord[],
  steps: [number, number],
  maxDecisions = 3,
  maxFacts = 6,
  maxRuledOut = maxRuledOutLines,
): string {
  const deadEnds: TranscriptEntry[] = [];
  const constraints: TranscriptEntry[] = [];
  const facts: TranscriptEntry[] = [];
  const decisions: TranscriptEntry[] = [];
  for (const record of records)
    for (const entry of record.entries) {
      if (entry.kind === 'dead_end') deadEnds.push(entry);
      else if (entry.kind === 'constraint') constraints.push(entry);
      else if (entry.kind === 'fact') facts.push(entry);
      else if (entry.kind === 'decision') decisions.push(entry);
    }
  const span = steps[0] === steps[1] ? `step ${steps[0]}` : `steps ${steps[0]}–${steps[1]}`;
  const lines = [
    `<context-digest steps="${steps[0]}-${steps[1]}" trust="untrusted">`,
    `reins summarized ${span}: decisions, dead ends and facts kept, narration dropped; the full steps stay in the transcript.`,
  ];
  const section = (title: string, entries: readonly TranscriptEntry[]) => {
    if (entries.length === 0) return;
    lines.push(title);
    for (const entry of entries) lines.push(`- step ${entry.step}: ${escaped(entry.text)}`);
  };
  // One line per failed call however often it failed, the newest first kept: a digest of a run that
  // keeps failing must not grow with it (the rest stay findable with recall).
  const ruledOut = newestDistinct(deadEnds, maxRuledOut);
  section('Ruled out (failed; do not retry):', ruledOut.kept);
  if (ruledOut.dropped > 0)
    lines.push(`(${ruledOut.dropped} earlier failed calls not listed; recall({ query }) finds them)`);
  const given = newestDistinct(constraints, maxRuledOut);
  section('Constraints the user gave:', given.kept);
  if (given.dropped > 0) lines.push(`(${given.dropped} earlier constraints not listed)`);
  section('Facts:', facts.slice(-maxFacts));
  const kept = decisions.slice(-maxDecisions);
  if (decisions.length > kept.length)
    lines.push(`(${decisions.length - kept.length} earlier successful calls not listed)`);
  section('Done:', kept);
  lines.push('</context-digest>');
  return lines.join('\n');
}

/** Failed calls and constraints a digest or a pin lists at most, the newest kept. */
export const maxRuledOutLines = 20;

/** The newest `max` entries with distinct texts, in step order, and how many distinct ones were left out. */
export function newestDistinct(
  entries: readonly TranscriptEntry[],
  max: number,
): { kept: TranscriptEntry[]; dropped: number } {
  const seen = new Set<string>();
  const kept: TranscriptEntry[] = [];
  let dropped = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as TranscriptEntry;
    // The same call failing again says nothing new: its text without the step is the key.
    if (seen.has(entry.text)) continue;
    seen.add(entry.text);
    if (kept.length < max) kept.push(entry);
    else dropped++;
  }
  return { kept: kept.reverse(), dropped };
}

function escaped(text: string): string {
  return escapeTag(text, 'context-digest');
}

/** `text` with every opening or closing `tag` in it escaped, so quoted text cannot close a block early. */
export function escapeTag(text: string, tag: string): string {
  return text.replace(new RegExp(`<\\/?${tag}`, 'gi'), (found) => found.replace('<', '&lt;'));
}
