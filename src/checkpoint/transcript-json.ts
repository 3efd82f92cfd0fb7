import type { RunState } from '../loop/run-state.js';
import type { Message } from '../model/content.js';

/**
 * The JSON of each message of a transcript that only grows, each made once: a delta writes the
 * new messages' JSON, and a snapshot joins what is kept instead of serializing the transcript
 * again, so rewriting a long run's snapshot costs a copy. Entries are matched to messages by
 * identity, so a message replaced in the list is serialized again.
 *
 * After a snapshot the kept JSON is the snapshot's own text (`#joined`): one string, shared with
 * what the store keeps, rather than a string per message beside it.
 */
export class TranscriptJson {
  /** The messages the JSON is of, by position. */
  readonly #messages: Message[] = [];
  /** The JSON of `#messages[0 … #joinedCount)`, comma-separated, as the last snapshot wrote it. */
  #joined = '';
  #joinedCount = 0;
  /** The JSON of each message after those. */
  readonly #pieces: string[] = [];

  /** The JSON of `messages[from]` onwards, one string per message. */
  since(messages: readonly Message[], from: number): string[] {
    const out: string[] = [];
    // Kept in order from the end of what is kept, so the lists never have holes.
    for (let i = Math.min(from, this.#joinedCount + this.#pieces.length); i < messages.length; i++) {
      const json = this.#at(messages, i);
      if (i >= from) out.push(json);
    }
    return out;
  }

  /** The JSON of the whole list: `[…]`. */
  array(messages: readonly Message[]): string {
    let count = Math.min(this.#joinedCount, messages.length);
    for (let i = 0; i < count; i++)
      if (this.#messages[i] !== messages[i]) {
        // A message of the joined part changed: serialize everything again.
        count = 0;
        break;
      }
    if (count < this.#joinedCount) {
      this.#joined = '';
      this.#joinedCount = 0;
      this.#pieces.length = 0;
    }
    for (let i = this.#joinedCount; i < messages.length; i++) this.#at(messages, i);
    this.#messages.length = messages.length;
    this.#pieces.length = messages.length - this.#joinedCount;
    if (this.#pieces.length > 0) {
      const rest = this.#pieces.join(',');
      this.#joined = this.#joinedCount > 0 ? `${this.#joined},${rest}` : rest;
      this.#joinedCount = messages.length;
      this.#pieces.length = 0;
    }
    return `[${this.#joined}]`;
  }

  /** The JSON of `messages[i]`, for `i` at most the number kept. */
  #at(messages: readonly Message[], i: number): string {
    const message = messages[i] as Message;
    if (i < this.#joinedCount) {
      // Inside the joined text: only a message there again is serialized (rare: see `since`).
      return JSON.stringify(message);
    }
    const piece = i - this.#joinedCount;
    if (this.#messages[i] === message && piece < this.#pieces.length) return this.#pieces[piece] as string;
    const json = JSON.stringify(message);
    this.#messages[i] = message;
    this.#pieces[piece] = json;
    return json;
  }
}

/** `objectJson` (the JSON of an object) with one more member, `"key":value` in JSON already. */
export function withMember(objectJson: string, memberJson: string): string {
  return objectJson === '{}' ? `{${memberJson}}` : `${objectJson.slice(0, -1)},${memberJson}}`;
}

/** The JSON of a run state, its messages' JSON taken from `transcript`. */
export function runStateJson(state: RunState, transcript: TranscriptJson): string {
  const { messages, ...rest } = state;
  return withMember(JSON.stringify(rest), `"messages":${transcript.array(messages)}`);
}
