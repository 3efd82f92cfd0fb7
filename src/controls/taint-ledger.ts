import { addressKey, TrustedText } from './trusted-text.js';

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

/**
 * Whether `key`, a key of the object at `objectPath` (the keys leading to it; `[]` for the input
 * itself), is a field name of the tool's input schema rather than data: a record's keys are data
 * (`grants: { [email]: 'read' }`).
 */
export type FieldNames = (objectPath: readonly string[], key: string) => boolean;

/** Without a schema, only the input's own keys are field names. */
const inputKeysOnly: FieldNames = (objectPath) => objectPath.length === 0;

interface Node {
  segments: string[];
  value: unknown;
}
const dotted = (segments: readonly string[]) => (segments.length === 0 ? '(input)' : segments.join('.'));

/** An argument's leaves, and the keys in it that are data, each with its path. */
function argumentLeaves(node: Node, fields: FieldNames, out: Node[]): void {
  const { segments, value } = node;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries())
      argumentLeaves({ segments: [...segments, String(index)], value: item }, fields, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const path = [...segments, key];
      if (!fields(segments, key)) out.push({ segments: path, value: key });
      argumentLeaves({ segments: path, value: member }, fields, out);
    }
  } else out.push(node);
}

/** The leaves under a dotted pattern (`*` for every item or member), keys that are data included. */
function argumentsAt(input: unknown, pattern: string, fields: FieldNames): unknown[] {
  let current: Node[] = [{ segments: [], value: input }];
  const out: Node[] = [];
  for (const segment of pattern.split('.')) {
    const next: Node[] = [];
    for (const { segments, value } of current) {
      if (value === null || typeof value !== 'object') continue;
      if (segment !== '*') {
        if (Object.hasOwn(value, segment))
          next.push({ segments: [...segments, segment], value: (value as Record<string, unknown>)[segment] });
        continue;
      }
      for (const [key, member] of Object.entries(value)) {
        const path = [...segments, key];
        if (!Array.isArray(value) && !fields(segments, key)) out.push({ segments: path, value: key });
        next.push({ segments: path, value: member });
      }
    }
    current = next;
  }
  for (const node of current) argumentLeaves(node, fields, out);
  return out.map((leaf) => leaf.value);
}

const digits = /^\d+$/;

/**
 * Tracks what in a run's context came from sources the agent does not control, and where each
 * argument of a privileged call could have come from. A value has trusted provenance when it is
 * exactly a value a trusted tool field returned, or a whole token (or run of whole tokens) of
 * trusted text: the system prompt and the user's own messages (see {@link TrustedText} for what a
 * token is). Booleans, `null`, blank strings and the keys of records have no provenance of their
 * own, so under taint they are never trusted.
 */
export class TaintLedger {
  #untrusted: number;
  readonly #trustedValues: Set<string>;
  /** The same values in the order they arrived, so a checkpoint writes only the new ones. */
  readonly #trustedList: string[];
  readonly #trustedText = new TrustedText();

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

  /** Text the user or the system prompt wrote. */
  noteTrustedText(text: string): void {
    this.#trustedText.note(text);
  }

  /** A result in the context: whether it is untrusted, and the values its trusted fields returned. */
  noteResult(untrusted: boolean, trustedValues: readonly unknown[]): void {
    if (untrusted) this.#untrusted++;
    for (const value of trustedValues) {
      if (typeof value !== 'string' && typeof value !== 'number') continue;
      // Exactly as returned: `Kate` vouches for `Kate`, not `kate`. A blank vouches for nothing.
      const text = String(value);
      if (text.trim() === '' || this.#trustedValues.has(text)) continue;
      this.#trustedValues.add(text);
      this.#trustedList.push(text);
    }
  }

  /** True when `value` could have come from a trusted source. `undefined` is an absent argument. */
  isTrusted(value: unknown): boolean {
    if (value === undefined) return true;
    if (typeof value === 'number') {
      return (
        Number.isFinite(value) &&
        (this.#trustedValues.has(String(value)) || this.#trustedText.hasNumber(value))
      );
    }
    if (typeof value !== 'string' || value.trim() === '') return false;
    if (this.#trustedValues.has(value)) return true;
    // A word of one or two letters ("a", "me") is in every text; short numbers are not words.
    if (value.length < 3 && !digits.test(value)) return false;
    return this.#trustedText.has(value);
  }

  /**
   * Paths of the sensitive arguments whose values have no trusted provenance. `fields` tells the
   * keys that are field names from the keys that are data; by default only the input's own keys
   * are field names.
   */
  untrustedArguments(
    input: unknown,
    sensitive: readonly string[] | 'all',
    fields: FieldNames = inputKeysOnly,
  ): string[] {
    const untrusted = new Set<string>();
    if (sensitive === 'all') {
      const leaves: Node[] = [];
      argumentLeaves({ segments: [], value: input }, fields, leaves);
      for (const leaf of leaves) if (!this.isTrusted(leaf.value)) untrusted.add(dotted(leaf.segments));
    } else {
      for (const pattern of sensitive)
        if (argumentsAt(input, pattern, fields).some((value) => !this.isTrusted(value)))
          untrusted.add(pattern);
    }
    return [...untrusted];
  }

  state(): TaintState {
    return { untrustedResults: this.#untrusted, trustedValues: [...this.#trustedList] };
  }
}

/**
 * True when `value` is one whole e-mail address at one of `domains` (or a non-empty list of such),
 * for an `allowWhileTainted` predicate: unlike `endsWith('@corp.example')`, it refuses
 * `'mallory@evil.example, team@corp.example'`. The domain is compared in ASCII lowercase (DNS
 * names are case-insensitive); a subdomain is another domain, so list it to allow it.
 *
 * @example
 * const taint = {
 *   allowWhileTainted: [
 *     { tool: 'send_email', when: (input: unknown) => isAddressAt((input as { to: string }).to, ['corp.example']) },
 *   ],
 * };
 */
export function isAddressAt(value: unknown, domains: readonly string[]): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every((item) => isAddressAt(item, domains));
  if (typeof value !== 'string' || value.normalize('NFKC') !== value) return false;
  const key = addressKey(value);
  if (key === undefined) return false;
  const domain = key.slice(key.lastIndexOf('@') + 1);
  return domains.some((allowed) => allowed.toLowerCase() === domain);
}
