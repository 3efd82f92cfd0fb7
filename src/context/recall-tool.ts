import { z } from 'zod';
import { type AnyTool, defineTool } from '../tools/define-tool.js';
import type { ContextMiss } from './context-policy.js';
import { codePointStart, cutText } from './step-entries.js';
import type { TranscriptEntry, TranscriptIndex } from './transcript-index.js';

export interface RecallToolOptions {
  /** The run's index. */
  index: (runId: string) => TranscriptIndex | undefined;
  /** A step's entries, for `recall({ step })`. */
  stepEntries: (runId: string, step: number) => readonly TranscriptEntry[] | undefined;
  /** Hits per query. @default 5 */
  k?: number;
  /** Characters of a step's results per page. @default 6_000 */
  pageChars?: number;
  /** Told of a recall that found nothing (logged as a `context-miss`). */
  onMiss: (runId: string, miss: ContextMiss) => void;
  /** @default 'recall' */
  name?: string;
}

/**
 * The model's way back into the transcript: `recall({ query })` searches every step's entries,
 * `recall({ step, offset })` reads one step's results in pages (how a result admitted capped is read
 * whole). Its output quotes tool output, so it is untrusted like any tool's.
 */
export function recallTool(options: RecallToolOptions): AnyTool {
  const k = options.k ?? 5;
  const pageChars = options.pageChars ?? 6_000;
  return defineTool({
    name: options.name ?? 'recall',
    description:
      "Look up earlier steps of this task that are no longer in view. Pass `query` (plain words: a tool name, an id, an error) to search what was done, what failed and what was found; or pass `step` to read that step's tool results (use `offset` to page through a long one).",
    input: z
      .object({
        query: z.string().max(2_000).optional().describe('Plain words to search for.'),
        step: z.number().int().min(1).optional().describe('A step whose results to read.'),
        offset: z.number().int().min(0).optional().describe("Character offset into that step's results."),
      })
      .refine((value) => value.query !== undefined || value.step !== undefined, {
        message: 'pass query or step',
      }),
    effect: 'read',
    execute: async ({ query, step, offset }, context) => {
      if (step !== undefined) {
        const entries = options
          .stepEntries(context.runId, step)
          ?.filter((entry) => entry.kind === 'tool_result');
        if (!entries || entries.length === 0) {
          options.onMiss(context.runId, {
            kind: 'recall_no_hit',
            step: context.step,
            detail: `recall({ step: ${step} }): that step has no recorded tool results`,
          });
          return `No tool results are recorded for step ${step}.`;
        }
        const whole = entries
          .map((entry) => `[step ${entry.step}, ${entry.tool ?? 'tool'}]\n${entry.text}`)
          .join('\n\n');
        // An offset on the second half of a surrogate pair starts after it (the page before ended before it).
        const from = codePointStart(whole, Math.min(offset ?? 0, whole.length));
        const page = cutText(whole, from, from + pageChars);
        const next = from + page.length;
        return next < whole.length
          ? `${page}\n[characters ${from}–${next} of ${whole.length}; recall({ step: ${step}, offset: ${next} }) for more]`
          : page;
      }
      const index = options.index(context.runId);
      if (!index)
        return "Searching needs a transcript index, which this run has none of; pass `step` to read a step's results.";
      const hits = await index.search(query as string, { k });
      if (hits.length === 0) {
        options.onMiss(context.runId, {
          kind: 'recall_no_hit',
          step: context.step,
          detail: `recall({ query: ${JSON.stringify((query as string).slice(0, 200))} }) found nothing`,
        });
        return 'Nothing in the earlier steps matches.';
      }
      return hits
        .map(
          (hit) =>
            `- step ${hit.step} (${hit.kind}${hit.tool ? `, ${hit.tool}` : ''}): ${cutText(hit.text, 0, 600)}`,
        )
        .join('\n');
    },
  });
}
