import { ReinsError } from '../errors/reins-error.js';
import type { AssistantMessage, Message, ToolResultBlock, UserMessage } from '../model/content.js';
import {
  type BlockEdit,
  type ContextEdit,
  contextEditProblem,
  type PinEdit,
  type RangeEdit,
} from './context-edit.js';

/** Sizes one message in tokens (the loop's memoizing counter). */
export type MessageTokens = (message: Message) => number;

/** What a window showed on one call, beside the call before it. */
export interface WindowRendering {
  messages: readonly Message[];
  /** Tokens of `messages`. */
  tokens: number;
  /** True for the first rendering (nothing was cached before it). */
  firstRender: boolean;
  /**
   * Tokens of the leading messages identical to the previous call's (the prefix a provider cache
   * can still serve); 0 on the first call.
   */
  stablePrefixTokens: number;
  /** Tokens the previous call sent after that prefix: what the edits since invalidated. */
  invalidatedTokens: number;
}

/**
 * The transcript as the model sees it: the append-only transcript with every {@link ContextEdit}
 * applied. Rendering costs the messages shown plus the number of ranges, never the transcript's
 * length (ranges are jumped over), and an unchanged message renders as the same object, so the
 * token counter's memo and a provider cache's prefix both hold.
 */
export class ContextWindow {
  readonly #transcript: readonly Message[];
  readonly #count: MessageTokens;
  readonly #edits: ContextEdit[] = [];
  /** Non-overlapping, sorted by `from`. */
  #ranges: RangeEdit[] = [];
  readonly #rangeMessages = new WeakMap<RangeEdit, UserMessage>();
  readonly #blockEdits = new Map<number, Map<number, BlockEdit>>();
  readonly #noThinking = new Set<number>();
  readonly #derived = new Map<number, Message>();
  readonly #pins = new Map<string, PinEdit>();
  #startPins: UserMessage | undefined;
  #endPins: UserMessage | undefined;
  #pinsChanged = true;
  #previous: readonly Message[] = [];
  #previousTokens: number[] = [];
  #renders = 0;
  #countedTo = 0;
  #transcriptTokens = 0;
  /** The last window built and its tokens, while no edit or message has come since. */
  #built: Message[] | undefined;
  #builtEdits = -1;
  #builtLength = -1;
  #builtTokens = 0;

  constructor(transcript: readonly Message[], count: MessageTokens, edits: readonly ContextEdit[] = []) {
    this.#transcript = transcript;
    this.#count = count;
    for (const edit of edits) this.apply(edit);
  }

  /** Every edit applied, in order (what a checkpoint keeps). */
  get edits(): readonly ContextEdit[] {
    return this.#edits;
  }

  /** The ranges shown as a digest or a marker, in transcript order. */
  get ranges(): readonly RangeEdit[] {
    return this.#ranges;
  }

  /** The pinned blocks by key. */
  get pins(): ReadonlyMap<string, PinEdit> {
    return this.#pins;
  }

