/** The ledger's state, for a serialized run state. */
export interface TaintState {
  /** Untrusted tool results now in the context. */
  untrustedResults: number;
  /** Values that came from trusted fields of tool results. */
  trustedValues: string[];
}

/** The leaves of a value, with dotted paths. */
export function leavesOf(value: unknown, path = ''): { path: string; value: unknown }[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => leavesOf(item, path === '' ? String(index) : `${path}.${index}`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, member]) =>
      leavesOf(member, path === '' ? key : `${path}.${key}`),
    );
  }
  return [{ path: path === '' ? '(input)' : path, value }];
}

/** Values at dotted paths, where `*` matches every array item or object member. */
export function valuesAt(value: unknown, pattern: string): unknown[] {
  let current: unknown[] = [value];
  for (const segment of pattern.split('.')) {
    const next: unknown[] = [];
    for (const item of current) {
      if (item === null || typeof item !== 'object') continue;
      if (segment === '*') next.push(...Object.values(item));
      else if (Object.hasOwn(item, segment)) next.push((item as Record<string, unknown>)[segment]);
    }
    current = next;
  }
  return current.flatMap((item) => leavesOf(item).map((leaf) => leaf.value));
}

const normalize = (value: string) => value.trim().toLowerCase();
const wordChar = /[a-z0-9]/;

/**
 * Tracks what in a run's context came from sources the agent does not control, and where each
 * argument of a privileged call could have come from. A value has trusted provenance when it is a
 * value a trusted tool field returned, or appears as a whole word in trusted text (the system
 * prompt and the user's own messages).
 */
export class TaintLedger {
  #untrusted: number;
  readonly #trustedValues: Set<string>;
  /** The same values in the order they arrived, so a checkpoint writes only the new ones. */
  readonly #trustedList: string[];
  #trustedText = '';

  constructor(state?: TaintState) {
    this.#untrusted = state?.untrustedResults ?? 0;
    this.#trustedValues = new Set(state?.trustedValues ?? []);
    this.#trustedList = [...this.#trustedValues];
  }

  /** Untrusted results seen so far. */
  get untrustedResults(): number {
    return this.#untrusted;
  }

  /** How many trusted values the ledger holds. */
  get trustedValueCount(): number {
    return this.#trustedList.length;
  }

  /** Trusted values from position `from` on, in arrival order. */
  trustedValuesFrom(from: number): string[] {
    return this.#trustedList.slice(from);
  }

  /** True while any untrusted result is in the context. */
  get tainted(): boolean {
    return this.#untrusted > 0;
  }

  noteTrustedText(text: string): void {
    this.#trustedText += `\n${normalize(text)}`;
  }

  noteResult(untrusted: boolean, trustedValues: readonly unknown[]): void {
    if (untrusted) this.#untrusted++;
    for (const value of trustedValues) {
      if (typeof value === 'string' || typeof value === 'number') {
        const text = normalize(String(value));
        if (this.#trustedValues.has(text)) continue;
        this.#trustedValues.add(text);
        this.#trustedList.push(text);
      }
    }
  }

  /** True when `value` could have come from a trusted source. */
  isTrusted(value: unknown): boolean {
    if (value === null || value === undefined || typeof value === 'boolean') return true;
    if (typeof value !== 'string' && typeof value !== 'number') return false;
    const text = normalize(String(value));
    if (text === '' || this.#trustedValues.has(text)) return true;
    if (typeof value === 'string' && text.length < 3) return false;
    for (let at = this.#trustedText.indexOf(text); at >= 0; at = this.#trustedText.indexOf(text, at + 1)) {
      const before = this.#trustedText[at - 1] ?? ' ';
      const after = this.#trustedText[at + text.length] ?? ' ';
      if (!wordChar.test(before) && !wordChar.test(after)) return true;
    }
    return false;
  }

  /** Paths of the sensitive arguments whose values have no trusted provenance. */
  untrustedArguments(input: unknown, sensitive: readonly string[] | 'all'): string[] {
    const leaves =
      sensitive === 'all'
        ? leavesOf(input)
        : sensitive.flatMap((pattern) => valuesAt(input, pattern).map((value) => ({ path: pattern, value })));
    return [...new Set(leaves.filter((leaf) => !this.isTrusted(leaf.value)).map((leaf) => leaf.path))];
  }

  state(): TaintState {
    return { untrustedResults: this.#untrusted, trustedValues: [...this.#trustedList] };
  }
}
