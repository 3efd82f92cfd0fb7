import type { Outcome } from '../loop/outcome.js';
import type { Message } from '../model/content.js';
import type { ToolDefinition, Usage } from '../model/model.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { ContextEdit } from './context-edit.js';
import type { ContextWindow } from './context-window.js';

/** What a context policy is shown before each model call. */
export interface ContextPolicyInput {
  runId: string;
  step: number;
  /** True on the final-answer call at the step limit. */
  final: boolean;
  /** The full, append-only transcript (never edited: the window is). */
  transcript: readonly Message[];
  /** The window as the edits so far shape it. Read it; return edits to change it. */
  window: ContextWindow;
  /** Tokens the window holds now (its messages, without system and tools). */
  windowTokens: number;
  /** Tokens of the system prompt and the tool definitions, sent on every call. */
  fixedTokens: number;
  /** Sizes a message the way the loop does (memoized: counting a message again is free). */
  countMessage(message: Message): number;
  /**
   * Sizes a message made only to be sized (a block or a text wrapped in a message), the way
   * `countMessage` does, without remembering it. Optional: without it, `countMessage` is used.
   */
  countFresh?(message: Message): number;
  system: string;
  tools: readonly ToolDefinition[];
  signal: AbortSignal;
}

/**
 * Something the window needed and did not have: a `recall` that found nothing, a tool call that
 * repeats an approach already ruled out (the retrieval-era "stuck but busy"). Each is a
 * `context-miss` trace event, so a bad query function shows up in the metrics, not the postmortem.
 */
export interface ContextMiss {
  kind: 'recall_no_hit' | 'repeated_dead_end' | 'pinned_missing';
  step: number;
  detail: string;
}

/** What a policy decided for one call. */
export interface ContextChanges {
  /** Applied in order; each is a `context-edit` event and part of the checkpoint. */
  edits?: readonly ContextEdit[];
  misses?: readonly ContextMiss[];
  /**
   * Tokens the policy spent on its own model calls (a summarizer), charged to the run's billed
   * tokens and, at `model`'s price, its spend.
   */
  spent?: { model: string; usage: Usage };
}

/**
 * Decides, before every model call, what the window shows: the extension point of the prepare
 * stage, run before `prepareStep`. Its edits are events over the append-only transcript, so a
 * replay and a resumed run show the model the same window. See {@link contextPolicy}.
 */
export interface ContextPolicy {
  readonly name: string;
  /** Tools the policy offers the model (a `recall` tool); joined to the run's tools. */
  readonly tools?: readonly AnyTool[];
  /**
   * Put a cache breakpoint on the newest transcript message, ahead of the end pins that change
   * every call, so the provider caches the stable part and never writes the volatile tail
   * (Anthropic; unless the run's `modelSettings.cache` is off or names its own messages).
   * @default false
   */
  readonly cacheBreakpoint?: boolean;
  prepare(input: ContextPolicyInput): ContextChanges | undefined | Promise<ContextChanges | undefined>;
  /**
   * Called once when a run ends, however it ends (a paused run too): what the policy kept for it can
   * go. A run that comes back (a resume) is prepared again from its transcript. Errors are ignored.
   */
  end?(runId: string, outcome: Outcome): void | Promise<void>;
}
