import { canonicalJson } from './canonical-json.js';

/** The verdict on one proposed call. */
export interface RepeatCheck {
  /** `tool:canonical-json-of-input`: the diagnosis when the run loops. */
  key: string;
  /** How many times this exact call has been proposed, this one included. */
  count: number;
  /** True once `count` reaches the limit: the call must not run. */
  repeated: boolean;
}

/** The key repeat detection uses: the tool name and the canonical JSON of its input, never the name alone. */
export function repeatKey(tool: string, input: unknown): string {
  return `${tool}:${canonicalJson(input)}`;
}

/**
 * Counts identical `(tool, input)` proposals across a run. A legitimate agent calls one tool many
 * times with different arguments; the same arguments again is the retry loop.
 */
export class RepeatDetector {
  readonly limit: number;
  readonly #counts: Map<string, number>;

  /** @param limit the count at which a call is refused (3 refuses the third identical call). */
  constructor(limit: number, counts?: Iterable<[string, number]>) {
    this.limit = limit;
    this.#counts = new Map(counts);
  }

  /** Counts the proposal and says whether it crossed the limit. */
  check(tool: string, input: unknown): RepeatCheck {
    const key = repeatKey(tool, input);
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return { key, count, repeated: count >= this.limit };
  }

  /** The counts, for a serialized run state. */
  entries(): [string, number][] {
    return [...this.#counts];
  }
}
