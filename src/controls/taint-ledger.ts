import type { ValueSource } from './taint-policy.js';
import { addressKey, TrustedText } from './trusted-text.js';
import { fieldNameOf, kindOf, lastFieldOf, type ValueKind } from './value-kind.js';

/**
 * A value a trusted field of a tool result returned, with the kind of field it came from and the
 * tool: it vouches only for an argument of the same kind. (States written before kinds existed
 * hold bare strings, which vouch for any kind.)
 */
export interface TrustedFact {
  value: string;
  kind: ValueKind;
  source: `tool:${string}`;
}

/** The ledger's state, for a serialized run state. */
export interface TaintState {
  /** Untrusted tool results now in the context. */
  untrustedResults: number;
  /** Values that came from trusted fields of tool results, in arrival order. */
  trustedValues: (string | TrustedFact)[];
  /** Distinctive tokens of private results (see `privateOutput`), in arrival order. */
  privateValues?: string[];
  /** Run-wide counts for policy caps and the plan, by key; `private:results` counts private reads. */
  counters?: [string, number][];
}

/** The leaves of a value as strings (what `String(leaf.value)` gives), without their paths. */
function leafStrings(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const item of value) leafStrings(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const key in value)
      if (Object.hasOwn(value, key)) leafStrings((value as Record<string, unknown>)[key], into);
  } else into.add(String(value));
}

/** The leaves of a value, with dotted paths. */
export function leavesOf(value: unknown, path = ''): { path: string; value: unknown }[] {
  const out: { path: string; value: unknown }[] = [];
  pushLeaves(value, path, out);
  return out;
}

function pushLeaves(value: unknown, path: string, out: { path: string; value: unknown }[]): void {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++)
      pushLeaves(value[index], path === '' ? String(index) : `${path}.${index}`, out);
  } else if (value !== null && typeof value === 'object') {
    for (const key in value)
      if (Object.hasOwn(value, key))
        pushLeaves((value as Record<string, unknown>)[key], path === '' ? key : `${path}.${key}`, out);
  } else out.push({ path: path === '' ? '(input)' : path, value });
}

/** Values at dotted paths, where `*` matches every array item or object member. */
export function valuesAt(value: unknown, pattern: string): unknown[] {
  return leavesAt(value, pattern).map((leaf) => leaf.value);
}

/** The leaves at dotted paths (`*` for every item or member), each with its full dotted path. */
export function leavesAt(value: unknown, pattern: string): { path: string; value: unknown }[] {
  let current: { path: string; value: unknown }[] = [{ path: '', value }];
  for (const segment of pattern.split('.')) {
    const next: { path: string; value: unknown }[] = [];
    for (const item of current) {
      if (item.value === null || typeof item.value !== 'object') continue;
      const join = (key: string) => (item.path === '' ? key : `${item.path}.${key}`);
      if (segment === '*')
        for (const [key, member] of Object.entries(item.value)) next.push({ path: join(key), value: member });
      else if (Object.hasOwn(item.value, segment))
        next.push({ path: join(segment), value: (item.value as Record<string, unknown>)[segment] });
    }
    current = next;
  }
  return current.flatMap((item) => leavesOf(item.value, item.path));
}

/**
 * Whether `key`, a key of the object at `objectPath` (the keys leading to it; `[]` for the input
 * itself), is a field name of the tool's input schema rather than data: a record's keys are data
 * (`grants: { [email]: 'read' }`).
 */
export type FieldNames = (objectPath: readonly string[], key: string) => boolean;

/** Without a schema, only the input's own keys are field names. */
const inputKeysOnly: FieldNames = (objectPath) => objectPath.length === 0;

/** One argument the guard checks: a leaf value, or a key that is data, with its path and field. */
export interface ArgumentLeaf {
  /** Dotted, from the input down; `(input)` for a bare value. */
  path: string;
  value: unknown;
  /** The field the value sits in (for a record's key, the record's field), for its kind. */
  field: string;
  /** The path's segments. */
  segments: readonly string[];
}

/** Dotted patterns, split once: they come from configuration, so there are few of them. */
const splitPatterns = new Map<string, readonly string[]>();
function segmentsOf(pattern: string): readonly string[] {
  let segments = splitPatterns.get(pattern);
  if (segments === undefined) {
    segments = pattern.split('.');
    if (splitPatterns.size < 10_000) splitPatterns.set(pattern, segments);
  }
  return segments;
}

/**
 * A trusted result's leaves less those that echo its own call's input (`get_order(ORD-9)` →
 * `{ orderId: 'ORD-9' }` must not make an id the attacker chose trusted). Pass every form the
 * input took: as the model wrote it, and as the tool's schema handed it over.
 */
