import { ConfigurationError } from '../errors/reins-error.js';
import type { Message } from '../model/content.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { BlockEdit, ContextEdit, RangeEdit } from './context-edit.js';
import type { ContextMiss, ContextPolicy, ContextPolicyInput } from './context-policy.js';
import { memoryTranscriptIndex } from './memory-transcript-index.js';
import { recallTool } from './recall-tool.js';
import { cutText, oneLine, recordOfStep, type StepRecord, type StepUnit } from './step-entries.js';
import {
  digestText,
  maxRuledOutLines,
  newestDistinct,
  type Summarizer,
  structuredDigest,
} from './structured-digest.js';
import type { TranscriptEntry, TranscriptIndex } from './transcript-index.js';
import { transcriptTerms } from './transcript-terms.js';

/** What happens to the oldest steps when the window is over budget. */
export type CompactionMode =
  /** Replaced by a digest that keeps decisions and dead ends (each compaction adds one). */
  | 'summarize'
  /** Dropped, with a one-line marker; nothing of them stays in the window. */
  | 'evict'
  /** Dropped into the transcript index behind one marker; the `recall` tool and per-step retrieval bring back what a step needs. */
  | 'retrieve';

export interface ContextPolicyOptions {
  /**
   * The working set, in tokens of the whole prefill (system, tools and window): a number you own,
   * below the model's window. Over it, the oldest steps are compacted.
   */
  budgetTokens: number;
  /** Compaction goes down to this, so it happens every few steps, not every step (and the cache prefix holds between). @default 0.6 × budgetTokens */
  lowWaterTokens?: number;
  /** The newest steps always shown verbatim. @default 2 */
  keepRecentSteps?: number;
  /** @default 'summarize' */
  compaction?: CompactionMode;
  /** How `summarize` compresses. @default structuredDigest() */
  summarize?: Summarizer;
  /**
   * Digests pile up one per compaction; past this many tokens they are merged into one digest of
   * the whole span (dead ends and constraints all kept). @default budgetTokens / 4
   */
  digestBudgetTokens?: number;
  /**
   * Admission control: a tool result over `maxResultTokens` enters the window as its first
   * `previewTokens` and a marker saying how to read the rest (`recall`). `false` admits everything raw.
   * @default { maxResultTokens: 1_200, previewTokens: 300 }
   */
  admit?: { maxResultTokens: number; previewTokens?: number } | false;
  /** Tool results older than `afterSteps` steps are shown as a placeholder that says how to get them back. @default false */
  clearToolResults?: { afterSteps: number } | false;
  /** Thinking blocks before the last assistant turn are not re-sent. @default true */
  dropThinking?: boolean;
  /**
   * Keep the dead ends (calls that failed) and the user's later constraints pinned at the end of
   * the window, never summarized: what must not be retried or forgotten survives any compaction.
   * @default false
   */
  pinDecisions?: boolean;
  /** Text pinned after the task for the whole run (constraints, ids, the goal): never evicted. */
  pinned?: readonly string[];
  /** The live working state, pinned at the end and refreshed before every call. */
  workingState?: (input: ContextPolicyInput) => string | undefined;
  /**
   * The transcript as something to query: every step's entries go into `index`; with `tool` the
   * model gets a `recall` tool, with `perStep` the top `k` entries for what the last step did are
   * pinned at the end (only entries out of the window).
   */
  /**
   * Offer the `recall` tool without retrieval too: `recall({ step })` reads a result the window
   * shows capped or cleared (a query needs `retrieval`). @default true
   */
  recallTool?: boolean;
  /** A cache breakpoint after the stable part of the window (see `ContextPolicy.cacheBreakpoint`). @default true */
  cacheBreakpoint?: boolean;
  retrieval?: {
    /** One index per run (a run id names it). */
    index: (runId: string) => TranscriptIndex;
    /** @default 5 */
    k?: number;
    /** @default true */
    perStep?: boolean;
    /** @default true */
    tool?: boolean;
    /**
     * Close the run's index (`close()`, when it has one) when the run ends: a factory that opens an
     * index per run leaks nothing. A factory returning one shared index sets this false. @default true
     */
    closeOnEnd?: boolean;
    /**
     * Characters of each tool result that go into the index: its head (ids, errors, subjects). The
     * whole result stays in the transcript and `recall({ step })` reads it. @default 2_000
     */
    indexedResultChars?: number;
  };
}

