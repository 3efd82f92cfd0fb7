import { type ContextEdit, ContextWindow, type RangeEdit } from '../../src/context/index.js';
import {
  approxTokenEstimator,
  type ContextEditEvent,
  type ContextWindowEvent,
  canonicalJson,
  type Message,
  PrefillCounter,
  type TraceEvent,
} from '../../src/index.js';

/** What became of a piece of the transcript in the window a call sent. */
export type WindowPartKind = 'pinned' | 'live' | 'admitted' | 'cleared' | 'summarized' | 'evicted';

/** One thing the window held (or left out) at a step, in the order the model saw it. */
export interface WindowPart {
  kind: WindowPartKind;
  /** What it stands for: `task`, `step 2 · model`, `step 1 · result`, `steps 1–3`, `pin decisions`. */
  label: string;
  /** The text the window shows for it; '' when nothing is shown. */
  text: string;
  /** Tokens the window spends on it. */
  tokens: number;
  /** Tokens of the transcript messages it stands for, when it stands in for something bigger or smaller. */
  transcriptTokens?: number;
}

/** The window one step's call sent, rebuilt from the trace. */
export interface WindowAtStep {
  step: number;
  /** The loop's own figures for the call (`context-window`). */
  figures: ContextWindowEvent;
  parts: WindowPart[];
  /** The edits the policy made just before this call. */
  edits: ContextEditEvent[];
}

/**
 * Rebuilds the window step `step`'s call sent: the run's `context-edit` events up to that step,
 * applied by reins's own {@link ContextWindow} to the transcript as it stood then
 * (`transcriptMessages` of the step's `context-window` event), then each rendered message placed
 * back on the transcript. Undefined when the run had no context policy. Sizes use the loop's
 * default estimator, as the lab's runs do.
 */
export function windowAtStep(
  trace: readonly TraceEvent[],
  transcript: readonly Message[],
  step: number,
): WindowAtStep | undefined {
  let figures: ContextWindowEvent | undefined;
  const applied: ContextEdit[] = [];
  const edits: ContextEditEvent[] = [];
  for (const event of trace) {
    if (event.type === 'context-edit' && event.step <= step) {
      applied.push(event.edit);
      if (event.step === step) edits.push(event);
    }
    if (event.type === 'context-window' && event.step === step) figures = event;
  }
  if (!figures) return undefined;
  const shown = transcript.slice(0, figures.transcriptMessages);
  const counter = new PrefillCounter(approxTokenEstimator);
  const count = (message: Message) => counter.message(message);
  const window = new ContextWindow(shown, count, applied);
  const rendered = window.render().messages;

  const indexOf = new Map<Message, number>(shown.map((message, index) => [message, index]));
  const stepOf = stepNumbers(shown);
  const pins = [...window.pins.values()];
  const pinTexts = (at: 'start' | 'end') => pins.filter((pin) => pin.at === at);
  const parts: WindowPart[] = [];
  let next = 0;

  const rangePart = (range: RangeEdit): WindowPart => {
    let replaced = 0;
    for (let i = range.from; i < range.to; i++) replaced += count(shown[i] as Message);
    const [first, last] = range.steps;
    return {
      kind: range.verb === 'summarize' ? 'summarized' : 'evicted',
      label: first === last ? `step ${first}` : `steps ${first}–${last}`,
      text: range.text,
      tokens: range.text === '' ? 0 : count(textMessage(range.text)),
      transcriptTokens: replaced,
    };
  };
  // A range whose text is empty shows nothing: it is only visible as a gap in the transcript.
  const passSilentRanges = (until: number) => {
    while (next < until) {
      const range = window.rangeCovering(next);
      if (range?.text !== '') return;
      parts.push(rangePart(range));
      next = range.to;
    }
  };

  for (const message of rendered) {
    const at = indexOf.get(message);
    if (at !== undefined) {
      passSilentRanges(at);
      parts.push(messagePart(message, at, stepOf, count, 'live'));
      next = at + 1;
      continue;
    }
    const pinned = (['start', 'end'] as const).find((end) =>
      sameTexts(
        message,
        pinTexts(end).map((pin) => pin.text),
      ),
    );
    if (pinned) {
      for (const pin of pinTexts(pinned))
        parts.push({
          kind: 'pinned',
          label: `pin ${pin.key} (${pinned === 'start' ? 'after the task' : 'at the end'})`,
          text: pin.text,
          tokens: count(textMessage(pin.text)),
        });
      continue;
    }
    const range = window.rangeCovering(next);
    if (range && range.text !== '' && sameTexts(message, [range.text])) {
      parts.push(rangePart(range));
      next = range.to;
      continue;
    }
    passSilentRanges(shown.length);
    const original = shown[next];
    if (!original) throw new Error(`the window rendered a message the lab cannot place: ${preview(message)}`);
    // Not the transcript's object, so an edit changed it: a result admitted capped or cleared, or thinking dropped.
    const edited = messagePart(message, next, stepOf, count, 'live');
    const block = original.content.findIndex((_, b) => window.blockEdit(next, b) !== undefined);
    const edit = block === -1 ? undefined : window.blockEdit(next, block);
    if (edit) edited.kind = edit.verb === 'admit' ? 'admitted' : 'cleared';
    edited.transcriptTokens = count(original);
    parts.push(edited);
    next++;
  }
  passSilentRanges(shown.length);
  return { step, figures, parts, edits };
}

/** The step each transcript message belongs to: the task is 0, a model turn opens the next step. */
function stepNumbers(transcript: readonly Message[]): number[] {
  let step = 0;
  return transcript.map((message) => {
    if (message.role === 'assistant') step++;
    return step;
  });
}

function messagePart(
  message: Message,
  index: number,
  stepOf: readonly number[],
  count: (message: Message) => number,
  kind: WindowPartKind,
): WindowPart {
  const step = stepOf[index] ?? 0;
  const results = message.content.filter((block) => block.type === 'tool_result').length;
  const label =
    index === 0
      ? 'task'
      : message.role === 'assistant'
        ? `step ${step} · model`
        : results > 0
          ? `step ${step} · ${results === 1 ? 'result' : `${results} results`}`
          : `step ${step} · message`;
  return { kind, label, text: preview(message), tokens: count(message) };
}

/** A message as text: its words, its calls as `tool({...})`, its results' content. */
function preview(message: Message): string {
  return message.content
    .map((block) => {
      switch (block.type) {
        case 'text':
          return block.text;
        case 'tool_use':
          return `${block.name}(${canonicalJson(block.input ?? null)})`;
        case 'tool_result':
          return block.content;
        case 'thinking':
        case 'redacted_thinking':
          return '(thinking)';
        default:
          return `(${block.type})`;
      }
    })
    .join('\n');
}

const textMessage = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

function sameTexts(message: Message, texts: readonly string[]): boolean {
  if (message.role !== 'user' || texts.length === 0 || message.content.length !== texts.length) return false;
  return message.content.every((block, i) => block.type === 'text' && block.text === texts[i]);
}