export function withoutEchoes<L extends { value: unknown }>(
  leaves: readonly L[],
  inputs: readonly unknown[],
): L[] {
  if (leaves.length === 0) return [...leaves];
  const echoed = new Set<string>();
  for (const input of inputs) leafStrings(input, echoed);
  return leaves.filter((leaf) => !echoed.has(String(leaf.value)));
}

/** Whether a leaf lies at or below any of the dotted patterns. */
export function underAny(leaf: ArgumentLeaf, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => under(leaf.segments, segmentsOf(pattern)));
}

/**
 * The leaves (from `argumentsAt(input, …)`) at or below a dotted pattern (`*` matches any
 * one segment), less those at or below any of `except`: one walk of the input serves every check.
 */
export function leavesUnder(
  leaves: readonly ArgumentLeaf[],
  pattern: string,
  except: readonly string[] = [],
): ArgumentLeaf[] {
  const wanted = segmentsOf(pattern);
  const out: ArgumentLeaf[] = [];
  for (const leaf of leaves) {
    if (!under(leaf.segments, wanted)) continue;
    if (except.length > 0 && except.some((skipped) => under(leaf.segments, segmentsOf(skipped)))) continue;
    out.push(leaf);
  }
  return out;
}

const dotted = (segments: readonly string[]) => (segments.length === 0 ? '(input)' : segments.join('.'));
type Leaf = ArgumentLeaf;
const leafOf = (segments: string[], value: unknown, key = false): Leaf => ({
  path: segments.length === 1 ? (segments[0] as string) : dotted(segments),
  value,
  field: key ? (segments.length === 1 ? '' : lastFieldOf(segments.slice(0, -1))) : lastFieldOf(segments),
  segments,
});

/** An argument's leaves, and the keys in it that are data, each with its path. */
function argumentLeaves(segments: string[], value: unknown, fields: FieldNames, out: Leaf[]): void {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++)
      argumentLeaves([...segments, String(index)], value[index], fields, out);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const path = segments.length === 0 ? [key] : [...segments, key];
      if (!fields(segments, key)) out.push(leafOf(path, key, true));
      argumentLeaves(path, record[key], fields, out);
    }
  } else out.push(leafOf(segments, value));
}

/**
 * The arguments a guard checks: every leaf of the input and every key in it that is data (a
 * record's keys), each with its path and field, in one walk. Filter them with {@link leavesUnder}.
 */
export function argumentsAt(input: unknown, fields: FieldNames = inputKeysOnly): ArgumentLeaf[] {
  const out: Leaf[] = [];
  argumentLeaves([], input, fields, out);
  return out;
}

/** Whether a path lies at or below a pattern (`*` matches any one segment). */
function under(path: readonly string[], pattern: readonly string[]): boolean {
  if (path.length < pattern.length) return false;
  return pattern.every((segment, index) => segment === '*' || segment === path[index]);
}

const digits = /^\d+$/;
const ascii = /^[\x00-\x7f]*$/;
/** Tokens of a private value worth watching for: long words, anything with a digit, addresses. */
const privateToken = /[\p{L}\p{N}]+(?:[._+@\-:/][\p{L}\p{N}]+)*/gu;
const distinctive = (token: string) => token.length >= 6 || (token.length >= 3 && /\d/.test(token));

/**
 * Tracks what in a run's context came from sources the agent does not control, where each
 * argument of a privileged call could have come from, and which values are private.
 *
 * - A value has trusted provenance when it is exactly a value a trusted tool field returned (and
 *   of the same kind: an id is not an amount), or a whole token (or run of whole tokens) of
 *   trusted text: the user's own messages and the system prompt, kept apart so a policy can admit
 *   the user alone (see {@link TrustedText} for what a token is).
 * - Booleans, `null`, blank strings and the keys of records have no provenance of their own, so
 *   under taint they are never trusted.
 * - A value is derived from private data when it holds a distinctive token (six letters or more,
 *   or three characters with a digit) of a private result.
 */
export class TaintLedger {
  #untrusted: number;
  /** Trusted tool values: for each value, the facts that vouch for it. */
  readonly #facts = new Map<string, (string | TrustedFact)[]>();
  /** The same facts in the order they arrived, so a checkpoint writes only the new ones. */
  readonly #factList: (string | TrustedFact)[];
  readonly #user = new TrustedText();
  readonly #system = new TrustedText();
  readonly #private = new Set<string>();
  readonly #privateList: string[];
  readonly #counters: Map<string, number>;

  constructor(state?: TaintState) {
    this.#untrusted = state?.untrustedResults ?? 0;
    this.#factList = [];
    for (const fact of state?.trustedValues ?? []) this.#addFact(fact);
    this.#privateList = [];
    for (const token of state?.privateValues ?? []) this.#addPrivate(token);
    this.#counters = new Map(state?.counters ?? []);
  }