/** A context policy built by {@link contextPolicy}, and its `pin` for facts learned mid-run. */
export interface BuiltContextPolicy extends ContextPolicy {
  readonly tools: readonly AnyTool[];
  /** Pins `text` under `key` in run `runId` from its next call on (an empty text unpins). */
  pin(runId: string, key: string, text: string, at?: 'start' | 'end'): void;
}

/** Per run: what the policy has read of the transcript and what it remembers of it. */
interface RunMemory {
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
  constraints: TranscriptEntry[];
  /** The pinned decisions' lines, grown as steps are read (never rebuilt from the whole run). */
  ruledOutLines: TranscriptEntry[];
  constraintLines: TranscriptEntry[];
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

const maxRuns = 256;

/** Steps a merged digest reads, the newest of its span. */
const mergedSteps = 200;

/** A per-step query keeps the terms at most this share of the short entries hold. */
const distinctiveShare = 0.05;

/**
 * The context window run as a cache (post-18): a token budget below the model's window, the task
 * pinned first, working state and (optionally) decisions pinned last, and the four verbs as code —
 * admit (big results capped on the way in), evict or summarize (oldest unpinned steps first, down
 * to a low-water mark so the cache prefix holds for several steps), reorder (load-bearing content
 * at the edges) — plus clearing old tool results and dropping stale thinking. With `retrieval`
 * the transcript is also an index the model queries, so step 2,000's prompt is the size of step
 * 20's. Every change is a `context-edit` event over the append-only transcript.
 *
 * One policy serves many runs (its memory is per run id). Cost per call: the new steps and the
 * window, never the whole transcript.
 *
 * @example
 * import { contextPolicy, memoryTranscriptIndex } from 'reins/context';
 * const context = contextPolicy({
 *   budgetTokens: 8_000,
 *   pinDecisions: true,
 *   retrieval: { index: () => memoryTranscriptIndex() },
 * });
 * // runAgent({ model, tools, input, context });
 */
export function contextPolicy(options: ContextPolicyOptions): BuiltContextPolicy {
  const budget = checkedBudget(options);
  // Without a figure, compaction keeps 60 % of what the budget leaves beside system and tools (a
  // fraction of the whole budget could sit below a large fixed prompt and empty the window every time).
  const lowWaterOf = (fixedTokens: number) =>
    options.lowWaterTokens ?? Math.floor(fixedTokens + Math.max(0, budget - fixedTokens) * 0.6);
  const lowWater = options.lowWaterTokens ?? Math.floor(budget * 0.6);
  if (!(lowWater > 0 && lowWater <= budget))
    throw new ConfigurationError('context.lowWaterTokens', `must be > 0 and ≤ budgetTokens (${budget})`);
  const keepRecent = options.keepRecentSteps ?? 2;
  if (!Number.isInteger(keepRecent) || keepRecent < 1)
    throw new ConfigurationError('context.keepRecentSteps', 'must be an integer ≥ 1');
  const mode = options.compaction ?? 'summarize';
  if (!['summarize', 'evict', 'retrieve'].includes(mode))
    throw new ConfigurationError('context.compaction', "must be 'summarize', 'evict' or 'retrieve'");
  if (mode === 'retrieve' && !options.retrieval)
    throw new ConfigurationError('context.compaction', "'retrieve' needs retrieval: { index }");
  const summarize = options.summarize ?? structuredDigest();
  const digestBudget = options.digestBudgetTokens ?? Math.floor(budget / 4);
  const admit = options.admit === undefined ? { maxResultTokens: 1_200, previewTokens: 300 } : options.admit;
  const clearAfter = options.clearToolResults ? options.clearToolResults.afterSteps : undefined;
  const dropThinking = options.dropThinking ?? true;
  const k = options.retrieval?.k ?? 5;
  const indexedChars = options.retrieval?.indexedResultChars ?? 2_000;
  const perStep = options.retrieval ? (options.retrieval.perStep ?? true) : false;
  const runs = new Map<string, RunMemory>();

  const memoryOf = (runId: string): RunMemory => {
    let memory = runs.get(runId);
    if (memory) {
      // Least recently used goes first: a live run is touched every call.
      runs.delete(runId);
      runs.set(runId, memory);
      return memory;
    }
    memory = {
      index: options.retrieval?.index(runId),
      digestIndex: perStep ? memoryTranscriptIndex() : undefined,
      units: [],
      records: [],
      readTo: 0,
      deadEnds: new Map(),
      constraints: [],
      ruledOutLines: [],
      constraintLines: [],
      compactedTo: 0,
      pending: [],
      misses: [],
      lastRecall: '',
      lastWorking: '',
      lastDecisions: '',
      decisionsCount: 0,
      tail: undefined,
    };
    runs.set(runId, memory);
    // Old runs' memories go first; a run that comes back re-reads its transcript.
    if (runs.size > maxRuns) runs.delete(runs.keys().next().value as string);
    return memory;
  };

  const offerRecall = options.retrieval ? options.retrieval.tool !== false : options.recallTool !== false;
  const tools: AnyTool[] = offerRecall
    ? [
        recallTool({
          index: (runId) => memoryOf(runId).index,
          stepEntries: (runId, step) => memoryOf(runId).records[step - 1]?.entries,
          k,
          onMiss: (runId, miss) => memoryOf(runId).misses.push(miss),
        }),
      ]
    : [];

  return {
    name: `context-${mode}`,
    tools,
    cacheBreakpoint: options.cacheBreakpoint ?? true,
    end(runId) {
      const memory = runs.get(runId);
      runs.delete(runId);
      // A durable index the factory opened for this run is closed with it.
      const index = memory?.index as { close?: () => unknown } | undefined;
      if (options.retrieval?.closeOnEnd !== false && typeof index?.close === 'function') index.close();
    },
    pin(runId, key, text, at = 'end') {
      memoryOf(runId).pending.push({ verb: 'pin', key, text, at });
    },
    async prepare(input) {
      const memory = memoryOf(input.runId);
      const edits: ContextEdit[] = memory.pending.splice(0);
      const misses: ContextMiss[] = memory.misses.splice(0);
      const window = input.window;
      if (edits.length === 0 && window.edits.length === 0 && options.pinned?.length)
        for (const [i, text] of options.pinned.entries())
          edits.push({ verb: 'pin', key: `pinned-${i}`, text, at: 'start' });

      if (memory.readTo === 0 && window.pins.size > 0) {
        // A run that comes back (a resume, another process): the pins its window holds are what
        // this memory would have pinned, so nothing is re-pinned that did not change.
        memory.lastDecisions = window.pins.get('decisions')?.text ?? '';
        memory.lastWorking = window.pins.get('working-state')?.text ?? '';
        memory.lastRecall = window.pins.get('recalled')?.text ?? '';
      }
      const fresh = await readNewSteps(input, memory, misses, indexedChars);
      // Admit: a big result enters capped, once.
      const handles = { recall: offerRecall, search: Boolean(options.retrieval) && offerRecall };
      if (admit) for (const record of fresh) edits.push(...admissions(input, record, admit, handles));
      // The cheap edits: clear aged results, drop stale thinking.
      const units = memory.units;
      if (clearAfter !== undefined && units.length > clearAfter) {
        const aged = units[units.length - 1 - clearAfter] as StepUnit;
        edits.push(...clearings(input, aged, handles));
      }
      if (dropThinking && units.length >= 2) {
        const previous = units[units.length - 2] as StepUnit;
        const message = input.transcript[previous.start];
        if (
          message?.role === 'assistant' &&
          message.content.some(isThinking) &&
          !window.rangeCovering(previous.start)
        )
          edits.push({ verb: 'drop-thinking', message: previous.start });
      }
      // Apply what we have so far to a scratch view of the sizes, then compact if over budget.
      let spent: { model: string; usage: import('../model/model.js').Usage } | undefined;
      const projected = () => input.fixedTokens + input.window.measure() + pendingTokens(edits, input);
      if (projected() > budget) {
        const compaction = await compact(
          input,
          memory,
          edits,
          mode,
          summarize,
          keepRecent,
          lowWaterOf(input.fixedTokens),
          digestBudget,
          projected,
        );
        if (compaction) {
          edits.push(compaction.edit);
          if (compaction.spent) spent = compaction.spent;
        }
      }
      // Reorder: what must never be missed sits at the end, where the model attends best.
      if (options.pinDecisions) {
        const count = memory.ruledOutLines.length + memory.constraintLines.length;
        const text = count === memory.decisionsCount ? memory.lastDecisions : decisionsText(memory);
        memory.decisionsCount = count;
        if (text !== memory.lastDecisions) {
          memory.lastDecisions = text;
          edits.push({ verb: 'pin', key: 'decisions', text, at: 'end' });
        }
      }
      if (options.workingState) {
        const text = options.workingState(input) ?? '';
        if (text !== memory.lastWorking) {
          memory.lastWorking = text;
          edits.push({ verb: 'pin', key: 'working-state', text, at: 'end' });
        }
      }
      if (perStep && memory.digestIndex) {
        const text = await recalledText(input, memory, fresh[fresh.length - 1], edits, k);
        if (text !== memory.lastRecall) {
          memory.lastRecall = text;
          edits.push({ verb: 'pin', key: 'recalled', text, at: 'end' });
        }
      }
      if (edits.length === 0 && misses.length === 0 && !spent) return undefined;
      return { edits, misses, ...(spent ? { spent } : {}) };
    },
  };
}

function checkedBudget(options: ContextPolicyOptions): number {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('context', 'contextPolicy needs { budgetTokens }');
  const budget = options.budgetTokens;
  if (!Number.isInteger(budget) || budget < 1)
    throw new ConfigurationError('context.budgetTokens', 'must be an integer ≥ 1');
  if (
    options.admit &&
    !(Number.isInteger(options.admit.maxResultTokens) && options.admit.maxResultTokens >= 1)
  )
    throw new ConfigurationError('context.admit.maxResultTokens', 'must be an integer ≥ 1');
  if (
    options.clearToolResults &&
    !(Number.isInteger(options.clearToolResults.afterSteps) && options.clearToolResults.afterSteps >= 1)
  )
    throw new ConfigurationError('context.clearToolResults.afterSteps', 'must be an integer ≥ 1');
  return budget;
}

function isThinking(block: { type: string }): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/**
 * Reads the steps completed since the last call (a step is complete once an assistant turn follows
 * it), records their entries, indexes them, and notes a call that repeats a ruled-out approach.
 */
async function readNewSteps(
  input: ContextPolicyInput,
  memory: RunMemory,
  misses: ContextMiss[],
  indexedChars: number,
): Promise<StepRecord[]> {
  const transcript = input.transcript;
  if (transcript.length < memory.readTo) {
    // A different transcript under the same run id (a fresh start): read it again.
    memory.units = [];
    memory.records = [];
    memory.readTo = 0;
    memory.deadEnds.clear();
    memory.constraints = [];
    memory.ruledOutLines = [];
    memory.constraintLines = [];
    memory.compactedTo = 0;
  }
  const fresh: StepRecord[] = [];
  const firstRead = new Set<StepRecord>();
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
    if (!reused) firstRead.add(record);
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
    for (const key of record.calls) {
      const ruledOut = memory.deadEnds.get(key);
      // Checked when the step is first read: a run that ends on the repeat still logs it.
      if (ruledOut !== undefined && ruledOut < record.step && firstRead.has(record))
        misses.push({
          kind: 'repeated_dead_end',
          step: record.step,
          detail: `${oneLine(key, 200)} failed at step ${ruledOut} and was called again`,
        });
    }
    if (!complete) continue;
    for (const key of record.deadEnds) if (!memory.deadEnds.has(key)) memory.deadEnds.set(key, record.step);
    for (const entry of record.entries) {
      if (entry.kind === 'constraint') {
        memory.constraints.push(entry);
        memory.constraintLines.push(entry);
      } else if (entry.kind === 'dead_end') memory.ruledOutLines.push(entry);
    }
    entries.push(...record.entries);
  }
  if (memory.index && entries.length > 0) {
    // A result's head is what a search needs (its ids, its error, its subject); the whole result
    // stays in the transcript, and recall({ step }) reads it.
    const indexed = entries.map((entry) =>
      entry.kind === 'tool_result' && entry.text.length > indexedChars
        ? { ...entry, text: cutText(entry.text, 0, indexedChars) }
        : entry,
    );
    await memory.index.append(indexed);
  }
  if (memory.digestIndex && entries.length > 0)
    memory.digestIndex.append(entries.filter((entry) => entry.kind !== 'tool_result'));
  return fresh;
}

