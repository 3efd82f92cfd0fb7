import { z } from 'zod';
import type { ModelResponse, Usage } from '../model/model.js';
import { emptyUsage } from '../model/model.js';

/** Why a judge's call produced no usable verdict. */
export type InvalidVerdictReason =
  /** The model call threw (a network error, a refusal raised as an error, a timeout). */
  | 'model_error'
  /** Another model answered than the pinned one (or the response did not say which). */
  | 'model_mismatch'
  /** The response held no call of the verdict tool. */
  | 'no_verdict'
  /** The verdict tool's input did not parse or did not match its schema. */
  | 'malformed_verdict'
  /** The label (or winner) is not on the judge's scale. */
  | 'unknown_label'
  /** The verdict quoted nothing. */
  | 'no_evidence'
  /** A quote does not occur, word for word, in the text graded. */
  | 'evidence_not_found';

/** A call that produced no usable verdict, and why: never counted as a pass. */
export interface InvalidVerdict {
  kind: 'invalid';
  reason: InvalidVerdictReason;
  /** What a person debugging the judge needs: the model id seen, the quote not found. */
  detail: string;
  usage: Usage;
}

const submission = z.object({ evidence: z.array(z.string()), choice: z.string() });

/** Whitespace runs as one space, ends trimmed: the form quotes and texts are compared in. */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function shorten(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
}

/** The fewest letters or digits a quote must hold to count as evidence. */
export const minQuoteCharacters = 3;

function substance(text: string): number {
  let count = 0;
  for (const character of text) if (/[\p{L}\p{N}]/u.test(character)) count++;
  return count;
}

/** What a judge's response held, once the pinned model, the tool call and the evidence checked out. */
export type ReadSubmission =
  | { kind: 'submitted'; choice: string; evidence: string[]; usage: Usage }
  | InvalidVerdict;

/**
 * Reads a judge's tool call from a response: the answering model must be the pinned one, the call
 * must parse, its choice must be allowed, and every quote must occur in one of `sources` after
 * whitespace normalization.
 */
export function readSubmission(
  response: ModelResponse,
  expect: {
    modelId: string;
    toolName: string;
    choiceField: string;
    choices: readonly string[];
    /** Which source a choice must quote from (pairwise: the answer picked). */
    evidenceFrom?: (choice: string) => number | undefined;
  },
  sources: readonly string[],
): ReadSubmission {
  const usage = response.usage ?? emptyUsage();
  const invalid = (reason: InvalidVerdictReason, detail: string): InvalidVerdict => ({
    kind: 'invalid',
    reason,
    detail,
    usage,
  });
  if (response.model !== expect.modelId)
    return invalid(
      'model_mismatch',
      response.model === undefined
        ? `the response did not say which model answered; pinned "${expect.modelId}"`
        : `answered by "${response.model}", pinned "${expect.modelId}"`,
    );
  const calls = response.content.filter(
    (block) => block.type === 'tool_use' && block.name === expect.toolName,
  );
  const call = calls[0];
  if (call === undefined || call.type !== 'tool_use')
    return invalid('no_verdict', `no ${expect.toolName} call (stop reason ${response.stopReason})`);
  if (calls.length > 1)
    return invalid('malformed_verdict', `${calls.length} ${expect.toolName} calls, one expected`);
  const raw = call.input as { [field: string]: unknown } | undefined;
  if (raw === undefined)
    return invalid('malformed_verdict', `arguments are not JSON: ${shorten(call.inputText ?? '')}`);
  const parsed = submission.safeParse({ evidence: raw.evidence, choice: raw[expect.choiceField] });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const path = issue.path.map((key) => (key === 'choice' ? expect.choiceField : String(key))).join('.');
      return `${path}: ${issue.message}`;
    });
    return invalid('malformed_verdict', issues.join('; '));
  }
  const { choice, evidence } = parsed.data;
  if (!expect.choices.includes(choice))
    return invalid('unknown_label', `"${shorten(choice)}" is not one of ${expect.choices.join(', ')}`);
  if (evidence.length === 0) return invalid('no_evidence', 'the verdict quoted nothing');
  const haystacks = sources.map(normalizeWhitespace);
  const quoted = new Set<number>();
  for (const quote of evidence) {
    const needle = normalizeWhitespace(quote);
    // A quote must say something: "." or "a" occurs in any answer and proves nothing.
    if (substance(needle) < minQuoteCharacters)
      return invalid(
        'no_evidence',
        `"${shorten(quote)}" is too short to be evidence (under ${minQuoteCharacters} letters or digits)`,
      );
    const found = haystacks.findIndex((haystack) => haystack.includes(needle));
    if (found === -1)
      return invalid('evidence_not_found', `"${shorten(quote)}" does not occur in the text graded`);
    quoted.add(found);
    // A quote found in both texts is evidence about either.
    haystacks.forEach((haystack, index) => {
      if (haystack.includes(needle)) quoted.add(index);
    });
  }
  // Pairwise, the pick must rest on the text picked: quoting only the other answer is no evidence for it.
  const picked = expect.evidenceFrom?.(choice);
  if (picked !== undefined && !quoted.has(picked))
    return invalid(
      'evidence_not_found',
      `the verdict picked "${shorten(choice)}" but quoted nothing from it`,
    );
  return { kind: 'submitted', choice, evidence, usage };
}
