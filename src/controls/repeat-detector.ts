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
    return this.checkKey(repeatKey(tool, input));
  }

  /** {@link check} for a key already built (`tool:canonicalJson(input)`), so it is serialized once. */
  checkKey(key: string): RepeatCheck {
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    this.#changed?.add(key);
    return { key, count, repeated: count >= this.limit };
  }

  #changed: Set<string> | undefined;

  /** Starts recording which keys change, for checkpoint deltas. */
  trackChanges(): void {
    this.#changed ??= new Set();
  }

  /** The entries changed since the last call (with {@link trackChanges} on), and forgets them. */
  takeChanges(): [string, number][] {
    const changed = this.#changed;
    if (!changed || changed.size === 0) return [];
    const out: [string, number][] = [];
    for (const key of changed) out.push([key, this.#counts.get(key) as number]);
    changed.clear();
    return out;
  }

  /** The counts, for a serialized run state. */
  entries(): [string, number][] {
    // Sized once and filled by forEach: spreading the map makes an iterator result per entry.
    const out = new Array<[string, number]>(this.#counts.size);
    let at = 0;
    this.#counts.forEach((count, key) => {
      out[at++] = [key, count];
    });
    return out;
  }
}