/** `admit` edits for the big results of a step just read. */
function admissions(
  input: ContextPolicyInput,
  record: StepRecord,
  admit: { maxResultTokens: number; previewTokens?: number },
  handles: { recall: boolean; search: boolean },
): BlockEdit[] {
  const out: BlockEdit[] = [];
  const transcript = input.transcript;
  for (let index = record.start + 1; index < record.end; index++) {
    const message = transcript[index] as Message;
    if (message.role !== 'user') continue;
    message.content.forEach((block, blockIndex) => {
      if (block.type !== 'tool_result' || input.window.blockEdit(index, blockIndex)) return;
      const tokens = input.countMessage({ role: 'user', content: [block] });
      if (tokens <= admit.maxResultTokens) return;
      const previewChars = (admit.previewTokens ?? 300) * 4;
      const head = cutText(block.content, 0, previewChars);
      const closes = block.content.startsWith('<tool-output') ? '\n</tool-output>' : '';
      out.push({
        verb: 'admit',
        message: index,
        block: blockIndex,
        step: record.step,
        text: `${head}${closes}\n[reins: this result is ${tokens} tokens; the window shows its first ${admit.previewTokens ?? 300}.${
          handles.recall
            ? ` The whole result is kept: recall({ step: ${record.step} }) reads it in pages${handles.search ? ', recall({ query }) searches it' : ''}.`
            : ' Ask for a narrower result if you need more of it.'
        }]`,
      });
    });
  }
  return out;
}

