import type { RunState } from '../loop/run-state.js';
import type { Message } from '../model/content.js';

/**
 * The JSON of each message of a transcript that only grows, each made once: a delta writes the
 * new messages' JSON, and a snapshot joins what is kept instead of serializing the transcript
 * again, so rewriting a long run's snapshot costs a copy. Keeps about the transcript's size in
 * text (bounded by the context budget). Entries are matched to messages by identity, so a message
 * replaced in the list is serialized again.
 */
export class TranscriptJson {
  readonly #messages: Message[] = [];
  readonly #json: string[] = [];

  /** The JSON of `messages[from]` onwards, one string per message. */
  since(messages: readonly Message[], from: number): string[] {
    const out: string[] = [];
    // Filled in order from what is kept, so the lists never have holes.
    for (let i = Math.min(from, this.#json.length); i < messages.length; i++) {
      const json = this.#at(messages, i);
      if (i >= from) out.push(json);
    }
    return out;
  }

  /** The JSON of the whole list: `[…]`. */
  array(messages: readonly Message[]): string {
    for (let i = 0; i < messages.length; i++) this.#at(messages, i);
    this.#messages.length = messages.length;
    this.#json.length = messages.length;
    return `[${this.#json.join(',')}]`;
  }

  /** The JSON of `messages[i]`, for `i` at most the number kept. */
  #at(messages: readonly Message[], i: number): string {
    const message = messages[i] as Message;
    if (this.#messages[i] === message) return this.#json[i] as string;
    const json = JSON.stringify(message);
    this.#messages[i] = message;
    this.#json[i] = json;
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
