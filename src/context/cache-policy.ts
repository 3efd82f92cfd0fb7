import { ConfigurationError } from '../errors/reins-error.js';
import type { AnyTool } from '../tools/define-tool.js';
import { admissions, clearings, pendingTokens } from './admit-and-clear.js';
import { compact } from './compaction.js';
import type { ContextEdit } from './context-edit.js';
import type { ContextMiss, ContextPolicy, ContextPolicyInput } from './context-policy.js';
import { memoryTranscriptIndex } from './memory-transcript-index.js';
import { decisionsText, recalledText } from './pinned-context.js';
import { recallTool } from './recall-tool.js';
import { type RunMemory, readNewSteps } from './run-memory.js';
import type { StepUnit } from './step-entries.js';
import { type Summarizer, type Summary, structuredDigest } from './structured-digest.js';
import type { TranscriptIndex } from './transcript-index.js';

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

const maxRuns = 256;

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
  const lowWater = options.lowWaterTokens;
  if (lowWater !== undefined && !(lowWater > 0 && lowWater <= budget))
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
  // The run touched last is already the newest in `runs`: touching it again moves nothing.
  let newest: RunMemory | undefined;
  let newestRunId: string | undefined;

  const memoryOf = (runId: string): RunMemory => {
    if (runId === newestRunId && newest !== undefined && runs.get(runId) === newest) return newest;
    let memory = runs.get(runId);
    if (memory) {
      // Least recently used goes first: a live run is touched every call.
      runs.delete(runId);
      runs.set(runId, memory);
      newest = memory;
      newestRunId = runId;
      return memory;
    }
    memory = {
      index: options.retrieval?.index(runId),
      digestIndex: perStep ? memoryTranscriptIndex() : undefined,
      units: [],
      records: [],
      readTo: 0,
      deadEnds: new Map(),
      ruledOut: [],
      constraints: [],
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
    newest = memory;
    newestRunId = runId;
    // Old runs' memories go first; a run that comes back re-reads its transcript.
    if (runs.size > maxRuns) runs.delete(runs.keys().next().value as string);
    return memory;
  };

  const offerRecall = options.retrieval ? options.retrieval.tool !== false : options.recallTool !== false;
  const handles = { recall: offerRecall, search: Boolean(options.retrieval) && offerRecall };
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
      const read = readNewSteps(input, memory, misses, indexedChars);
      const fresh = read instanceof Promise ? await read : read;
      // Admit: a big result enters capped, once.
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
      let spent: Summary['spent'];
      const projected = () => input.fixedTokens + input.window.measure() + pendingTokens(edits, input);
      if (projected() > budget) {
        const compaction = await compact(
          input,
          memory,
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
        const count = memory.ruledOut.length + memory.constraints.length;
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
        const text = recalledText(input, memory, fresh[fresh.length - 1], edits, k);
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