/** `clear` edits for the results of a step that aged out of `clearToolResults`. */
function clearings(
  input: ContextPolicyInput,
  unit: StepUnit,
  handles: { recall: boolean; search: boolean },
): BlockEdit[] {
  const out: BlockEdit[] = [];
  if (input.window.rangeCovering(unit.start)) return out;
  for (let index = unit.start + 1; index < unit.end; index++) {
    const message = input.transcript[index] as Message;
    if (message.role !== 'user') continue;
    message.content.forEach((block, blockIndex) => {
      if (block.type !== 'tool_result') return;
      const existing = input.window.blockEdit(index, blockIndex);
      if (existing?.verb === 'clear') return;
      const tokens = input.countMessage({ role: 'user', content: [block] });
      out.push({
        verb: 'clear',
        message: index,
        block: blockIndex,
        step: unit.step,
        text: `[reins: the result of step ${unit.step} (${tokens} tokens) was cleared from the window${handles.recall ? `; recall({ step: ${unit.step} }) brings it back` : ''}]`,
      });
    });
  }
  return out;
}

function textTokens(input: ContextPolicyInput, text: string): number {
  return input.countMessage({ role: 'user', content: [{ type: 'text', text }] });
}

/** Tokens the not-yet-applied edits add or remove, roughly (admit and clear shrink a result). */
function pendingTokens(edits: readonly ContextEdit[], input: ContextPolicyInput): number {
  let delta = 0;
  for (const edit of edits) {
    if (edit.verb === 'admit' || edit.verb === 'clear') {
      const message = input.transcript[edit.message] as Message;
      const block = message.content[edit.block];
      if (block?.type !== 'tool_result') continue;
      delta += textTokens(input, edit.text) - input.countMessage({ role: 'user', content: [block] });
    } else if (edit.verb === 'pin') delta += textTokens(input, edit.text);
  }
  return delta;
}