  /** The range that hides message `index`, if one does. */
  rangeCovering(index: number): RangeEdit | undefined {
    const ranges = this.#ranges;
    let low = 0;
    let high = ranges.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const range = ranges[middle] as RangeEdit;
      if (index < range.from) high = middle - 1;
      else if (index >= range.to) low = middle + 1;
      else return range;
    }
    return undefined;
  }

  /** The edit on a tool result block, if one replaced it. */
  blockEdit(message: number, block: number): BlockEdit | undefined {
    return this.#blockEdits.get(message)?.get(block);
  }

  /** Applies one edit; throws a `ReinsError` (`invalid_context_edit`) for one that cannot apply. */
  apply(edit: ContextEdit): void {
    const problem = contextEditProblem(edit, this.#transcript);
    if (problem !== undefined) throw new ReinsError('invalid_context_edit', `context edit: ${problem}`);
    switch (edit.verb) {
      case 'summarize':
      case 'evict':
        this.#applyRange(edit);
        break;
      case 'admit':
      case 'clear': {
        let byBlock = this.#blockEdits.get(edit.message);
        if (!byBlock) {
          byBlock = new Map();
          this.#blockEdits.set(edit.message, byBlock);
        }
        byBlock.set(edit.block, edit);
        this.#derived.delete(edit.message);
        break;
      }
      case 'drop-thinking':
        this.#noThinking.add(edit.message);
        this.#derived.delete(edit.message);
        break;
      case 'pin':
        // Pinning a key again replaces its text in place: the pins keep the order they were first
        // pinned in, however often each is refreshed (a resumed policy re-pins them all).
        if (edit.text === '') this.#pins.delete(edit.key);
        else this.#pins.set(edit.key, edit);
        this.#pinsChanged = true;
        break;
    }
    this.#edits.push(edit);
  }

  #applyRange(edit: RangeEdit): void {
    // A range may swallow earlier ones whole; a partial overlap has no meaning.
    const kept: RangeEdit[] = [];
    for (const range of this.#ranges) {
      const inside = range.from >= edit.from && range.to <= edit.to;
      const apart = range.to <= edit.from || range.from >= edit.to;
      if (!inside && !apart)
        throw new ReinsError(
          'invalid_context_edit',
          `context edit: range [${edit.from}, ${edit.to}) overlaps [${range.from}, ${range.to}) without covering it`,
        );
      if (apart) kept.push(range);
    }
    kept.push(edit);
    kept.sort((a, b) => a.from - b.from);
    this.#ranges = kept;
  }

  /** Tokens of the whole transcript, counted as it grows (what the window saves is the difference). */
  transcriptTokens(): number {
    const transcript = this.#transcript;
    if (transcript.length < this.#countedTo) {
      this.#countedTo = 0;
      this.#transcriptTokens = 0;
    }
    for (let i = this.#countedTo; i < transcript.length; i++)
      this.#transcriptTokens += this.#count(transcript[i] as Message);
    this.#countedTo = transcript.length;
    return this.#transcriptTokens;
  }

  /** Tokens the window would send now (its messages), without counting as a call. */
  measure(): number {
    this.#build();
    return this.#builtTokens;
  }

  /** The messages to send now, and what stayed cacheable since the last rendering. */
  render(): WindowRendering {
    const out = this.#build();
    const previous = this.#previous;
    const previousTokens = this.#previousTokens;
    const tokens: number[] = new Array(out.length);
    let total = 0;
    let stable = 0;
    let stableCount = 0;
    let same = true;
    for (let i = 0; i < out.length; i++) {
      const counted = this.#count(out[i] as Message);
      tokens[i] = counted;
      total += counted;
      if (same && out[i] === previous[i]) {
        stable += counted;
        stableCount++;
      } else same = false;
    }
    let invalidated = 0;
    for (let i = stableCount; i < previousTokens.length; i++) invalidated += previousTokens[i] as number;
    const firstRender = this.#renders === 0;
    this.#renders++;
    this.#previous = out;
    this.#previousTokens = tokens;
    return {
      messages: out,
      tokens: total,
      firstRender,
      stablePrefixTokens: stable,
      invalidatedTokens: invalidated,
    };
  }

  #build(): Message[] {
    if (
      this.#built &&
      this.#builtEdits === this.#edits.length &&
      this.#builtLength === this.#transcript.length
    )
      return this.#built;
    const out = this.#assemble();
    let total = 0;
    for (const message of out) total += this.#count(message);
    this.#built = out;
    this.#builtEdits = this.#edits.length;
    this.#builtLength = this.#transcript.length;
    this.#builtTokens = total;
    return out;
  }

  #assemble(): Message[] {
    const transcript = this.#transcript;
    const ranges = this.#ranges;
    const out: Message[] = [];
    let nextRange = 0;
    let startPinned = this.#startPinMessage() === undefined;
    for (let i = 0; i < transcript.length; ) {
      const message = transcript[i] as Message;
      if (!startPinned && message.role === 'assistant') {
        out.push(this.#startPins as UserMessage);
        startPinned = true;
      }
      const range = ranges[nextRange];
      if (range !== undefined && range.from === i) {
        if (range.text !== '') out.push(this.#rangeMessage(range));
        i = range.to;
        nextRange++;
        continue;
      }
      out.push(this.#shown(i, message));
      i++;
    }
    if (!startPinned) out.push(this.#startPins as UserMessage);
    const end = this.#endPinMessage();
    if (end) out.push(end);
    return out;
  }

  #rangeMessage(range: RangeEdit): UserMessage {
    let message = this.#rangeMessages.get(range);
    if (!message) {
      message = { role: 'user', content: [{ type: 'text', text: range.text }] };
      this.#rangeMessages.set(range, message);
    }
    return message;
  }

  #shown(index: number, message: Message): Message {
    const byBlock = this.#blockEdits.get(index);
    const noThinking = this.#noThinking.has(index);
    if (!byBlock && !noThinking) return message;
    let derived = this.#derived.get(index);
    if (derived) return derived;
    if (message.role === 'assistant') {
      const content = message.content.filter(
        (block) => block.type !== 'thinking' && block.type !== 'redacted_thinking',
      );
      derived = { role: 'assistant', content } satisfies AssistantMessage;
    } else {
      const content = message.content.map((block, blockIndex) => {
        const edit = byBlock?.get(blockIndex);
        if (!edit || block.type !== 'tool_result') return block;
        const shown: ToolResultBlock = {
          type: 'tool_result',
          toolUseId: block.toolUseId,
          content: edit.text,
          isError: block.isError,
        };
        return shown;
      });
      derived = { role: 'user', content } satisfies UserMessage;
    }
    this.#derived.set(index, derived);
    return derived;
  }

  #refreshPins(): void {
    if (!this.#pinsChanged) return;
    this.#pinsChanged = false;
    const start: string[] = [];
    const end: string[] = [];
    for (const pin of this.#pins.values()) (pin.at === 'start' ? start : end).push(pin.text);
    const message = (texts: string[]): UserMessage | undefined =>
      texts.length === 0
        ? undefined
        : { role: 'user', content: texts.map((text) => ({ type: 'text', text })) };
    const startMessage = message(start);
    const endMessage = message(end);
    // Unchanged text keeps its object, so an end pin that did not change stays cacheable.
    if (!sameText(startMessage, this.#startPins)) this.#startPins = startMessage;
    if (!sameText(endMessage, this.#endPins)) this.#endPins = endMessage;
  }

  #startPinMessage(): UserMessage | undefined {
    this.#refreshPins();
    return this.#startPins;
  }

  #endPinMessage(): UserMessage | undefined {
    this.#refreshPins();
    return this.#endPins;
  }
}

function sameText(a: UserMessage | undefined, b: UserMessage | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.content.length !== b.content.length) return false;
  for (let i = 0; i < a.content.length; i++) {
    const x = a.content[i];
    const y = b.content[i];
    if (x?.type !== 'text' || y?.type !== 'text' || x.text !== y.text) return false;
  }
  return true;
}