  /** Untrusted results seen so far. */
  get untrustedResults(): number {
    return this.#untrusted;
  }

  /** How many trusted values the ledger holds. */
  get trustedValueCount(): number {
    return this.#factList.length;
  }

  /** Trusted values from position `from` on, in arrival order. */
  trustedValuesFrom(from: number): (string | TrustedFact)[] {
    return this.#factList.slice(from);
  }

  /** How many private tokens the ledger holds. */
  get privateValueCount(): number {
    return this.#privateList.length;
  }

  /** Private tokens from position `from` on, in arrival order. */
  privateValuesFrom(from: number): string[] {
    return this.#privateList.slice(from);
  }

  /** True while any untrusted result is in the context. */
  get tainted(): boolean {
    return this.#untrusted > 0;
  }

  /** Text the user (`user`, the default) or the system prompt (`system`) wrote. */
  noteTrustedText(text: string, source: 'user' | 'system' = 'user'): void {
    (source === 'system' ? this.#system : this.#user).note(text);
  }

  /**
   * A result in the context: whether it is untrusted, and the values its trusted fields returned
   * (bare values, or leaves with the path they came from so each is bound to its field's kind),
   * from `tool` when known.
   */
  noteResult(
    untrusted: boolean,
    trustedValues: readonly (unknown | { path: string; value: unknown })[],
    tool?: string,
  ): void {
    if (untrusted) this.#untrusted++;
    // Indexed, not for-of: most results vouch for nothing, and an iterator per result is not free.
    for (let index = 0; index < trustedValues.length; index++) {
      const item = trustedValues[index];
      const leaf =
        item !== null && typeof item === 'object' && 'path' in item
          ? (item as { path: string; value: unknown })
          : { path: '', value: item };
      if (typeof leaf.value !== 'string' && typeof leaf.value !== 'number') continue;
      // Exactly as returned: `Kate` vouches for `Kate`, not `kate`. A blank vouches for nothing.
      const text = String(leaf.value);
      if (text.trim() === '') continue;
      if (tool === undefined) this.#addFact(text);
      else
        this.#addFact({
          value: text,
          kind: kindOf(leaf.value, fieldNameOf(leaf.path)),
          source: `tool:${tool}`,
        });
    }
  }

  /** True once any private result (see `privateOutput`) has been read, whatever it held. */
  get privateRead(): boolean {
    return this.counter('private:results') > 0 || this.#privateList.length > 0;
  }

  /**
   * A private result's values (and keys): arguments that carry them are derived from private
   * data. Every call counts as a private read, even one whose values are too short to watch.
   */
  notePrivate(values: readonly unknown[]): void {
    this.count('private:results');
    for (const value of values) {
      if (typeof value === 'number' && Number.isFinite(value)) {
        if (Math.abs(value) >= 100 || !Number.isInteger(value)) this.#addPrivate(String(value));
        continue;
      }
      if (typeof value !== 'string') continue;
      for (const token of tokensOfPrivate(value.normalize('NFKC'))) this.#addPrivate(token);
    }
  }

  /** True when the value (a string or number argument) carries a distinctive token of private data. */
  derivedFromPrivate(value: unknown): boolean {
    if (this.#private.size === 0) return false;
    if (typeof value === 'number') return this.#private.has(String(value));
    if (typeof value !== 'string') return false;
    for (const token of tokensOfPrivate(value.normalize('NFKC'))) if (this.#private.has(token)) return true;
    return false;
  }

  /** Every trusted source `value` could have come from, in the field named `field`. */
  sourcesOf(value: unknown, field = ''): Set<ValueSource> {
    const sources = new Set<ValueSource>();
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return sources;
      this.#toolSources(String(value), value, field, sources);
      if (this.#user.hasNumber(value)) sources.add('user');
      if (this.#system.hasNumber(value)) sources.add('system');
      return sources;
    }
    if (typeof value !== 'string' || value.trim() === '') return sources;
    this.#toolSources(value, value, field, sources);
    // A word of one or two letters ("a", "me") is in every text; short numbers are not words.
    if (value.length < 3 && !digits.test(value)) return sources;
    if (this.#user.has(value)) sources.add('user');
    if (this.#system.has(value)) sources.add('system');
    return sources;
  }

  /**
   * True when `value` could have come from a trusted source. `undefined` is an absent argument.
   * The same answer as `sourcesOf(value, field).size > 0`, stopping at the first source found
   * (this runs for every sensitive argument of every call under taint).
   */
  isTrusted(value: unknown, field = ''): boolean {
    if (value === undefined) return true;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return false;
      return (
        this.#vouched(String(value), value, field) ||
        this.#user.hasNumber(value) ||
        this.#system.hasNumber(value)
      );
    }
    if (typeof value !== 'string' || value.trim() === '') return false;
    if (this.#vouched(value, value, field)) return true;
    if (value.length < 3 && !digits.test(value)) return false;
    // A value NFKC would change is never the user's words (the tool would get another string).
    // ASCII never changes under NFKC: no normalizing (and no new string) for the common case.
    if (!ascii.test(value) && value.normalize('NFKC') !== value) return false;
    return this.#user.has(value, true) || this.#system.has(value, true);
  }

  /** Whether a trusted tool value of the same kind (or a bare legacy one) vouches for `value`. */
  #vouched(value: string, raw: string | number, field: string): boolean {
    const facts = this.#facts.get(value);
    if (facts === undefined) return false;
    const kind = kindOf(raw, field);
    return facts.some((fact) => typeof fact === 'string' || fact.kind === kind);
  }

  /**
   * Paths of the sensitive arguments whose values have no trusted provenance. `fields` tells the
   * keys that are field names from the keys that are data; by default only the input's own keys
   * are field names. `except` lists paths left unchecked (`nonSensitiveArguments`).
   */
  untrustedArguments(
    input: unknown,
    sensitive: readonly string[] | 'all',
    fields: FieldNames = inputKeysOnly,
    except: readonly string[] = [],
  ): string[] {
    return this.untrustedAmong(argumentsAt(input, fields), sensitive, except);
  }

  /**
   * The same, over leaves already walked ({@link argumentsAt}): the leaf paths for `all`, else
   * each listed pattern that holds an untrusted leaf.
   */
  untrustedAmong(
    leaves: readonly ArgumentLeaf[],
    sensitive: readonly string[] | 'all',
    except: readonly string[] = [],
  ): string[] {
    const untrusted = new Set<string>();
    if (sensitive === 'all') {
      for (const leaf of leaves)
        if (!underAny(leaf, except) && !this.isTrusted(leaf.value, leaf.field)) untrusted.add(leaf.path);
    } else {
      for (const pattern of sensitive)
        if (leavesUnder(leaves, pattern, except).some((leaf) => !this.isTrusted(leaf.value, leaf.field)))
          untrusted.add(pattern);
    }
    return [...untrusted];
  }

  /** A run-wide count (policy caps, plan entries used). */
  counter(key: string): number {
    return this.#counters.get(key) ?? 0;
  }

  /** Adds to a run-wide count. */
  count(key: string, by = 1): void {
    this.#counters.set(key, this.counter(key) + by);
  }

  state(): TaintState {
    const state: TaintState = { untrustedResults: this.#untrusted, trustedValues: [...this.#factList] };
    if (this.#privateList.length > 0) state.privateValues = [...this.#privateList];
    if (this.#counters.size > 0) state.counters = [...this.#counters];
    return state;
  }

  /** The run-wide counts, for a checkpoint (small: one per capped tool and plan entry). */
  counters(): [string, number][] {
    return [...this.#counters];
  }

  #toolSources(value: string, raw: string | number, field: string, sources: Set<ValueSource>): void {
    const facts = this.#facts.get(value);
    if (facts === undefined) return;
    // The kind is read only for a value some tool vouched for: most arguments have no such fact.
    const kind = kindOf(raw, field);
    for (const fact of facts) {
      // A bare value from a state written before kinds existed vouches for any kind.
      if (typeof fact === 'string') sources.add('tool:(unknown)');
      else if (fact.kind === kind) sources.add(fact.source);
    }
  }

  #addFact(fact: string | TrustedFact): void {
    const value = typeof fact === 'string' ? fact : fact.value;
    const known = this.#facts.get(value);
    if (known?.some((other) => sameFact(other, fact))) return;
    if (known) known.push(fact);
    else this.#facts.set(value, [fact]);
    this.#factList.push(fact);
  }

  #addPrivate(token: string): void {
    if (this.#private.has(token)) return;
    this.#private.add(token);
    this.#privateList.push(token);
  }
}

function sameFact(a: string | TrustedFact, b: string | TrustedFact): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.kind === b.kind && a.source === b.source;
}

/** The distinctive tokens of a text, whole (`jane.doe@x.example`) and in parts (`jane`, `doe`). */
function* tokensOfPrivate(text: string): Generator<string> {
  for (const match of text.matchAll(privateToken)) {
    const token = match[0];
    if (distinctive(token)) yield token;
    if (token.length === match[0].length && /[._+@\-:/]/.test(token))
      for (const part of token.split(/[._+@\-:/]/)) if (distinctive(part)) yield part;
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