type Compaction = { edit: RangeEdit; spent?: { model: string; usage: import('../model/model.js').Usage } };

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
async function compact(
  input: ContextPolicyInput,
  memory: RunMemory,
  edits: readonly ContextEdit[],
  mode: CompactionMode,
  summarize: Summarizer,
  keepRecent: number,
  lowWater: number,
  digestBudget: number,
  projected: () => number,
): Promise<
  { edit: RangeEdit; spent?: { model: string; usage: import('../model/model.js').Usage } } | undefined
> {
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
  void edits;
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

/** The pinned decisions: every dead end and every constraint the user gave, never summarized. */
function decisionsText(memory: RunMemory): string {
  if (memory.ruledOutLines.length === 0 && memory.constraintLines.length === 0) return '';
  // Bounded like a digest: one line per failed call, the newest 20; a run that keeps failing does
  // not grow its pin (the rest are in the transcript, and recall finds them).
  const constraints = newestDistinct(memory.constraintLines, maxRuledOutLines);
  const ruledOut = newestDistinct(memory.ruledOutLines, maxRuledOutLines);
  const line = (entry: TranscriptEntry) => `- step ${entry.step}: ${escapedPinned(entry.text)}`;
  const out = ['<context-pinned trust="untrusted">'];
  if (constraints.kept.length > 0) out.push('Constraints the user gave:', ...constraints.kept.map(line));
  if (constraints.dropped > 0) out.push(`(${constraints.dropped} earlier constraints not listed)`);
  if (ruledOut.kept.length > 0) out.push('Ruled out (failed; do not retry):', ...ruledOut.kept.map(line));
  if (ruledOut.dropped > 0) out.push(`(${ruledOut.dropped} earlier failed calls not listed)`);
  out.push('</context-pinned>');
  return out.join('\n');
}

function escapedPinned(text: string): string {
  return text.replace(/<\/?context-pinned/gi, (tag) => tag.replace('<', '&lt;'));
}

/** The top entries for what the last step did, among those out of the window. */
async function recalledText(
  input: ContextPolicyInput,
  memory: RunMemory,
  newest: StepRecord | undefined,
  edits: readonly ContextEdit[],
  k: number,
): Promise<string> {
  const index = memory.digestIndex as NonNullable<RunMemory['digestIndex']>;
  const last = newest ?? memory.records[memory.records.length - 1];
  if (!last) return '';
  // What the last step did, not what it read: its calls (tool and input), what failed, the ids it
  // met and the user's words. A result's prose shares its common words with every other result.
  const query = [
    ...last.calls,
    ...last.entries
      .filter((entry) => entry.kind !== 'tool_result' && entry.kind !== 'decision')
      .map((entry) => entry.text),
  ].join(' ');
  if (query.trim() === '') return '';
  // Only what the window no longer shows is worth a retrieval.
  const ranges = [
    ...input.window.ranges,
    ...edits.filter((edit): edit is RangeEdit => edit.verb === 'evict' || edit.verb === 'summarize'),
  ];
  const out = ranges.reduce((max, range) => Math.max(max, range.steps[1]), 0);
  if (out === 0) return '';
  // Only a distinctive word can find something: a term most entries hold (the tool's name, a field
  // name) matches everything equally and would make every search read the whole index.
  const distinctive = [...new Set(transcriptTerms(oneLine(query, 1_000)))].filter(
    (term) => index.termShare(term) <= distinctiveShare,
  );
  if (distinctive.length === 0) return '';
  const hits = index.search(distinctive.join(' '), {
    k,
    beforeStep: out + 1,
    kinds: ['dead_end', 'fact', 'decision', 'constraint'],
  });
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
