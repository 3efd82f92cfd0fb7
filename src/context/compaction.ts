import type { Message } from '../model/content.js';
import { textTokens } from './admit-and-clear.js';
import type { CompactionMode } from './cache-policy.js';
import type { RangeEdit } from './context-edit.js';
import type { ContextPolicyInput } from './context-policy.js';
import type { RunMemory } from './run-memory.js';
import type { StepUnit } from './step-entries.js';
import type { Summarizer, Summary } from './structured-digest.js';

/** Steps a merged digest reads, the newest of its span. */
const mergedSteps = 200;

export type Compaction = { edit: RangeEdit; spent?: Summary['spent'] };

/** One digest range over steps `from`..`to`, from their records. */
async function summarized(
  input: ContextPolicyInput,
  memory: RunMemory,
  summarize: Summarizer,
  from: { start: number; step: number },
  to: StepUnit,
  readSteps = Number.POSITIVE_INFINITY,
): Promise<Compaction> {
  // A merge names the whole span but reads its newest steps only: what a digest lists is bounded
  // (the newest failed calls, facts and calls), so reading from step 1 at every merge bought nothing.
  const records = memory.records.slice(Math.max(from.step - 1, to.step - readSteps), to.step);
  const summary = await summarize({ records, steps: [from.step, to.step], signal: input.signal });
  if (typeof summary?.text !== 'string') throw new TypeError('the summarizer must return { text }');
  const edit: RangeEdit = {
    verb: 'summarize',
    from: from.start,
    to: to.end,
    steps: [from.step, to.step],
    text: summary.text,
  };
  return summary.spent ? { edit, spent: summary.spent } : { edit };
}

/**
 * Digests pile up (the transcript cross-post: compressed is not gone). Once they hold more than
 * `digestBudget` tokens, the digests and the steps now leaving (through `to`) become one digest of
 * the whole span: its dead ends and constraints all kept, its narration of calls cut to the last few.
 */
async function mergeDigests(
  input: ContextPolicyInput,
  memory: RunMemory,
  summarize: Summarizer,
  digestBudget: number,
  to: StepUnit | undefined,
): Promise<Compaction | undefined> {
  const ranges = input.window.ranges;
  const head = ranges[0];
  const tail = ranges[ranges.length - 1];
  if (!head || !tail || (to === undefined && ranges.length < 2)) return undefined;
  let digestTokens = 0;
  for (const range of ranges) digestTokens += textTokens(input, range.text);
  if (digestTokens <= digestBudget) return undefined;
  const last = to ?? (memory.units[tail.steps[1] - 1] as StepUnit | undefined);
  if (!last) return undefined;
  return summarized(input, memory, summarize, { start: head.from, step: head.steps[0] }, last, mergedSteps);
}

/** The oldest live steps, compacted until the projected window is at the low-water mark. */
export async function compact(
  input: ContextPolicyInput,
  memory: RunMemory,
  mode: CompactionMode,
  summarize: Summarizer,
  keepRecent: number,
  lowWater: number,
  digestBudget: number,
  projected: () => number,
): Promise<Compaction | undefined> {
  const window = input.window;
  const units = memory.units;
  // Complete steps that may leave: all but the newest `keepRecent` (the step in flight is not in `units`).
  const limit = units.length - (keepRecent - 1);
  let first = -1;
  for (let i = memory.compactedTo; i < limit; i++)
    if (!window.rangeCovering((units[i] as StepUnit).start)) {
      first = i;
      break;
    }
  if (first === -1)
    return mode === 'summarize' ? mergeDigests(input, memory, summarize, digestBudget, undefined) : undefined;
  memory.compactedTo = first;
  let excess = projected() - lowWater;
  let last = first;
  for (let i = first; i < limit; i++) {
    const unit = units[i] as StepUnit;
    if (window.rangeCovering(unit.start)) break;
    last = i;
    for (let m = unit.start; m < unit.end; m++) excess -= input.countMessage(input.transcript[m] as Message);
    if (excess <= 0) break;
  }
  const from = units[first] as StepUnit;
  const to = units[last] as StepUnit;
  if (mode === 'summarize') {
    const merged = await mergeDigests(input, memory, summarize, digestBudget, to);
    if (merged) return merged;
    return summarized(input, memory, summarize, from, to);
  }
  // evict and retrieve: one marker for everything out of the window, widened each time.
  const earlier = window.ranges[0];
  const start = earlier && earlier.from <= from.start ? earlier : undefined;
  const fromIndex = start ? start.from : from.start;
  const firstStep = start ? start.steps[0] : from.step;
  const text =
    mode === 'retrieve'
      ? `[reins: steps ${firstStep}–${to.step} are out of the window. Their calls, results, dead ends and facts are in the transcript index: call recall({ query }) to look something up, recall({ step }) to read a step's results. Entries relevant to the last step are listed at the end.]`
      : `[reins: steps ${firstStep}–${to.step} were evicted from the window to keep it within budget.]`;
  return { edit: { verb: 'evict', from: fromIndex, to: to.end, steps: [firstStep, to.step], text } };
}
