import type { Message } from '../model/content.js';

/**
 * One decision about what the window shows, made over the append-only transcript (which never
 * changes): the window is the transcript with every edit so far applied, in order. Edits are
 * recorded in the trace (`context-edit`) and in the run's checkpoint, so a replay and a resumed run
 * show the model the same window.
 *
 * Positions are transcript message indices; a range always covers whole steps (it starts at an
 * assistant message and ends at the next one, or at the end), so a tool call and its result leave
 * the window together.
 */
export type ContextEdit = RangeEdit | BlockEdit | ThinkingEdit | PinEdit;

/** The four verbs of a window run as a cache, and the cheap edits beside them. */
export type ContextVerb = ContextEdit['verb'];

/**
 * `summarize`: messages `[from, to)` are shown as `text`, a digest that names the steps it
 * replaced. `evict`: they are shown as `text`, a one-line marker saying how to get them back (or
 * not at all when `text` is empty). A range that covers earlier ranges supersedes them.
 */
export interface RangeEdit {
  verb: 'summarize' | 'evict';
  from: number;
  to: number;
  /** The steps the range held, first and last. */
  steps: [number, number];
  text: string;
}

/**
 * `admit`: a tool result is shown capped (a big, low-signal result on its way in). `clear`: an old
 * tool result is shown as a placeholder that says how to get it back. `block` is the index of the
 * `tool_result` in the user message `message`.
 */
export interface BlockEdit {
  verb: 'admit' | 'clear';
  message: number;
  block: number;
  step: number;
  text: string;
}

/** The thinking blocks of assistant message `message` are not shown (allowed before the last turn). */
export interface ThinkingEdit {
  verb: 'drop-thinking';
  message: number;
}

/**
 * `pin`: a block of text that is always shown, never evicted or summarized: `at: 'start'` right
 * after the task (in the stable prefix), `at: 'end'` after the newest message, where the model
 * attends best ("Lost in the Middle"). Pinning a key again replaces its text; an empty text unpins.
 */
export interface PinEdit {
  verb: 'pin';
  key: string;
  text: string;
  at: 'start' | 'end';
}

/**
 * Why an edit cannot apply to this transcript, or undefined when it can. An edit from a policy, a
 * trace or a checkpoint is checked before it touches the window.
 */
export function contextEditProblem(edit: unknown, transcript: readonly Message[]): string | undefined {
  if (typeof edit !== 'object' || edit === null) return 'must be an object';
  const e = edit as Record<string, unknown>;
  const length = transcript.length;
  switch (e.verb) {
    case 'summarize':
    case 'evict': {
      if (!isIndex(e.from) || !isIndex(e.to) || (e.from as number) >= (e.to as number))
        return 'from and to must be message indices with from < to';
      const from = e.from as number;
      const to = e.to as number;
      if (to > length) return `to (${to}) is past the transcript's ${length} messages`;
      if (transcript[from]?.role !== 'assistant')
        return `from (${from}) must be an assistant message (a step's start)`;
      if (to < length && transcript[to]?.role !== 'assistant')
        return `to (${to}) must be an assistant message (the next step's start) or the transcript's end`;
      if (to === length) return 'a range must leave the newest step in the window';
      if (!Array.isArray(e.steps) || e.steps.length !== 2 || !e.steps.every(isIndex))
        return 'steps must be [first, last]';
      if (typeof e.text !== 'string') return 'text must be a string';
      return undefined;
    }
    case 'admit':
    case 'clear': {
      if (!isIndex(e.message) || !isIndex(e.block)) return 'message and block must be indices';
      const message = transcript[e.message as number];
      if (message === undefined) return `message ${String(e.message)} is past the transcript`;
      const block = message.content[e.block as number];
      if (message.role !== 'user' || block?.type !== 'tool_result')
        return `message ${String(e.message)} block ${String(e.block)} is not a tool result`;
      if (!isIndex(e.step)) return 'step must be a step number';
      if (typeof e.text !== 'string') return 'text must be a string';
      return undefined;
    }
    case 'drop-thinking': {
      if (!isIndex(e.message)) return 'message must be an index';
      if (transcript[e.message as number]?.role !== 'assistant')
        return `message ${String(e.message)} is not an assistant message`;
      // The newest turn's thinking goes back with its tool results (Anthropic refuses it otherwise).
      for (let i = transcript.length - 1; i > (e.message as number); i--)
        if (transcript[i]?.role === 'assistant') return undefined;
      return `message ${String(e.message)} is the newest assistant turn, whose thinking must be sent`;
    }
    case 'pin':
      if (typeof e.key !== 'string' || e.key === '') return 'key must be a non-empty string';
      if (typeof e.text !== 'string') return 'text must be a string';
      if (e.at !== 'start' && e.at !== 'end') return "at must be 'start' or 'end'";
      return undefined;
    default:
      return `verb must be summarize, evict, admit, clear, drop-thinking or pin, got ${JSON.stringify(e.verb)}`;
  }
}

function isIndex(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0;
}
